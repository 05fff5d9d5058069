// InterPodAffinity through the real framework over a real snapshot. Cases are written from
// upstream's interpodaffinity behaviour: required affinity (every term's domain must hold a
// pod matching all terms; missing topology key and mismatch are UnschedulableAndUnresolvable),
// required anti-affinity in both directions (Unschedulable), the first pod of a group,
// namespaces and namespaceSelector, AddPod/RemovePod, preferred weights with min/max
// normalisation and hard_pod_affinity_weight.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/framework/cycle_state.h"
#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;
using ::testing::HasSubstr;

constexpr char kName[] = "InterPodAffinity";
constexpr char kAffinity[] = "node(s) didn't match pod affinity rules";
constexpr char kAnti[] = "node(s) didn't match pod anti-affinity rules";
constexpr char kExisting[] = "node(s) didn't satisfy existing pods anti-affinity rules";

std::string ReadmeToml() {
  const char* src = std::getenv("SCHEDHOST_SOURCE_DIR");
  if (src == nullptr)
    throw std::runtime_error("SCHEDHOST_SOURCE_DIR is not set (run through ctest)");
  std::ifstream in(std::string(src) + "/plugins/builtin/inter_pod_affinity/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const size_t begin = readme.find("```toml\n");
  if (begin == std::string::npos) throw std::runtime_error("README.md has no toml example");
  const size_t end = readme.find("```", begin + 8);
  return readme.substr(begin + 8, end - begin - 8);
}

std::string NodeYaml(const std::string& name, const std::string& zone) {
  std::string labels = "{kubernetes.io/hostname: " + name;
  if (!zone.empty()) labels += ", zone: " + zone;
  labels += "}";
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: " + labels +
         "}\nstatus: {allocatable: {cpu: \"4\", memory: 4Gi, pods: \"20\"}}\n---\n";
}

// Four nodes: n1 and n2 in zone a, n3 in zone b, n4 without a zone label.
std::string FourNodes() {
  return NodeYaml("n1", "a") + NodeYaml("n2", "a") + NodeYaml("n3", "b") + NodeYaml("n4", "");
}

// PodYaml renders a pod: `ns` "" is default, `node` "" leaves it pending, `affinity` is the
// body under spec.affinity (already indented by four spaces).
std::string PodYaml(const std::string& name, const std::string& labels, const std::string& node,
                    const std::string& affinity = "", const std::string& ns = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                  (ns.empty() ? "" : ", namespace: " + ns) + ", labels: " + labels + "}\nspec:\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  if (!affinity.empty()) y += "  affinity:\n" + affinity;
  return y + "  containers:\n  - {name: c, image: busybox}\n---\n";
}

std::string NamespaceYaml(const std::string& name, const std::string& labels) {
  return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + ", labels: " + labels +
         "}\n---\n";
}

// Term renders one pod affinity term (flow style); `extra` adds fields such as namespaces.
std::string Term(const std::string& selector, const std::string& key,
                 const std::string& extra = "") {
  return "{labelSelector: " + selector + ", topologyKey: " + key +
         (extra.empty() ? "" : ", " + extra) + "}";
}
std::string Weighted(int weight, const std::string& term) {
  return "{weight: " + std::to_string(weight) + ", podAffinityTerm: " + term + "}";
}
// Block renders podAffinity / podAntiAffinity with required and preferred term lists.
std::string Block(const std::string& kind, const std::string& required,
                  const std::string& preferred = "") {
  std::string y = "    " + kind + ":\n";
  if (!required.empty())
    y += "      requiredDuringSchedulingIgnoredDuringExecution: " + required + "\n";
  if (!preferred.empty())
    y += "      preferredDuringSchedulingIgnoredDuringExecution: " + preferred + "\n";
  return y;
}
std::string Aff(const std::string& req, const std::string& pref = "") {
  return Block("podAffinity", req, pref);
}
std::string Anti(const std::string& req, const std::string& pref = "") {
  return Block("podAntiAffinity", req, pref);
}

constexpr char kWeb[] = "{matchLabels: {app: web}}";
constexpr char kDb[] = "{matchLabels: {app: db}}";

using Verdicts = std::map<std::string, std::string>;

// RunFilter returns each node's verdict ("" passes) and checks upstream's code per reason.
Verdicts RunFilter(Harness& h, const std::string& pod) {
  Verdicts out;
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    if (r.status.ok()) {
      out[r.node] = "";
      continue;
    }
    const std::string msg = r.status.Message();
    const Code want = msg == kAffinity ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable;
    EXPECT_EQ(r.status.code, want) << r.node << ": " << msg;
    out[r.node] = msg;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Filter
// ---------------------------------------------------------------------------------------------

struct FilterCase {
  std::string name;
  std::string existing;  // manifests of bound pods (and Namespaces)
  std::string pod;       // the incoming pod
  Verdicts want;

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class InterPodAffinityFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(InterPodAffinityFilterTest, EnforcesRequiredTerms) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(FourNodes() + c.existing);
  EXPECT_EQ(RunFilter(h, c.pod), c.want);
}

const Verdicts kAll = {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", ""}};
const Verdicts kZoneA = {{"n1", ""}, {"n2", ""}, {"n3", kAffinity}, {"n4", kAffinity}};
const Verdicts kNoAffinity = {
    {"n1", kAffinity}, {"n2", kAffinity}, {"n3", kAffinity}, {"n4", kAffinity}};
const Verdicts kHasZone = {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", kAffinity}};

INSTANTIATE_TEST_SUITE_P(
    Cases, InterPodAffinityFilterTest,
    ::testing::Values(
        FilterCase{"NoTerms", PodYaml("web", "{app: web}", "n1"), PodYaml("p", "{}", ""), kAll},
        // upstream: all domains of the term must hold a matching pod; a node without the
        // topology key fails with the same UnschedulableAndUnresolvable reason.
        FilterCase{"AffinityToZoneOfMatchingPod", PodYaml("web", "{app: web}", "n1"),
                   PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "zone") + "]")), kZoneA},
        FilterCase{"AffinityByHostname",
                   PodYaml("web", "{app: web}", "n3"),
                   PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "kubernetes.io/hostname") + "]")),
                   {{"n1", kAffinity}, {"n2", kAffinity}, {"n3", ""}, {"n4", kAffinity}}},
        FilterCase{"AffinityWithoutMatchingPod", PodYaml("db", "{app: db}", "n1"),
                   PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "zone") + "]")), kNoAffinity},
        // upstream: the first pod of a group that matches its own terms may go to any node
        // that has the topology keys when no pod in the cluster matches.
        FilterCase{"FirstPodOfAGroup", PodYaml("db", "{app: db}", "n1"),
                   PodYaml("p", "{app: web}", "", Aff("[" + Term(kWeb, "zone") + "]")), kHasZone},
        FilterCase{"NotFirstOnceAPodMatches",
                   PodYaml("web", "{app: web}", "n3"),
                   PodYaml("p", "{app: web}", "", Aff("[" + Term(kWeb, "zone") + "]")),
                   {{"n1", kAffinity}, {"n2", kAffinity}, {"n3", ""}, {"n4", kAffinity}}},
        // upstream: one existing pod must match every term for the terms to count.
        FilterCase{"AllTermsMustMatchOnePod",
                   PodYaml("web", "{app: web}", "n1") + PodYaml("front", "{tier: front}", "n1"),
                   PodYaml("p", "{}", "",
                           Aff("[" + Term(kWeb, "zone") + ", " +
                               Term("{matchLabels: {tier: front}}", "zone") + "]")),
                   kNoAffinity},
        FilterCase{
            "AllTermsMatchedByOnePod",
            PodYaml("web", "{app: web, tier: front}", "n1"),
            PodYaml("p", "{}", "",
                    Aff("[" + Term(kWeb, "zone") + ", " +
                        Term("{matchLabels: {tier: front}}", "kubernetes.io/hostname") + "]")),
            {{"n1", ""}, {"n2", kAffinity}, {"n3", kAffinity}, {"n4", kAffinity}}},
        FilterCase{"AbsentLabelSelectorMatchesNothing", PodYaml("web", "{app: web}", "n1"),
                   PodYaml("p", "{}", "", Aff("[{topologyKey: zone}]")), kNoAffinity},
        FilterCase{"AntiAffinityByHostname",
                   PodYaml("web", "{app: web}", "n1"),
                   PodYaml("p", "{}", "", Anti("[" + Term(kWeb, "kubernetes.io/hostname") + "]")),
                   {{"n1", kAnti}, {"n2", ""}, {"n3", ""}, {"n4", ""}}},
        // upstream: a node without the anti-affinity topology key has no conflicting domain.
        FilterCase{"AntiAffinityByZone",
                   PodYaml("web", "{app: web}", "n1"),
                   PodYaml("p", "{}", "", Anti("[" + Term(kWeb, "zone") + "]")),
                   {{"n1", kAnti}, {"n2", kAnti}, {"n3", ""}, {"n4", ""}}},
        FilterCase{"AntiAffinityToItsOwnLabelsIsNoConflictAlone", "",
                   PodYaml("p", "{app: web}", "", Anti("[" + Term(kWeb, "zone") + "]")), kAll},
        FilterCase{"ExistingPodsAntiAffinity",
                   PodYaml("guard", "{app: guard}", "n3", Anti("[" + Term(kDb, "zone") + "]")),
                   PodYaml("p", "{app: db}", ""),
                   {{"n1", ""}, {"n2", ""}, {"n3", kExisting}, {"n4", ""}}},
        FilterCase{"ExistingPodsAntiAffinityByZone",
                   PodYaml("guard", "{app: guard}", "n1", Anti("[" + Term(kDb, "zone") + "]")),
                   PodYaml("p", "{app: db}", ""),
                   {{"n1", kExisting}, {"n2", kExisting}, {"n3", ""}, {"n4", ""}}},
        FilterCase{"ExistingAntiAffinityNotMatchingThePod",
                   PodYaml("guard", "{app: guard}", "n1", Anti("[" + Term(kDb, "zone") + "]")),
                   PodYaml("p", "{app: web}", ""), kAll},
        // An existing term without namespaces applies to its own pod's namespace only.
        FilterCase{
            "ExistingAntiAffinityInAnotherNamespace",
            PodYaml("guard", "{app: guard}", "n1", Anti("[" + Term(kDb, "zone") + "]"), "other"),
            PodYaml("p", "{app: db}", ""), kAll},
        FilterCase{"AffinityFailsBeforeAntiAffinity",
                   PodYaml("web", "{app: web}", "n1") + PodYaml("db", "{app: db}", "n3"),
                   PodYaml("p", "{}", "",
                           Aff("[" + Term(kWeb, "zone") + "]") +
                               Anti("[" + Term(kDb, "kubernetes.io/hostname") + "]")),
                   kZoneA},
        FilterCase{"AffinityAndAntiAffinityTogether",
                   PodYaml("web", "{app: web}", "n1") + PodYaml("db", "{app: db}", "n2"),
                   PodYaml("p", "{}", "",
                           Aff("[" + Term(kWeb, "zone") + "]") +
                               Anti("[" + Term(kDb, "kubernetes.io/hostname") + "]")),
                   {{"n1", ""}, {"n2", kAnti}, {"n3", kAffinity}, {"n4", kAffinity}}},
        // Namespaces: the pod's own by default, the listed ones otherwise.
        FilterCase{"AffinityIgnoresOtherNamespacesByDefault",
                   PodYaml("web", "{app: web}", "n1", "", "other"),
                   PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "zone") + "]")), kNoAffinity},
        FilterCase{
            "AffinityToListedNamespace", PodYaml("web", "{app: web}", "n1", "", "other"),
            PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "zone", "namespaces: [other]") + "]")),
            kZoneA},
        FilterCase{
            "ListedNamespacesExcludeTheOwn", PodYaml("web", "{app: web}", "n1"),
            PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "zone", "namespaces: [other]") + "]")),
            kNoAffinity},
        // upstream: an empty namespaceSelector selects every namespace.
        FilterCase{
            "EmptyNamespaceSelectorSelectsAll", PodYaml("web", "{app: web}", "n1", "", "other"),
            PodYaml("p", "{}", "", Aff("[" + Term(kWeb, "zone", "namespaceSelector: {}") + "]")),
            kZoneA},
        // Non-empty namespaceSelectors match Namespace objects' labels.
        FilterCase{
            "NamespaceSelectorByLabel",
            NamespaceYaml("team-x", "{team: x}") + PodYaml("web", "{app: web}", "n1", "", "team-x"),
            PodYaml("p", "{}", "",
                    Aff("[" + Term(kWeb, "zone", "namespaceSelector: {matchLabels: {team: x}}") +
                        "]")),
            kZoneA},
        FilterCase{"NamespaceSelectorByNameLabel",
                   NamespaceYaml("team-x", "{}") + PodYaml("web", "{app: web}", "n1", "", "team-x"),
                   PodYaml("p", "{}", "",
                           Aff("[" +
                               Term(kWeb, "zone",
                                    "namespaceSelector: {matchLabels: "
                                    "{kubernetes.io/metadata.name: team-x}}") +
                               "]")),
                   kZoneA},
        FilterCase{
            "NamespaceSelectorNotMatching",
            NamespaceYaml("team-y", "{team: y}") + PodYaml("web", "{app: web}", "n1", "", "team-y"),
            PodYaml("p", "{}", "",
                    Aff("[" + Term(kWeb, "zone", "namespaceSelector: {matchLabels: {team: x}}") +
                        "]")),
            kNoAffinity},
        // upstream: the incoming pod's selector resolves to existing Namespace objects only.
        FilterCase{"IncomingSelectorSkipsNamespacesWithoutObject",
                   PodYaml("web", "{app: web}", "n1", "", "ghost"),
                   PodYaml("p", "{}", "",
                           Aff("[" +
                               Term(kWeb, "zone",
                                    "namespaceSelector: {matchExpressions: [{key: team, "
                                    "operator: DoesNotExist}]}") +
                               "]")),
                   kNoAffinity},
        FilterCase{"NamespacesAndSelectorAreUnited",
                   NamespaceYaml("team-x", "{team: x}") +
                       PodYaml("web1", "{app: web}", "n1", "", "team-x") +
                       PodYaml("web2", "{app: web}", "n3", "", "listed"),
                   PodYaml("p", "{}", "",
                           Anti("[" +
                                Term(kWeb, "kubernetes.io/hostname",
                                     "namespaces: [listed], namespaceSelector: "
                                     "{matchLabels: {team: x}}") +
                                "]")),
                   {{"n1", kAnti}, {"n2", ""}, {"n3", kAnti}, {"n4", ""}}},
        FilterCase{
            "ExistingAntiAffinitySelectsPodsNamespace",
            NamespaceYaml("team-x", "{team: x}") +
                PodYaml("guard", "{app: guard}", "n3",
                        Anti("[" +
                             Term(kDb, "zone", "namespaceSelector: {matchLabels: {team: x}}") +
                             "]"),
                        "sec"),
            PodYaml("p", "{app: db}", "", "", "team-x"),
            {{"n1", ""}, {"n2", ""}, {"n3", kExisting}, {"n4", ""}}},
        // upstream: an existing pod's selector sees a namespace without object as unlabelled.
        FilterCase{"ExistingSelectorSeesMissingNamespaceAsUnlabelled",
                   PodYaml("guard", "{app: guard}", "n3",
                           Anti("[" +
                                Term(kDb, "zone",
                                     "namespaceSelector: {matchExpressions: [{key: team, "
                                     "operator: DoesNotExist}]}") +
                                "]"),
                           "sec"),
                   PodYaml("p", "{app: db}", "", "", "ghost"),
                   {{"n1", ""}, {"n2", ""}, {"n3", kExisting}, {"n4", ""}}},
        FilterCase{
            "AntiAffinityEmptyNamespaceSelector",
            PodYaml("web", "{app: web}", "n3", "", "other"),
            PodYaml("p", "{}", "", Anti("[" + Term(kWeb, "zone", "namespaceSelector: {}") + "]")),
            {{"n1", ""}, {"n2", ""}, {"n3", kAnti}, {"n4", ""}}}),
    [](const auto& info) { return info.param.name; });

