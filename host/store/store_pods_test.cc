// Pod admission (priority from PriorityClasses), PriorityClass rules, Bind and
// SetNominatedNodeName.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/store/store.h"
#include "host/store/store_test_util.h"

namespace schedhost::store {
namespace {

using model::PreemptionPolicy;
using testing::Bare;
using testing::ClassData;
using testing::ErrorOf;
using ::testing::HasSubstr;
using testing::NodeData;
using testing::PodData;

struct PriorityCase {
  const char* name;
  bool default_class;                      // create "fallback" (value 5) as globalDefault
  std::string class_name;                  // pod's spec.priorityClassName
  std::optional<int32_t> priority;         // pod's spec.priority
  std::optional<PreemptionPolicy> policy;  // pod's spec.preemptionPolicy
  // Expected outcome: either an error substring, or the resolved fields.
  std::string error;
  int32_t want_priority = 0;
  std::string want_class;
  std::optional<PreemptionPolicy> want_policy;
};

TEST(StoreAdmissionTest, PodPriorityFromItsClass) {
  const auto kNever = PreemptionPolicy::kNever;
  const auto kLower = PreemptionPolicy::kPreemptLowerPriority;
  std::vector<PriorityCase> cases = {
      {"named class", false, "high", {}, {}, "", 1000, "high", kLower},
      {"named class with policy Never", false, "polite", {}, {}, "", 50, "polite", kNever},
      {"explicit priority that matches", false, "high", 1000, {}, "", 1000, "high", kLower},
      {"explicit policy that matches", false, "polite", {}, kNever, "", 50, "polite", kNever},
      {"no class, no default", false, "", {}, {}, "", 0, "", {}},
      {"no class keeps own policy", false, "", {}, kNever, "", 0, "", kNever},
      {"no class, default class", true, "", {}, {}, "", 5, "fallback", kLower},
      {"named class beats default", true, "high", {}, {}, "", 1000, "high", kLower},
      {"system class",
       false,
       "system-node-critical",
       {},
       {},
       "",
       2'000'001'000,
       "system-node-critical",
       kLower},
      {"unknown class", false, "gold", {}, {}, "no PriorityClass with name gold was found"},
      {"priority contradicts class",
       false,
       "high",
       7,
       {},
       "spec.priority 7 contradicts the value 1000 computed from its PriorityClass high"},
      {"priority without any class", false, "", 7, {}, "spec.priority 7 contradicts the value 0"},
      {"priority contradicts default", true, "", 7, {}, "computed from its PriorityClass fallback"},
      {"policy contradicts class",
       false,
       "polite",
       {},
       kLower,
       "spec.preemptionPolicy PreemptLowerPriority contradicts Never"},
  };
  for (const PriorityCase& c : cases) {
    SCOPED_TRACE(c.name);
    Store store;
    store.Create(ClassData("high", 1000));
    model::PriorityClassData polite = ClassData("polite", 50);
    polite.preemption_policy = kNever;
    store.Create(polite);
    if (c.default_class) store.Create(ClassData("fallback", 5, true));
    model::PodData d = PodData("web");
    d.spec.priority_class_name = c.class_name;
    d.spec.priority = c.priority;
    d.spec.preemption_policy = c.policy;
    if (!c.error.empty()) {
      StoreError e = ErrorOf([&] { store.Create(d); });
      EXPECT_EQ(e.code(), ErrorCode::kInvalid);
      EXPECT_THAT(e.what(), HasSubstr("Pod default/web: "));
      EXPECT_THAT(e.what(), HasSubstr(c.error));
      EXPECT_EQ(store.Count(Kind::kPod), 0u);
      continue;
    }
    auto pod = store.Create(d);
    EXPECT_EQ(pod->data().spec.priority, c.want_priority);
    EXPECT_EQ(pod->priority(), c.want_priority);
    EXPECT_EQ(pod->data().spec.priority_class_name, c.want_class);
    EXPECT_EQ(pod->data().spec.preemption_policy, c.want_policy);
  }
}

TEST(StoreAdmissionTest, PriorityClassRules) {
  Store store;
  store.Create(ClassData("default-a", 10, true));
  StoreError second = ErrorOf([&] { store.Create(ClassData("default-b", 20, true)); });
  EXPECT_EQ(second.code(), ErrorCode::kInvalid);
  EXPECT_THAT(second.what(), HasSubstr("PriorityClass default-a is already the default"));

  StoreError too_high = ErrorOf([&] { store.Create(ClassData("huge", 1'000'000'001)); });
  EXPECT_EQ(too_high.code(), ErrorCode::kInvalid);
  EXPECT_THAT(too_high.what(), HasSubstr("maximum allowed value of a user defined priority"));
  EXPECT_NO_THROW(store.Create(ClassData("max", 1'000'000'000)));
  StoreError reserved = ErrorOf([&] { store.Create(ClassData("system-mine", 2'000'000'000)); });
  EXPECT_EQ(reserved.code(), ErrorCode::kInvalid);
  EXPECT_THAT(reserved.what(), HasSubstr("reserved for system use"));

  // The value cannot change; globalDefault can move once the old default lets go.
  model::PriorityClassData a = store.Get<model::PriorityClass>("", "default-a")->data();
  a.value = 11;
  EXPECT_THAT(ErrorOf([&] { store.Update(a); }).what(), HasSubstr("value: field is immutable"));
  a.value = 10;
  a.global_default = false;
  a.metadata.resource_version = 0;
  store.Update(a);
  model::PriorityClassData b = ClassData("default-b", 20, true);
  EXPECT_NO_THROW(store.Create(b));
  b.description = "still the default";
  EXPECT_NO_THROW(store.Update(b));  // re-stating its own globalDefault is fine
}

TEST(StoreAdmissionTest, PodUpdateKeepsBindingAndPriority) {
  Store store;
  store.Create(ClassData("high", 1000));
  model::PodData d = PodData("web");
  d.spec.priority_class_name = "high";
  auto created = store.Create(d);

  model::PodData relabel = PodData("web");  // a client that sends no priority fields
  relabel.metadata.labels = {{"app", "web"}};
  auto updated = store.Update(relabel);
  EXPECT_EQ(updated->priority(), 1000);
  EXPECT_EQ(updated->data().spec.priority_class_name, "high");
  EXPECT_EQ(updated->uid(), created->uid());

  model::PodData change = PodData("web");
  change.spec.priority = 5;
  EXPECT_THAT(ErrorOf([&] { store.Update(change); }).what(),
              HasSubstr("spec.priority: field is immutable"));
  model::PodData bind = PodData("web");
  bind.spec.node_name = "n1";
  EXPECT_THAT(ErrorOf([&] { store.Update(bind); }).what(), HasSubstr("use Bind"));

  store.Bind("default", "web", "", 0, "n1");
  EXPECT_EQ(store.Update(relabel)->node_name(), "n1");  // empty nodeName keeps the binding
  bind.spec.node_name = "n2";
  EXPECT_THAT(ErrorOf([&] { store.Update(bind); }).what(),
              HasSubstr("spec.nodeName: field is immutable"));
}

// As kube-apiserver's pod create: a pod (anti-)affinity term's matchLabelKeys become `key in
// (the pod's value)` and mismatchLabelKeys `key notin (value)` in its selector; keys the pod
// has no label for add nothing.
TEST(StoreAdmissionTest, LabelKeysAreMergedIntoAffinitySelectorsOnCreate) {
  Store store;
  model::PodData d = PodData("web");
  d.metadata.labels = {{"app", "web"}, {"track", "canary"}};
  model::PodAffinityTerm required;
  required.label_selector = model::LabelSelector{};
  required.label_selector->match_labels = {{"app", "web"}};
  required.topology_key = "kubernetes.io/hostname";
  required.match_label_keys = {"track", "missing"};
  model::WeightedPodAffinityTerm preferred{10, required};
  preferred.pod_affinity_term.match_label_keys.clear();
  preferred.pod_affinity_term.mismatch_label_keys = {"track"};
  d.spec.affinity = model::Affinity{};
  d.spec.affinity->pod_affinity = model::PodAffinity{{required}, {}};
  d.spec.affinity->pod_anti_affinity = model::PodAffinity{{}, {preferred}};
  const model::PodData original = d;

  auto created = store.Create(d);
  const model::Affinity& a = *created->data().spec.affinity;
  using Req = model::SelectorRequirement;
  EXPECT_THAT(a.pod_affinity->required[0].label_selector->match_expressions,
              ::testing::ElementsAre(Req{"track", model::SelectorOp::kIn, {"canary"}}));
  EXPECT_THAT(a.pod_anti_affinity->preferred[0].pod_affinity_term.label_selector->match_expressions,
              ::testing::ElementsAre(Req{"track", model::SelectorOp::kNotIn, {"canary"}}));

  // Re-applying the same manifest keeps what the create merged, once.
  auto again = store.Update(original);
  EXPECT_EQ(again->data().spec.affinity, created->data().spec.affinity);
}

TEST(StoreBindTest, BindsOnceAndClearsTheNomination) {
  Store store(Bare());
  auto pod = store.Create(PodData("web"));
  pod = store.SetNominatedNodeName("default", "web", pod->uid(), "n2");
  EXPECT_EQ(pod->data().status.nominated_node_name, "n2");
  const uint64_t rv = pod->resource_version();

  auto bound = store.Bind("default", "web", pod->uid(), rv, "n1");
  EXPECT_EQ(bound->node_name(), "n1");
  EXPECT_EQ(bound->data().status.nominated_node_name, "");
  EXPECT_EQ(bound->resource_version(), rv + 1);
  EXPECT_EQ(store.Get<model::Pod>("default", "web"), bound);
}

TEST(StoreBindTest, RefusesGoneBoundAndChangedPods) {
  Store store(Bare());
  auto pod = store.Create(PodData("web"));
  const std::string uid(pod->uid());
  const uint64_t rv = pod->resource_version();
  struct Case {
    const char* name;
    std::function<void()> setup;
    std::string uid;
    uint64_t rv;
    ErrorCode code;
    std::string message;
  };
  std::vector<Case> cases = {
      {"changed since read", [&] { store.SetNominatedNodeName("default", "web", "", "n9"); }, uid,
       rv, ErrorCode::kConflict, "changed since it was read"},
      {"other uid", [] {}, "someone-else", 0, ErrorCode::kConflict, "the pod was re-created"},
      {"already bound", [&] { store.Bind("default", "web", uid, 0, "n1"); }, uid, 0,
       ErrorCode::kConflict, "already bound to node n1"},
      {"gone", [&] { store.Delete<model::Pod>("default", "web"); }, uid, 0, ErrorCode::kNotFound,
       "Pod default/web not found"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    c.setup();
    const uint64_t before = store.resource_version();
    StoreError e = ErrorOf([&] { store.Bind("default", "web", c.uid, c.rv, "n2"); });
    EXPECT_EQ(e.code(), c.code);
    EXPECT_THAT(e.what(), HasSubstr(c.message));
    EXPECT_EQ(store.resource_version(), before);
  }
  store.Create(PodData("other"));
  EXPECT_EQ(ErrorOf([&] { store.Bind("default", "other", "", 0, ""); }).code(),
            ErrorCode::kInvalid);
  EXPECT_EQ(ErrorOf([&] { store.Bind("default", "other", "", 0, "No Such!"); }).code(),
            ErrorCode::kInvalid);
}

TEST(StoreBindTest, NominationIsAStatusUpdate) {
  Store store(Bare());
  auto pod = store.Create(PodData("web"));
  EXPECT_EQ(ErrorOf([&] { store.SetNominatedNodeName("default", "web", "x", "n1"); }).code(),
            ErrorCode::kConflict);
  EXPECT_EQ(ErrorOf([&] { store.SetNominatedNodeName("default", "nope", "", "n1"); }).code(),
            ErrorCode::kNotFound);
  auto nominated = store.SetNominatedNodeName("default", "web", pod->uid(), "n1");
  const uint64_t rv = store.resource_version();
  EXPECT_EQ(store.SetNominatedNodeName("default", "web", "", "n1"), nominated);  // unchanged
  EXPECT_EQ(store.resource_version(), rv);
  auto cleared = store.SetNominatedNodeName("default", "web", "", "");
  EXPECT_EQ(cleared->data().status.nominated_node_name, "");
  EXPECT_EQ(store.resource_version(), rv + 1);
}

}  // namespace
}  // namespace schedhost::store
