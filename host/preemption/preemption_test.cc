// Preemption toolkit: search bounds, PDB accounting, candidate order, callbacks overriding the
// rules, and the dry run (reprieve order, PDB-protected victims, bounded search from an offset)
// over the real NodeResourcesFit plugin through the harness.
#include "host/preemption/preemption.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/preemption/toolkit.h"
#include "host/queue/nominator.h"
#include "host/store/store_test_util.h"

namespace schedhost::preemption {
namespace {

using framework::Code;
using framework::PdbState;
using framework::Status;

PodPtr MakePod(const std::string& name, int32_t priority, int64_t created = 0,
               const std::string& ns = "default", model::Labels labels = {},
               const std::string& node = "n1") {
  model::PodData d;
  d.metadata.name = name;
  d.metadata.namespace_name = ns;
  d.metadata.labels = std::move(labels);
  d.metadata.creation_timestamp_ns = created;
  d.spec.priority = priority;
  d.spec.node_name = node;
  return model::Pod::Make(std::move(d));
}

std::shared_ptr<const model::PodDisruptionBudget> MakePdb(
    const std::string& app, std::optional<model::IntOrString> min_available,
    std::optional<model::IntOrString> max_unavailable, std::optional<int32_t> status_allowed,
    const std::string& ns = "default") {
  model::PodDisruptionBudgetData d;
  d.metadata.name = "pdb-" + app;
  d.metadata.namespace_name = ns;
  model::LabelSelector sel;
  if (!app.empty()) sel.match_labels["app"] = app;
  d.spec.selector = sel;
  d.spec.min_available = std::move(min_available);
  d.spec.max_unavailable = std::move(max_unavailable);
  if (status_allowed) {
    d.status.disruptions_allowed = *status_allowed;
    d.status.has_disruptions_allowed = true;
  }
  return model::PodDisruptionBudget::Make(std::move(d));
}

model::IntOrString Int(int32_t v) { return {false, v, ""}; }
model::IntOrString Pct(const std::string& v) { return {true, 0, v}; }

TEST(NumCandidatesTest, UpstreamBounds) {
  // upstream calculateNumCandidates: max(n * pct / 100, abs), capped at n.
  struct Case {
    int32_t nodes, pct, abs, want;
  } cases[] = {
      {5000, 10, 100, 500}, {500, 10, 100, 100}, {50, 10, 100, 50}, {1000, 0, 5, 5},
      {10, 50, 0, 5},       {3, 100, 0, 3},      {0, 10, 100, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NumCandidates(c.nodes, c.pct, c.abs), c.want)
        << c.nodes << " nodes, " << c.pct << "%, abs " << c.abs;
  }
}

TEST(DisruptionsAllowedTest, StatusOrComputedFromSpec) {
  std::vector<PodPtr> pods = {
      MakePod("a1", 0, 0, "default", {{"app", "a"}}),
      MakePod("a2", 0, 0, "default", {{"app", "a"}}),
      MakePod("a3", 0, 0, "default", {{"app", "a"}}),
      MakePod("a4", 0, 0, "default", {{"app", "a"}}, ""),  // pending: not healthy
      MakePod("other-ns", 0, 0, "prod", {{"app", "a"}}),
      MakePod("b1", 0, 0, "default", {{"app", "b"}}),
  };
  struct Case {
    const char* name;
    std::shared_ptr<const model::PodDisruptionBudget> pdb;
    int32_t want;
  } cases[] = {
      // status.disruptionsAllowed wins when the object carries it, even 0.
      {"status given", MakePdb("a", Int(1), std::nullopt, 0), 0},
      {"status given high", MakePdb("a", Int(4), std::nullopt, 7), 7},
      // 3 healthy (bound) of 4 selected in the namespace.
      {"minAvailable int", MakePdb("a", Int(2), std::nullopt, std::nullopt), 1},
      {"minAvailable above healthy", MakePdb("a", Int(4), std::nullopt, std::nullopt), 0},
      // 50% of 4 selected = 2 desired.
      {"minAvailable percent", MakePdb("a", Pct("50%"), std::nullopt, std::nullopt), 1},
      // 30% of 4 rounds up to 2 desired.
      {"minAvailable percent rounds up", MakePdb("a", Pct("30%"), std::nullopt, std::nullopt), 1},
      // desired = 4 - 1 = 3.
      {"maxUnavailable int", MakePdb("a", std::nullopt, Int(1), std::nullopt), 0},
      {"maxUnavailable int 2", MakePdb("a", std::nullopt, Int(2), std::nullopt), 1},
      // 25% of 4 = 1 unavailable: desired 3.
      {"maxUnavailable percent", MakePdb("a", std::nullopt, Pct("25%"), std::nullopt), 0},
      // Only the one bound pod of namespace prod counts.
      {"other namespace", MakePdb("a", Int(1), std::nullopt, std::nullopt, "prod"), 0},
      {"other namespace allows", MakePdb("a", Int(0), std::nullopt, std::nullopt, "prod"), 1},
      {"selects b", MakePdb("b", Int(0), std::nullopt, std::nullopt), 1},
  };
  for (const Case& c : cases) EXPECT_EQ(DisruptionsAllowed(*c.pdb, pods), c.want) << c.name;
}

TEST(SplitByPdbViolationTest, AllowanceIsConsumedInOrder) {
  auto a1 = MakePod("a1", 0, 0, "default", {{"app", "a"}});
  auto a2 = MakePod("a2", 0, 0, "default", {{"app", "a"}});
  auto b1 = MakePod("b1", 0, 0, "default", {{"app", "b"}});
  auto nolabels = MakePod("plain", 0);
  auto prod = MakePod("prod", 0, 0, "prod", {{"app", "a"}});
  std::vector<PdbState> pdbs = {{MakePdb("a", Int(1), std::nullopt, 1), 1},
                                {MakePdb("", Int(0), std::nullopt, 0), 0}};  // empty selector
  auto [violating, ok] = SplitByPdbViolation({a1, a2, b1, nolabels, prod}, pdbs);
  // The first a-pod uses the one allowed disruption; the second violates. An empty selector
  // matches nothing during preemption (upstream), other namespaces are not counted.
  ASSERT_EQ(violating.size(), 1u);
  EXPECT_EQ(violating[0]->name(), "a2");
  ASSERT_EQ(ok.size(), 4u);
  EXPECT_EQ(ok[0]->name(), "a1");
}

Candidate MakeCandidate(const std::string& node, std::vector<PodPtr> victims, int32_t pdb = 0) {
  return Candidate{node, std::move(victims), pdb};
}

TEST(SelectCandidateTest, UpstreamOrder) {
  struct Case {
    const char* name;
    std::vector<Candidate> candidates;
    const char* want;
  };
  std::vector<Case> cases = {
      {"fewest PDB violations",
       {MakeCandidate("a", {MakePod("x", 1)}, 1),
        MakeCandidate("b", {MakePod("y", 5), MakePod("z", 5)}, 0)},
       "b"},
      {"lowest highest-victim priority",
       {MakeCandidate("a", {MakePod("x", 10)}),
        MakeCandidate("b", {MakePod("y", 5), MakePod("z", 5)})},
       "b"},
      {"lowest sum of priorities",
       {MakeCandidate("a", {MakePod("x", 5), MakePod("y", 5)}),
        MakeCandidate("b", {MakePod("z", 5), MakePod("w", 1)})},
       "b"},
      // Two victims at -1 sum to more than one at 0 with upstream's offset per victim.
      {"sum counts every victim",
       {MakeCandidate("a", {MakePod("x", -1), MakePod("y", -1)}),
        MakeCandidate("b", {MakePod("z", -1)})},
       "b"},
      {"latest start of the highest-priority victims",
       {MakeCandidate("a", {MakePod("x", 5, 100)}), MakeCandidate("b", {MakePod("y", 5, 200)})},
       "b"},
      {"first among equals",
       {MakeCandidate("a", {MakePod("x", 5, 100)}), MakeCandidate("b", {MakePod("y", 5, 100)})},
       "a"},
  };
  Rules rules;
  for (const Case& c : cases) {
    const Candidate* best = SelectCandidate(c.candidates, rules);
    ASSERT_NE(best, nullptr) << c.name;
    EXPECT_EQ(best->node, c.want) << c.name;
  }
  EXPECT_EQ(SelectCandidate({}, rules), nullptr);
}

TEST(RulesTest, DefaultsAndCallbacksOverridingThem) {
  auto low = MakePod("low", 1);
  auto high = MakePod("high", 10);
  Rules defaults(nullptr);
  EXPECT_TRUE(defaults.IsEligibleVictim(high->view(), low->view()));
  EXPECT_FALSE(defaults.IsEligibleVictim(low->view(), high->view()));
  EXPECT_FALSE(defaults.IsEligibleVictim(low->view(), low->view())) << "equal priority is safe";
  EXPECT_EQ(defaults.PodEligible(high->view()), "");
  model::PodData never;
  never.metadata.name = "never";
  never.spec.preemption_policy = model::PreemptionPolicy::kNever;
  auto never_pod = model::Pod::Make(never);
  EXPECT_EQ(defaults.PodEligible(never_pod->view()), "not eligible due to preemptionPolicy=Never.");
  EXPECT_EQ(defaults.NumCandidates(5000), 500);

  schedhost_preemption_callbacks cb{};
  cb.struct_size = sizeof(cb);
  cb.is_eligible_victim = [](void*, const schedhost_pod_view*,
                             const schedhost_pod_view* v) noexcept {
    return v->name.len == 4 ? 1 : 0;  // only "high" (4 letters)
  };
  cb.pod_eligible = [](void*, const schedhost_pod_view* p) noexcept -> int32_t {
    return p->priority > 5 ? 1 : 0;
  };
  cb.candidate_less = [](void*, const schedhost_candidate* a,
                         const schedhost_candidate* b) noexcept {
    return a->victims_len > b->victims_len ? 1 : 0;  // most victims first
  };
  cb.min_candidate_nodes_percentage = 0;
  cb.min_candidate_nodes_absolute = 3;
  Rules custom(&cb);
  EXPECT_TRUE(custom.IsEligibleVictim(low->view(), high->view()));
  EXPECT_FALSE(custom.IsEligibleVictim(high->view(), low->view()));
  EXPECT_EQ(custom.PodEligible(never_pod->view()), "not eligible to preempt other pods.");
  EXPECT_EQ(custom.PodEligible(high->view()), "");
  EXPECT_EQ(custom.NumCandidates(5000), 3);
  std::vector<Candidate> cands = {MakeCandidate("a", {MakePod("x", 1)}),
                                  MakeCandidate("b", {MakePod("y", 1), MakePod("z", 1)})};
  EXPECT_EQ(SelectCandidate(cands, custom)->node, "b");

  // A struct from an older SDK (without the search bounds) keeps the default bounds.
  schedhost_preemption_callbacks old = cb;
  old.struct_size = offsetof(schedhost_preemption_callbacks, min_candidate_nodes_percentage);
  EXPECT_EQ(Rules(&old).NumCandidates(5000), 500);
}

// Dry runs over NodeResourcesFit: a node with 4 cpus.
class DryRunTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.OnlyPlugins({"NodeResourcesFit"}); }