TEST(InterPodAffinityFilter, ScheduleFailureMessage) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("n1", "a") + NodeYaml("n2", "b") + PodYaml("web1", "{app: web}", "n1") +
               PodYaml("web2", "{app: web}", "n2"));
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("p", "{}", "", Anti("[" + Term(kWeb, "zone") + "]"))),
                       &failure),
            "");
  EXPECT_EQ(failure, "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.");
}

// ---------------------------------------------------------------------------------------------
// AddPod / RemovePod on a cloned state (nominated pods, preemption)
// ---------------------------------------------------------------------------------------------

const schedhost_node_info_view* NodeInfo(Harness& h, const std::string& name) {
  const cache::NodeInfo* ni = h.snapshot().Get(name);
  if (ni == nullptr) throw std::runtime_error("no node " + name);
  return ni->view();
}

const schedhost_pod_view* BoundPod(Harness& h, const std::string& node, const std::string& name) {
  const schedhost_node_info_view* ni = NodeInfo(h, node);
  for (size_t i = 0; i < ni->pods_len; ++i) {
    if (std::string(ni->pods[i]->name.data, ni->pods[i]->name.len) == name) return ni->pods[i];
  }
  throw std::runtime_error("no pod " + name + " on " + node);
}

// Verdict runs Filter on `node` with `state`.
std::string Verdict(Harness& h, const framework::CycleState& state, const schedhost_pod_view* pod,
                    const std::string& node) {
  const framework::Status s = h.framework().RunFilterPlugins(state, pod, NodeInfo(h, node));
  return s.ok() ? "" : s.Message();
}

// PreFilter keeps its counts across cycles per kind of incoming pod (one plugin instance, one
// snapshot here, so nothing is recounted): pods that differ in what the counts depend on (their
// labels, namespace or terms) must not share them.
TEST(InterPodAffinityCountCache, PodsOfAnotherKindAreCountedApart) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(FourNodes() + NamespaceYaml("other", "{team: x}") +
               PodYaml("x", "{app: web}", "n1", Anti("[" + Term(kDb, "zone") + "]")) +
               PodYaml("y", "{app: db}", "n3", "", "other"));
  const std::string terms = Anti("[" + Term(kWeb, "kubernetes.io/hostname") + "]");
  const Verdicts db = RunFilter(h, PodYaml("p", "{app: db}", "", terms));
  EXPECT_EQ(db, (Verdicts{{"n1", kAnti}, {"n2", kExisting}, {"n3", ""}, {"n4", ""}}));
  const Verdicts plain = RunFilter(h, PodYaml("q", "{app: other}", "", terms));
  EXPECT_EQ(plain, (Verdicts{{"n1", kAnti}, {"n2", ""}, {"n3", ""}, {"n4", ""}}));
  // The same labels in another namespace (without a Namespace object, so with the same
  // namespace labels as default): x's term covers only its own namespace, and r's selects no
  // web pod in its own.
  EXPECT_EQ(RunFilter(h, PodYaml("r", "{app: db}", "", terms, "third")),
            (Verdicts{{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", ""}}));
  // Other terms: repelling db pods by zone rules out zone b (y's) and nothing else.
  EXPECT_EQ(
      RunFilter(h, PodYaml("s", "{app: other}", "", Anti("[" + Term(kDb, "zone") + "]"), "other")),
      (Verdicts{{"n1", ""}, {"n2", ""}, {"n3", kAnti}, {"n4", ""}}));
  // And the first kind again, from its cache: unchanged.
  EXPECT_EQ(RunFilter(h, PodYaml("p2", "{app: db}", "", terms)), db);
  // The cache shares its counts with the cycle state: AddPod changes that state only, not the
  // counts the next pod of the kind gets.
  auto p3 = h.MakePod(PodYaml("p3", "{app: db}", "", terms));
  auto web = h.MakePod(PodYaml("w", "{app: web}", "n3"));
  framework::CycleState state;
  ASSERT_TRUE(h.framework().RunPreFilterPlugins(state, p3->view()).second.ok());
  EXPECT_EQ(Verdict(h, state, p3->view(), "n3"), "");
  ASSERT_TRUE(h.framework()
                  .RunPreFilterExtensionAddPod(state, p3->view(), web->view(), NodeInfo(h, "n3"))
                  .ok());
  EXPECT_EQ(Verdict(h, state, p3->view(), "n3"), kAnti);
  EXPECT_EQ(RunFilter(h, PodYaml("p4", "{app: db}", "", terms)), db);
}

TEST(InterPodAffinityExtensions, AddPodCountsTheIncomingPodsTerms) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(FourNodes());
  auto pod = h.MakePod(PodYaml("p", "{app: db}", "", Anti("[" + Term(kWeb, "zone") + "]")));
  auto web = h.MakePod(PodYaml("web", "{app: web}", "n1"));
  framework::CycleState state;
  ASSERT_TRUE(h.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  auto clone = state.Clone();
  ASSERT_TRUE(h.framework()
                  .RunPreFilterExtensionAddPod(*clone, pod->view(), web->view(), NodeInfo(h, "n1"))
                  .ok());
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n2"), kAnti);
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n3"), "");
  EXPECT_EQ(Verdict(h, state, pod->view(), "n2"), "") << "the original state must not change";
  ASSERT_TRUE(
      h.framework()
          .RunPreFilterExtensionRemovePod(*clone, pod->view(), web->view(), NodeInfo(h, "n1"))
          .ok());
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n2"), "");
}

TEST(InterPodAffinityExtensions, AddPodCountsAnAddedPodsAntiAffinity) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(FourNodes() + PodYaml("web", "{app: web}", "n1"));
  // The incoming pod needs a term of its own, or PreFilter skips (nothing to count).
  auto pod = h.MakePod(PodYaml("p", "{app: db}", "", Aff("[" + Term(kWeb, "zone") + "]")));
  auto guard = h.MakePod(PodYaml("guard", "{app: guard}", "n2",
                                 Anti("[" + Term(kDb, "kubernetes.io/hostname") + "]")));
  framework::CycleState state;
  ASSERT_TRUE(h.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  auto clone = state.Clone();
  ASSERT_TRUE(
      h.framework()
          .RunPreFilterExtensionAddPod(*clone, pod->view(), guard->view(), NodeInfo(h, "n2"))
          .ok());
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n1"), "");
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n2"), kExisting);
}

// Filter looks up only the node labels whose key an existing pod's term uses: removing the last
// pod of a key (here the zone one) must stop that key being looked at, the other still counting.
TEST(InterPodAffinityExtensions, RemovePodLiftsAnExistingPodsAntiAffinityKeyByKey) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(FourNodes() +
               PodYaml("zone-guard", "{app: guard}", "n1", Anti("[" + Term(kDb, "zone") + "]")) +
               PodYaml("host-guard", "{app: guard}", "n3",
                       Anti("[" + Term(kDb, "kubernetes.io/hostname") + "]")));
  auto pod = h.MakePod(PodYaml("p", "{app: db}", ""));
  framework::CycleState state;
  ASSERT_TRUE(h.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  // n1 and n2 share zone-a (FourNodes), so both are out; n3 by hostname.
  EXPECT_EQ(Verdict(h, state, pod->view(), "n1"), kExisting);
  EXPECT_EQ(Verdict(h, state, pod->view(), "n2"), kExisting);
  EXPECT_EQ(Verdict(h, state, pod->view(), "n3"), kExisting);
  EXPECT_EQ(Verdict(h, state, pod->view(), "n4"), "");
  auto clone = state.Clone();
  ASSERT_TRUE(h.framework()
                  .RunPreFilterExtensionRemovePod(
                      *clone, pod->view(), BoundPod(h, "n1", "zone-guard"), NodeInfo(h, "n1"))
                  .ok());
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n1"), "");
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n2"), "");
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n3"), kExisting);
}

TEST(InterPodAffinityExtensions, RemovePodLiftsAffinityAndAntiAffinity) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(FourNodes() + PodYaml("web", "{app: web}", "n1") + PodYaml("db", "{app: db}", "n3"));
  auto pod = h.MakePod(PodYaml(
      "p", "{}", "",
      Aff("[" + Term(kWeb, "zone") + "]") + Anti("[" + Term(kDb, "kubernetes.io/hostname") + "]")));
  framework::CycleState state;
  ASSERT_TRUE(h.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  EXPECT_EQ(Verdict(h, state, pod->view(), "n2"), "");
  auto clone = state.Clone();
  ASSERT_TRUE(h.framework()
                  .RunPreFilterExtensionRemovePod(*clone, pod->view(), BoundPod(h, "n1", "web"),
                                                  NodeInfo(h, "n1"))
                  .ok());
  // No web pod left: the pod does not match its own terms, so nothing passes affinity.
  EXPECT_EQ(Verdict(h, *clone, pod->view(), "n2"), kAffinity);
  EXPECT_EQ(Verdict(h, state, pod->view(), "n2"), "");
}

// ---------------------------------------------------------------------------------------------
// Score
// ---------------------------------------------------------------------------------------------

struct ScoreCase {
  std::string name;
  std::string existing;
  std::string pod;
  std::string args;
  std::map<std::string, int64_t> raw;
  std::map<std::string, int64_t> normalized;

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class InterPodAffinityScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(InterPodAffinityScoreTest, SumsWeightsPerDomainAndNormalizes) {
  const ScoreCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName},
                c.args.empty() ? "" : "[profile.plugin_config.InterPodAffinity]\n" + c.args + "\n");
  h.AddObjects(FourNodes() + c.existing);
  auto pod = h.MakePod(c.pod);
  std::vector<framework::testing::ScoredNode> scores;
  ASSERT_TRUE(h.RunScoreDetailed(*pod, scores).ok());
  const auto names = h.framework().ScorePluginNames();
  const size_t col = std::find(names.begin(), names.end(), kName) - names.begin();
  ASSERT_LT(col, names.size());
  std::map<std::string, int64_t> raw, normalized;
  for (const auto& s : scores) {
    std::string node(s.node_info->node->name.data, s.node_info->node->name.len);
    raw[node] = s.raw[col];
    normalized[node] = s.weighted[col];  // OnlyPlugins enables it with weight 1
  }
  EXPECT_EQ(raw, c.raw);
  EXPECT_EQ(normalized, c.normalized);
}

using Scores = std::map<std::string, int64_t>;
const Scores kZeros = {{"n1", 0}, {"n2", 0}, {"n3", 0}, {"n4", 0}};

INSTANTIATE_TEST_SUITE_P(
    Cases, InterPodAffinityScoreTest,
    ::testing::Values(
        ScoreCase{"NoTermsSkips", PodYaml("web", "{app: web}", "n1"), PodYaml("p", "{}", ""), "",
                  kZeros, kZeros},
        // Every node of the matched pod's zone gets the weight.
        ScoreCase{"PreferredAffinity",
                  PodYaml("web", "{app: web}", "n1"),
                  PodYaml("p", "{}", "", Aff("", "[" + Weighted(10, Term(kWeb, "zone")) + "]")),
                  "",
                  {{"n1", 10}, {"n2", 10}, {"n3", 0}, {"n4", 0}},
                  {{"n1", 100}, {"n2", 100}, {"n3", 0}, {"n4", 0}}},
        // min -5, max 3: (0 + 5) * 100 / 8 = 62.5 truncates to 62.
        ScoreCase{"PreferredAntiAffinityGoesNegative",
                  PodYaml("web", "{app: web}", "n1") + PodYaml("db", "{app: db}", "n3"),
                  PodYaml("p", "{}", "",
                          Aff("", "[" + Weighted(3, Term(kDb, "zone")) + "]") +
                              Anti("", "[" + Weighted(5, Term(kWeb, "zone")) + "]")),
                  "",
                  {{"n1", -5}, {"n2", -5}, {"n3", 3}, {"n4", 0}},
                  {{"n1", 0}, {"n2", 0}, {"n3", 100}, {"n4", 62}}},
        ScoreCase{"WeightsOfSeveralPodsAdd",
                  PodYaml("web1", "{app: web}", "n1") + PodYaml("web2", "{app: web}", "n3") +
                      PodYaml("web3", "{app: web}", "n3"),
                  PodYaml("p", "{}", "", Aff("", "[" + Weighted(2, Term(kWeb, "zone")) + "]")),
                  "",
                  {{"n1", 2}, {"n2", 2}, {"n3", 4}, {"n4", 0}},
                  {{"n1", 50}, {"n2", 50}, {"n3", 100}, {"n4", 0}}},
        // Existing pods' required affinity terms matching the pod count hard_pod_affinity_weight.
        ScoreCase{"HardWeightDefault",
                  PodYaml("fan", "{app: fan}", "n3", Aff("[" + Term(kWeb, "zone") + "]")),
                  PodYaml("p", "{app: web}", ""),
                  "",
                  {{"n1", 0}, {"n2", 0}, {"n3", 1}, {"n4", 0}},
                  {{"n1", 0}, {"n2", 0}, {"n3", 100}, {"n4", 0}}},
        ScoreCase{"HardWeightSeven",
                  PodYaml("fan", "{app: fan}", "n3", Aff("[" + Term(kWeb, "zone") + "]")) +
                      PodYaml("db", "{app: db}", "n1"),
                  PodYaml("p", "{app: web}", "",
                          Aff("", "[" + Weighted(4, Term(kDb, "kubernetes.io/hostname")) + "]")),
                  "hard_pod_affinity_weight = 7",
                  {{"n1", 4}, {"n2", 0}, {"n3", 7}, {"n4", 0}},
                  {{"n1", 57}, {"n2", 0}, {"n3", 100}, {"n4", 0}}},
        ScoreCase{"HardWeightZeroIgnoresRequiredTerms",
                  PodYaml("fan", "{app: fan}", "n3", Aff("[" + Term(kWeb, "zone") + "]")),
                  PodYaml("p", "{app: web}", ""), "hard_pod_affinity_weight = 0", kZeros, kZeros},
        // Existing pods' preferred terms matching the pod, both signs.
        ScoreCase{"ExistingPreferredTerms",
                  PodYaml("a", "{app: a}", "n1",
                          Anti("", "[" + Weighted(4, Term(kWeb, "kubernetes.io/hostname")) + "]")) +
                      PodYaml("b", "{app: b}", "n3",
                              Aff("", "[" + Weighted(6, Term(kWeb, "zone")) + "]")),
                  PodYaml("p", "{app: web}", ""),
                  "",
                  {{"n1", -4}, {"n2", 0}, {"n3", 6}, {"n4", 0}},
                  {{"n1", 0}, {"n2", 40}, {"n3", 100}, {"n4", 40}}},
        ScoreCase{
            "IgnorePreferredTermsOfExistingPods",
            PodYaml("b", "{app: b}", "n3", Aff("", "[" + Weighted(6, Term(kWeb, "zone")) + "]")),
            PodYaml("p", "{app: web}", ""), "ignore_preferred_terms_of_existing_pods = true",
            kZeros, kZeros},
        // upstream: the option only applies when the incoming pod has no preferred terms.
        ScoreCase{
            "IgnoreOptionKeepsThemWhenThePodHasTerms",
            PodYaml("b", "{app: b}", "n3", Aff("", "[" + Weighted(6, Term(kWeb, "zone")) + "]")),
            PodYaml("p", "{app: web}", "",
                    Aff("",
                        "[" +
                            Weighted(2, Term("{matchLabels: {app: b}}", "kubernetes.io/hostname")) +
                            "]")),
            "ignore_preferred_terms_of_existing_pods = true",
            {{"n1", 0}, {"n2", 0}, {"n3", 8}, {"n4", 0}},
            {{"n1", 0}, {"n2", 0}, {"n3", 100}, {"n4", 0}}},
        ScoreCase{"PreferredTermInOtherNamespace", PodYaml("web", "{app: web}", "n1", "", "other"),
                  PodYaml("p", "{}", "", Aff("", "[" + Weighted(10, Term(kWeb, "zone")) + "]")), "",
                  kZeros, kZeros}),
    [](const auto& info) { return info.param.name; });

// PreScore keeps its sums across cycles per kind of incoming pod, as PreFilter its counts:
// pods the existing pods' terms treat differently must not share them, and a new pod on a node
// moves them.
TEST(InterPodAffinityScore, SumsFollowTheKindOfPodAndNewPods) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(
      FourNodes() +
      PodYaml("x", "{app: x}", "n1", Aff("", "[" + Weighted(10, Term(kWeb, "zone")) + "]")) +
      PodYaml("y", "{app: y}", "n3", Aff("[" + Term(kDb, "zone") + "]")));
  using Scores = std::vector<std::pair<std::string, int64_t>>;
  const std::string web = PodYaml("w", "{app: web}", "");
  const std::string db = PodYaml("d", "{app: db}", "");
  const Scores web_scores = h.RunScore(*h.MakePod(web));
  EXPECT_EQ(web_scores, (Scores{{"n1", 100}, {"n2", 100}, {"n3", 0}, {"n4", 0}}));
  EXPECT_EQ(h.RunScore(*h.MakePod(db)), (Scores{{"n1", 0}, {"n2", 0}, {"n3", 100}, {"n4", 0}}));
  EXPECT_EQ(h.RunScore(*h.MakePod(web)), web_scores);
  // A pod repelling web pods from zone b: zone b now sums -20 + 0 for a web pod.
  h.AddObjects(
      PodYaml("z", "{app: z}", "n3", Anti("", "[" + Weighted(20, Term(kWeb, "zone")) + "]")));
  EXPECT_EQ(h.RunScore(*h.MakePod(web)), (Scores{{"n1", 100}, {"n2", 100}, {"n3", 0}, {"n4", 66}}));
}

TEST(InterPodAffinityScore, SchedulePrefersTheAttractingZone) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("n1", "a") + NodeYaml("n2", "b") + PodYaml("web", "{app: web}", "n2"));
  EXPECT_EQ(h.Schedule(*h.MakePod(
                PodYaml("p", "{}", "", Aff("", "[" + Weighted(5, Term(kWeb, "zone")) + "]")))),
            "n2");
}