  static std::string Node(const std::string& name, const std::string& cpu = "4") {
    return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
           "}\nstatus:\n  allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}\n---\n";
  }
  static std::string Pod(const std::string& name, int prio, const std::string& cpu,
                         const std::string& node, const std::string& app = "x",
                         const std::string& created = "2024-01-01T00:00:00Z") {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {app: " + app +
           "}, creationTimestamp: \"" + created +
           "\"}\nspec:\n  priority: " + std::to_string(prio) +
           (node.empty() ? "" : "\n  nodeName: " + node) +
           "\n  containers:\n  - name: c\n    image: i\n    resources: {requests: {cpu: \"" + cpu +
           "\"}}\n---\n";
  }

  // Victims runs SelectVictimsOnNode for `pod` on node `node`.
  std::pair<std::optional<Candidate>, Status> Victims(const model::Pod& pod,
                                                      const std::string& node,
                                                      const std::vector<PdbState>& pdbs = {}) {
    framework::Framework& fw = h_.framework();
    framework::CycleState state;
    auto [pre, s] = fw.RunPreFilterPlugins(state, pod.view());
    EXPECT_TRUE(s.ok()) << s.Message();
    cache::NodeInfo copy(*h_.snapshot().Get(node));
    return SelectVictimsOnNode(fw, state, pod.view(), copy, pdbs, Rules());
  }

  static std::vector<std::string> Names(const std::vector<PodPtr>& pods) {
    std::vector<std::string> out;
    for (const auto& p : pods) out.emplace_back(p->name());
    return out;
  }

  framework::testing::Harness h_;
};

TEST_F(DryRunTest, ReprievesTheMostImportantVictimsFirst) {
  h_.AddObjects(Node("n1") + Pod("hi", 10, "1", "n1") + Pod("mid", 5, "2", "n1") +
                Pod("low", 1, "1", "n1") + Pod("top", 1000, "0", "n1"));
  // Removing all three lower pods frees 4 cpus; adding back "hi" (1) fits, "mid" (2) does not,
  // "low" (1) fits again. "top" outranks the preemptor and is never considered.
  auto [c, s] = Victims(*h_.MakePod(Pod("p", 100, "2", "")), "n1");
  ASSERT_TRUE(s.ok()) << s.Message();
  ASSERT_TRUE(c);
  EXPECT_EQ(Names(c->victims), std::vector<std::string>{"mid"});
  EXPECT_EQ(c->num_pdb_violations, 0);
}

TEST_F(DryRunTest, PdbProtectedVictimsAreReprievedFirst) {
  h_.AddObjects(Node("n1") + Pod("a", 5, "2", "n1", "guarded") + Pod("b", 6, "2", "n1"));
  auto pod = h_.MakePod(Pod("p", 100, "2", ""));
  // Without a PDB the more important "b" is kept and "a" goes.
  auto [plain, s1] = Victims(*pod, "n1");
  ASSERT_TRUE(plain);
  EXPECT_EQ(Names(plain->victims), std::vector<std::string>{"a"});
  // With "a" protected (no disruption allowed) it is reprieved first, so "b" goes instead.
  std::vector<PdbState> pdbs = {{MakePdb("guarded", Int(1), std::nullopt, 0), 0}};
  auto [guarded, s2] = Victims(*pod, "n1", pdbs);
  ASSERT_TRUE(guarded);
  EXPECT_EQ(Names(guarded->victims), std::vector<std::string>{"b"});
  EXPECT_EQ(guarded->num_pdb_violations, 0);
}

TEST_F(DryRunTest, CountsViolationsWhenProtectedVictimsMustGo) {
  h_.AddObjects(Node("n1") + Pod("a", 5, "2", "n1", "guarded") + Pod("b", 6, "2", "n1", "guarded"));
  std::vector<PdbState> pdbs = {{MakePdb("guarded", Int(2), std::nullopt, 0), 0}};
  auto [c, s] = Victims(*h_.MakePod(Pod("p", 100, "4", "")), "n1", pdbs);
  ASSERT_TRUE(c);
  EXPECT_EQ(Names(c->victims), (std::vector<std::string>{"b", "a"})) << "most important first";
  EXPECT_EQ(c->num_pdb_violations, 2);
}

TEST_F(DryRunTest, NodesThatCannotHelp) {
  h_.AddObjects(Node("n1") + Pod("equal", 100, "3", "n1") + Node("n2", "1") +
                Pod("small", 1, "1", "n2"));
  auto pod = h_.MakePod(Pod("p", 100, "2", ""));
  // upstream: no lower-priority pods => UnschedulableAndUnresolvable with this message.
  auto [c1, s1] = Victims(*pod, "n1");
  EXPECT_FALSE(c1);
  EXPECT_EQ(s1.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s1.Message(), "No preemption victims found for incoming pod");
  // Still no fit with every victim gone: the Filter status says why (the pod asks for more cpu
  // than n2 has at all, which NodeResourcesFit reports as unresolvable).
  auto [c2, s2] = Victims(*pod, "n2");
  EXPECT_FALSE(c2);
  EXPECT_EQ(s2.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s2.Message(), "Insufficient cpu");
}

TEST_F(DryRunTest, BoundedSearchFromTheOffsetSkippingUnresolvableNodes) {
  std::string objs;
  NodeStatuses statuses;
  static const std::array<std::string, 6> kNames = {"n0", "n1", "n2", "n3", "n4", "n5"};
  for (int i = 0; i < 6; ++i) {
    const std::string& n = kNames[i];
    objs += Node(n) + Pod("v" + std::to_string(i), 1, "4", n);
    statuses.emplace_back(n, Status::Make(Code::kUnschedulable, "Insufficient cpu"));
  }
  statuses[0].second = Status::Make(Code::kUnschedulableAndUnresolvable, "node(s) didn't match");
  h_.AddObjects(objs);
  auto pod = h_.MakePod(Pod("p", 100, "1", ""));
  framework::Framework& fw = h_.framework();
  framework::CycleState state;
  fw.RunPreFilterPlugins(state, pod->view());

  schedhost_preemption_callbacks one{};
  one.struct_size = sizeof(one);
  one.min_candidate_nodes_absolute = 1;  // percentage 0: look for one candidate
  SearchResult r =
      FindCandidates(fw, state, pod->view(), statuses, {}, Rules(&one), [](uint64_t n) {
        EXPECT_EQ(n, 5u);
        return uint64_t{2};
      });
  ASSERT_TRUE(r.error.ok());
  ASSERT_FALSE(r.candidates.empty());
  // Potential nodes are n1..n5; offset 2 starts the search at n3.
  EXPECT_EQ(r.candidates.front().node, "n3");
  // Whatever the threads did, the answer is that of a search in order: it stops at one.
  EXPECT_EQ(r.candidates.size(), 1u);
  for (const Candidate& c : r.candidates) EXPECT_NE(c.node, "n0");
  bool n0_not_helpful = false;
  for (const auto& [n, s] : r.node_statuses) {
    if (n == "n0") n0_not_helpful = s.Message() == "Preemption is not helpful for scheduling";
  }
  EXPECT_TRUE(n0_not_helpful);

  // Default bounds (max(10%, 100) capped at 5): every potential node becomes a candidate.
  SearchResult all = FindCandidates(fw, state, pod->view(), statuses, {}, Rules(),
                                    [](uint64_t) { return uint64_t{0}; });
  ASSERT_EQ(all.candidates.size(), 5u);
  EXPECT_EQ(all.candidates.front().node, "n1");
}

// The host API entries the toolkit makes live, called through the ABI table as a plugin would,
// over a real store and nominator: answers, effects, and refusals of bad arguments.
TEST(ToolkitAbiTest, EntriesAreLiveAndRefuseBadArguments) {
  store::Store store(store::testing::Bare());
  queue::Nominator nominator;
  std::vector<std::string> evicted;
  ToolkitOptions opts;
  opts.on_evicted = [&](const model::Pod& v, const model::Pod* by) {
    evicted.push_back(std::string(v.name()) + " by " + std::string(by ? by->name() : "-"));
  };
  Toolkit toolkit(store, nominator, std::move(opts));
  store.Create(store::testing::ClassData("high", 1000));
  auto pdb_data = store::testing::PdbData("guard");
  pdb_data.spec.min_available = Int(1);
  model::LabelSelector sel;
  sel.match_labels["app"] = "web";
  pdb_data.spec.selector = sel;
  store.Create(pdb_data);
  auto web_data = store::testing::PodData("web");
  web_data.metadata.labels = {{"app", "web"}};
  web_data.spec.node_name = "n1";
  auto web = store.Create(web_data);
  auto victim = store.Create(store::testing::PodData("victim"));
  auto preemptor = store.Create(store::testing::PodData("preemptor"));

  framework::testing::Harness h;
  h.OnlyPlugins({"NodeResourcesFit"});
  h.AddObjects(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: "
      "{cpu: \"4\", memory: 8Gi, pods: \"110\"}\n");
  framework::Framework& fw = h.framework();
  const framework::PluginInstance* inst = fw.FindPlugin("NodeResourcesFit");
  ASSERT_NE(inst, nullptr);
  auto* host = const_cast<schedhost_host*>(&inst->handle);
  const schedhost_host_api* api = framework::HostApi();

  // Without cluster access (a bare framework) the entries say so instead of guessing.
  const schedhost_pdb_view* const* pdbs = nullptr;
  size_t len = 0;
  EXPECT_EQ(api->list_pdbs(host, &pdbs, &len), SCHEDHOST_E_NOT_AVAILABLE);
  fw.SetClusterAccess(&toolkit);

  // list_pdbs: computed allowance (1 healthy bound pod, minAvailable 1 => 0).
  ASSERT_EQ(api->list_pdbs(host, &pdbs, &len), SCHEDHOST_OK);
  ASSERT_EQ(len, 1u);
  EXPECT_EQ(std::string(pdbs[0]->name.data, pdbs[0]->name.len), "guard");
  EXPECT_EQ(pdbs[0]->disruptions_allowed, 0);
  EXPECT_EQ(api->list_pdbs(host, nullptr, &len), SCHEDHOST_E_INVALID_ARGUMENT);

  // get_priority_class: found, missing, empty name.
  const schedhost_priority_class_view* pc = nullptr;
  ASSERT_EQ(api->get_priority_class(host, schedhost_str{"high", 4}, &pc), SCHEDHOST_OK);
  EXPECT_EQ(pc->value, 1000);
  EXPECT_EQ(api->get_priority_class(host, schedhost_str{"nope", 4}, &pc), SCHEDHOST_E_NOT_FOUND);
  EXPECT_EQ(pc, nullptr);
  EXPECT_EQ(api->get_priority_class(host, schedhost_str{"", 0}, &pc), SCHEDHOST_E_INVALID_ARGUMENT);

  // set_nominated_node: written to the store and the nominator; "" clears both.
  ASSERT_EQ(api->set_nominated_node(host, preemptor->view(), schedhost_str{"n1", 2}), SCHEDHOST_OK);
  EXPECT_EQ(store.Get<model::Pod>("default", "preemptor")->data().status.nominated_node_name, "n1");
  EXPECT_EQ(nominator.NominatedNodeFor(preemptor->uid()), "n1");
  ASSERT_EQ(api->set_nominated_node(host, preemptor->view(), schedhost_str{"", 0}), SCHEDHOST_OK);
  EXPECT_EQ(store.Get<model::Pod>("default", "preemptor")->data().status.nominated_node_name, "");
  EXPECT_EQ(nominator.NominatedNodeFor(preemptor->uid()), "");
  EXPECT_EQ(api->set_nominated_node(host, nullptr, schedhost_str{"n1", 2}),
            SCHEDHOST_E_INVALID_ARGUMENT);

  // evict_pod: deleted from the store and recorded with its preemptor; a second time it is gone.
  ASSERT_EQ(api->evict_pod(host, victim->view(), preemptor->view(), schedhost_str{"test", 4}),
            SCHEDHOST_OK);
  EXPECT_EQ(store.Get<model::Pod>("default", "victim"), nullptr);
  EXPECT_EQ(evicted, std::vector<std::string>{"victim by preemptor"});
  EXPECT_EQ(api->evict_pod(host, victim->view(), preemptor->view(), schedhost_str{"", 0}),
            SCHEDHOST_E_NOT_FOUND);
  EXPECT_EQ(api->evict_pod(host, nullptr, preemptor->view(), schedhost_str{"", 0}),
            SCHEDHOST_E_INVALID_ARGUMENT);

  // node_info_copy: changes to the copy leave the snapshot alone.
  const cache::NodeInfo* n1 = h.snapshot().Get("n1");
  schedhost_node_info_copy* copy = api->node_info_copy(host, n1->view());
  ASSERT_NE(copy, nullptr);
  ASSERT_EQ(api->node_info_copy_add_pod(copy, web->view()), SCHEDHOST_OK);
  EXPECT_EQ(api->node_info_copy_view(copy)->pods_len, 1u);
  EXPECT_EQ(n1->view()->pods_len, 0u);
  ASSERT_EQ(api->node_info_copy_remove_pod(copy, web->view()), SCHEDHOST_OK);
  EXPECT_EQ(api->node_info_copy_view(copy)->pods_len, 0u);
  EXPECT_EQ(api->node_info_copy_remove_pod(copy, web->view()), SCHEDHOST_E_NOT_FOUND);
  EXPECT_EQ(api->node_info_copy_add_pod(copy, nullptr), SCHEDHOST_E_INVALID_ARGUMENT);
  api->node_info_copy_destroy(copy);
  EXPECT_EQ(api->node_info_copy(host, nullptr), nullptr);

  // cycle_state_clone: a separate state, destroyed by the caller.
  framework::CycleState state;
  schedhost_cycle_state* clone = api->cycle_state_clone(state.abi());
  ASSERT_NE(clone, nullptr);
  EXPECT_NE(clone, state.abi());
  api->cycle_state_destroy(clone);
  EXPECT_EQ(api->cycle_state_clone(nullptr), nullptr);
}

}  // namespace
}  // namespace schedhost::preemption