// ---------------------------------------------------------------------------------------------
// Arguments and events
// ---------------------------------------------------------------------------------------------

struct ArgsCase {
  std::string name;
  std::string args;
  std::string error;

  friend void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }
};

class InterPodAffinityArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(InterPodAffinityArgsTest, RefusesBadArguments) {
  const ArgsCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.InterPodAffinity]\n" + c.args + "\n");
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.error));
    EXPECT_THAT(e.what(), HasSubstr("test.toml:"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InterPodAffinityArgsTest,
    ::testing::Values(
        ArgsCase{"HardWeightTooHigh", "hard_pod_affinity_weight = 101",
                 "plugin_config.InterPodAffinity.hard_pod_affinity_weight: must be in the range "
                 "[0, 100], got 101"},
        ArgsCase{"HardWeightNegative", "hard_pod_affinity_weight = -1",
                 "hard_pod_affinity_weight: must be in the range [0, 100], got -1"},
        ArgsCase{
            "HardWeightNotAnInteger", "hard_pod_affinity_weight = \"1\"",
            "plugin_config.InterPodAffinity.hard_pod_affinity_weight: expected an integer, not "
            "a string"},
        ArgsCase{"IgnoreNotABoolean", "ignore_preferred_terms_of_existing_pods = 1",
                 "plugin_config.InterPodAffinity.ignore_preferred_terms_of_existing_pods: "
                 "expected a boolean"},
        ArgsCase{"UnknownKey", "hardPodAffinityWeight = 1",
                 "plugin_config.InterPodAffinity.hardPodAffinityWeight: unknown key; did you mean "
                 "\"hard_pod_affinity_weight\"?"}),
    [](const auto& info) { return info.param.name; });

TEST(InterPodAffinityArgs, ReadmeExampleWorks) {
  Harness h;
  h.OnlyPlugins({kName}, ReadmeToml());
  h.AddObjects(NodeYaml("n1", "a") + NodeYaml("n2", "b") +
               PodYaml("fan", "{app: fan}", "n2", Aff("[" + Term(kWeb, "zone") + "]")));
  // The README sets hard_pod_affinity_weight = 5: the fan's required term pulls web pods.
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("p", "{app: web}", ""))), "n2");
}

TEST(InterPodAffinityEvents, RegistersPodEventsAndNodeAddOrLabelUpdate) {
  Harness h;
  h.OnlyPlugins({kName});
  for (const auto& [plugin, regs] : h.framework().EventsToRegister()) {
    if (plugin != kName) continue;
    ASSERT_EQ(regs.size(), 2u);
    EXPECT_EQ(regs[0].event.resource, SCHEDHOST_RESOURCE_POD);
    EXPECT_EQ(regs[0].event.actions, SCHEDHOST_ACTION_ALL);
    EXPECT_EQ(regs[1].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(regs[1].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL);
    return;
  }
  FAIL() << "InterPodAffinity registered no events";
}

}  // namespace
}  // namespace schedhost::plugins
