// PodTopologySpread through the real framework over a real snapshot. Behaviour follows upstream's
// podtopologyspread plugin (v1.27 semantics): PreFilter counts matching pods per domain over the
// nodes that carry every key and pass the inclusion policies, Filter rejects a node without a key
// (UnschedulableAndUnresolvable) or where matches + self - global minimum > maxSkew
// (Unschedulable), minDomains zeroes the minimum, Score is sum(count * log(domains + 2) +
// maxSkew - 1) with the hostname special case, NormalizeScore is 100 * (max + min - s) / max.
#include "pod_topology_spread.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/model/interner.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;
using ::testing::HasSubstr;

constexpr char kName[] = "PodTopologySpread";
constexpr char kSkew[] = "node(s) didn't match pod topology spread constraints";
constexpr char kMissing[] =
    "node(s) didn't match pod topology spread constraints (missing required label)";

// NodeYaml renders a node; `labels` and `spec` are YAML flow maps.
std::string NodeYaml(const std::string& name, const std::string& labels,
                     const std::string& spec = "{}") {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: " + labels +
         "}\nspec: " + spec +
         "\nstatus: {allocatable: {cpu: \"8\", memory: 8Gi, pods: \"110\"}}\n---\n";
}

// PodYaml renders a pod; `meta` adds flow-map entries to metadata, `spec` adds spec lines
// (indented by two spaces); a non-empty `node` binds it.
std::string PodYaml(const std::string& name, const std::string& labels, const std::string& node,
                    const std::string& spec = "", const std::string& meta = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                  ", namespace: default, labels: " + labels + meta + "}\nspec:\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  return y + spec + "  containers:\n  - {name: c, image: pause}\n---\n";
}

// Spread renders topologySpreadConstraints from flow-map items.
std::string Spread(const std::vector<std::string>& items) {
  std::string y = "  topologySpreadConstraints:\n";
  for (const auto& i : items) y += "  - " + i + "\n";
  return y;
}

// C renders one constraint; `extra` adds flow-map entries (minDomains, policies, ...).
std::string C(int skew, const std::string& key, const std::string& action,
              const std::string& selector = "{matchExpressions: [{key: foo, operator: Exists}]}",
              const std::string& extra = "") {
  return "{maxSkew: " + std::to_string(skew) + ", topologyKey: " + key +
         ", whenUnsatisfiable: " + action + ", labelSelector: " + selector + extra + "}";
}

constexpr char kOwnedByWeb[] =
    ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs-web, "
    "controller: true}]";

using Verdicts = std::map<std::string, std::string>;

// RunFilter maps node -> "" (passes) or its one reason; the code must be the reason's.
Verdicts RunFilter(Harness& h, const std::string& pod) {
  Verdicts out;
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    if (r.status.ok()) {
      out[r.node] = "";
      continue;
    }
    const std::string msg = r.status.Message();
    if (msg == kSkew) {
      EXPECT_EQ(r.status.code, Code::kUnschedulable) << r.node;
    } else if (msg == kMissing) {
      EXPECT_EQ(r.status.code, Code::kUnschedulableAndUnresolvable) << r.node;
    }
    out[r.node] = msg;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// reference/001: "normal case with two spreadConstraints"
// ---------------------------------------------------------------------------------------------

std::string ReferenceCluster() {
  std::string y = NodeYaml("node-a", "{zone: zone1, node: node-a}") +
                  NodeYaml("node-b", "{zone: zone1, node: node-b}") +
                  NodeYaml("node-x", "{zone: zone2, node: node-x}") +
                  NodeYaml("node-y", "{zone: zone2, node: node-y}");
  for (const auto& [pod, node] :
       std::vector<std::pair<std::string, std::string>>{{"p-a1", "node-a"},
                                                        {"p-a2", "node-a"},
                                                        {"p-b1", "node-b"},
                                                        {"p-y1", "node-y"},
                                                        {"p-y2", "node-y"},
                                                        {"p-y3", "node-y"},
                                                        {"p-y4", "node-y"}}) {
    y += PodYaml(pod, "{foo: \"\"}", node);
  }
  return y;
}

std::string ReferencePod(const std::string& action) {
  return PodYaml("p", "{foo: \"\"}", "", Spread({C(1, "zone", action), C(1, "node", action)}));
}

std::string Str(Id id) { return std::string(model::Interner::Global().Str(id)); }

std::map<std::string, int64_t> Counts(const DomainCounts& dc) {
  std::map<std::string, int64_t> out;
  for (const DomainCount& d : dc.items()) out[Str(d.value)] = d.count;
  return out;
}

TEST(PodTopologySpreadReference, TwoConstraintsPreFilterStateAndFilter) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(ReferenceCluster());
  auto pod = h.MakePod(ReferencePod("DoNotSchedule"));
  framework::CycleState state;
  auto pre = h.framework().RunPreFilterPlugins(state, pod->view());
  ASSERT_TRUE(pre.second.ok()) << pre.second.Message();
  void* raw = nullptr;
  ASSERT_TRUE(state.Read(model::Interner::Global().Intern("PreFilterPodTopologySpread"), &raw));
  const auto* s = static_cast<const PreFilterState*>(raw);
  ASSERT_EQ(s->constraints->size(), 2u);
  // TpPairToMatchNum of the article.
  EXPECT_EQ(Counts(s->counts[0]), (std::map<std::string, int64_t>{{"zone1", 3}, {"zone2", 4}}));
  EXPECT_EQ(Counts(s->counts[1]), (std::map<std::string, int64_t>{
                                      {"node-a", 2}, {"node-b", 1}, {"node-x", 0}, {"node-y", 4}}));
  // TpKeyToCriticalPaths: zone {zone1 3, zone2 4}, node {node-x 0, node-b 1}.
  EXPECT_EQ(Str(s->critical[0].paths[0].value), "zone1");
  EXPECT_EQ(s->critical[0].paths[0].count, 3);
  EXPECT_EQ(Str(s->critical[0].paths[1].value), "zone2");
  EXPECT_EQ(s->critical[0].paths[1].count, 4);
  EXPECT_EQ(Str(s->critical[1].paths[0].value), "node-x");
  EXPECT_EQ(s->critical[1].paths[0].count, 0);
  EXPECT_EQ(Str(s->critical[1].paths[1].value), "node-b");
  EXPECT_EQ(s->critical[1].paths[1].count, 1);

  // node-a and node-b fit the zone (3+1-3) but not the node constraint (2+1-0, 1+1-0); zone2's
  // nodes break the zone constraint (4+1-3).
  EXPECT_EQ(RunFilter(h, ReferencePod("DoNotSchedule")),
            (Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kSkew}, {"node-y", kSkew}}));
}

TEST(PodTopologySpreadReference, TwoSoftConstraintsScores) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(ReferenceCluster());
  std::vector<framework::testing::ScoredNode> scores;
  ASSERT_TRUE(h.RunScoreDetailed(*h.MakePod(ReferencePod("ScheduleAnyway")), scores).ok());
  // zone weight log(4), node weight log(6):
  // node-a 3*1.386 + 2*1.792 = 7.74 -> 8; node-b 4.16 + 1.79 -> 6; node-x 4*1.386 -> 6;
  // node-y 5.55 + 4*1.792 = 12.71 -> 13. Normalised 100*(13+6-s)/13: 84, 100, 100, 46.
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (const auto& ns : scores) {
    ASSERT_EQ(ns.raw.size(), 1u);
    got[std::string(ns.node_info->node->name.data, ns.node_info->node->name.len)] = {
        ns.raw[0], ns.weighted[0]};
  }
  EXPECT_EQ(
      got,
      (std::map<std::string, std::pair<int64_t, int64_t>>{
          {"node-a", {8, 84}}, {"node-b", {6, 100}}, {"node-x", {6, 100}}, {"node-y", {13, 46}}}));
}

// ---------------------------------------------------------------------------------------------
// Filter cases
// ---------------------------------------------------------------------------------------------

struct FilterCase {
  std::string name;
  std::string cluster;
  std::string pod;
  Verdicts want;

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class PodTopologySpreadFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(PodTopologySpreadFilterTest, AppliesSkewRule) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(c.cluster);
  EXPECT_EQ(RunFilter(h, c.pod), c.want);
}

// Two zones with one matching pod each, and a third zone `c` on a node that `extra` decorates.
std::string ThreeZones(const std::string& c_spec = "{}", const std::string& c_labels = "") {
  return NodeYaml("a1", "{zone: a, disk: ssd}") + NodeYaml("b1", "{zone: b, disk: ssd}") +
         NodeYaml("c1", "{zone: c" + c_labels + "}", c_spec) + PodYaml("x1", "{foo: x}", "a1") +
         PodYaml("x2", "{foo: x}", "b1");
}

const std::string kZone1 = Spread({C(1, "zone", "DoNotSchedule")});

INSTANTIATE_TEST_SUITE_P(
    Cases, PodTopologySpreadFilterTest,
    ::testing::Values(
        // upstream: the empty zone c is the global minimum (0), so zones with one pod are full.
        FilterCase{"SingleConstraint",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "", kZone1),
                   {{"a1", kSkew}, {"b1", kSkew}, {"c1", ""}}},
        // A pod its own selector does not match adds no self-match: 1+0-0 <= 1.
        FilterCase{"NoSelfMatch",
                   ThreeZones(),
                   PodYaml("p", "{bar: x}", "", kZone1),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        FilterCase{"MaxSkewTwo",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "", Spread({C(2, "zone", "DoNotSchedule")})),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        // upstream: a node without the topology key is UnschedulableAndUnresolvable, and the
        // nodes missing a key are no domain (c1 lacks rack: min is 0 over racks r1, r2).
        FilterCase{"MissingKey",
                   NodeYaml("a1", "{zone: a, rack: r1}") + NodeYaml("b1", "{zone: b, rack: r2}") +
                       NodeYaml("c1", "{zone: c}") + PodYaml("x1", "{foo: x}", "a1"),
                   PodYaml("p", "{foo: x}", "",
                           Spread({C(1, "zone", "DoNotSchedule"), C(1, "rack", "DoNotSchedule")})),
                   {{"a1", kSkew}, {"b1", ""}, {"c1", kMissing}}},
        // ScheduleAnyway constraints are not filtered on.
        FilterCase{"SoftConstraintNotFiltered",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "", Spread({C(1, "zone", "ScheduleAnyway")})),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        // Only pods in the incoming pod's namespace count.
        FilterCase{"OtherNamespaceNotCounted",
                   NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: o, namespace: other, labels: "
                       "{foo: x}}\nspec: {nodeName: a1, containers: [{name: c}]}\n---\n",
                   PodYaml("p", "{foo: x}", "", kZone1),
                   {{"a1", ""}, {"b1", ""}}},
        // An empty selector selects the pod itself but counts no pod on nodes (upstream).
        FilterCase{"EmptySelectorCountsNothing",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "", Spread({C(1, "zone", "DoNotSchedule", "{}")})),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        // minDomains: 2 domains with one pod each; with minDomains 3 the minimum becomes 0.
        FilterCase{"MinDomainsMet",
                   NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
                       PodYaml("x1", "{foo: x}", "a1") + PodYaml("x2", "{foo: x}", "b1"),
                   PodYaml("p", "{foo: x}", "",
                           Spread({C(1, "zone", "DoNotSchedule",
                                     "{matchExpressions: [{key: foo, operator: Exists}]}",
                                     ", minDomains: 2")})),
                   {{"a1", ""}, {"b1", ""}}},
        FilterCase{"MinDomainsNotMet",
                   NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
                       PodYaml("x1", "{foo: x}", "a1") + PodYaml("x2", "{foo: x}", "b1"),
                   PodYaml("p", "{foo: x}", "",
                           Spread({C(1, "zone", "DoNotSchedule",
                                     "{matchExpressions: [{key: foo, operator: Exists}]}",
                                     ", minDomains: 3")})),
                   {{"a1", kSkew}, {"b1", kSkew}}},
        // nodeAffinityPolicy Honor (default): zone c fails the pod's nodeSelector and is no
        // domain, so the minimum is 1 and zones a and b take one more pod.
        FilterCase{"NodeAffinityPolicyHonor",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "", "  nodeSelector: {disk: ssd}\n" + kZone1),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        FilterCase{"NodeAffinityPolicyIgnore",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "",
                           "  nodeSelector: {disk: ssd}\n" +
                               Spread({C(1, "zone", "DoNotSchedule",
                                         "{matchExpressions: [{key: foo, operator: Exists}]}",
                                         ", nodeAffinityPolicy: Ignore")})),
                   {{"a1", kSkew}, {"b1", kSkew}, {"c1", ""}}},
        FilterCase{"RequiredNodeAffinityHonored",
                   ThreeZones(),
                   PodYaml("p", "{foo: x}", "",
                           "  affinity:\n    nodeAffinity:\n      "
                           "requiredDuringSchedulingIgnoredDuringExecution:\n        "
                           "nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, "
                           "values: [a, b]}]}]\n" +
                               kZone1),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        // nodeTaintsPolicy: Ignore (default) counts the tainted zone c as a domain; Honor drops
        // it unless the pod tolerates the taint; PreferNoSchedule never drops a node.
        FilterCase{"NodeTaintsPolicyIgnore",
                   ThreeZones("{taints: [{key: k, value: v, effect: NoSchedule}]}"),
                   PodYaml("p", "{foo: x}", "", kZone1),
                   {{"a1", kSkew}, {"b1", kSkew}, {"c1", ""}}},
        FilterCase{"NodeTaintsPolicyHonor",
                   ThreeZones("{taints: [{key: k, value: v, effect: NoSchedule}]}"),
                   PodYaml("p", "{foo: x}", "",
                           Spread({C(1, "zone", "DoNotSchedule",
                                     "{matchExpressions: [{key: foo, operator: Exists}]}",
                                     ", nodeTaintsPolicy: Honor")})),
                   {{"a1", ""}, {"b1", ""}, {"c1", ""}}},
        FilterCase{"NodeTaintsPolicyHonorTolerated",
                   ThreeZones("{taints: [{key: k, value: v, effect: NoExecute}]}"),
                   PodYaml("p", "{foo: x}", "",
                           "  tolerations: [{key: k, operator: Exists}]\n" +
                               Spread({C(1, "zone", "DoNotSchedule",
                                         "{matchExpressions: [{key: foo, operator: Exists}]}",
                                         ", nodeTaintsPolicy: Honor")})),
                   {{"a1", kSkew}, {"b1", kSkew}, {"c1", ""}}},
        FilterCase{"NodeTaintsPolicyHonorPreferNoSchedule",
                   ThreeZones("{taints: [{key: k, value: v, effect: PreferNoSchedule}]}"),
                   PodYaml("p", "{foo: x}", "",
                           Spread({C(1, "zone", "DoNotSchedule",
                                     "{matchExpressions: [{key: foo, operator: Exists}]}",
                                     ", nodeTaintsPolicy: Honor")})),
                   {{"a1", kSkew}, {"b1", kSkew}, {"c1", ""}}},
        // matchLabelKeys: the pod's version is ANDed into the selector, so only v2 pods count
        // (zone a: 0, zone b: 1) and the verdicts flip compared with the plain selector.
        FilterCase{"WithoutMatchLabelKeys",
                   NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
                       PodYaml("v1a", "{app: web, version: v1}", "a1") +
                       PodYaml("v1b", "{app: web, version: v1}", "a1") +
                       PodYaml("v2a", "{app: web, version: v2}", "b1"),
                   PodYaml("p", "{app: web, version: v2}", "",
                           Spread({C(1, "zone", "DoNotSchedule", "{matchLabels: {app: web}}")})),
                   {{"a1", kSkew}, {"b1", ""}}},
        FilterCase{"MatchLabelKeys",
                   NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
                       PodYaml("v1a", "{app: web, version: v1}", "a1") +
                       PodYaml("v1b", "{app: web, version: v1}", "a1") +
                       PodYaml("v2a", "{app: web, version: v2}", "b1"),
                   PodYaml("p", "{app: web, version: v2}", "",
                           Spread({C(1, "zone", "DoNotSchedule", "{matchLabels: {app: web}}",
                                     ", matchLabelKeys: [version, absent]")})),
                   {{"a1", ""}, {"b1", kSkew}}}));

// ---------------------------------------------------------------------------------------------
// AddPod / RemovePod
// ---------------------------------------------------------------------------------------------

// PreFilter keeps each node's count of matching pods with the node info generation it was taken
// at (one plugin instance across cycles, as in the host): pods bound between two cycles must
// move the counts of the nodes they landed on.
TEST(PodTopologySpreadCountCache, CountsFollowPodsBoundBetweenCycles) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
               PodYaml("x1", "{foo: x}", "a1"));
  const std::string pod = PodYaml("p", "{foo: x}", "", kZone1);
  EXPECT_EQ(RunFilter(h, pod), (Verdicts{{"a1", kSkew}, {"b1", ""}}));
  h.AddObjects(PodYaml("x2", "{foo: x}", "b1") + PodYaml("x3", "{foo: x}", "b1"));
  EXPECT_EQ(RunFilter(h, pod), (Verdicts{{"a1", ""}, {"b1", kSkew}}));
  // A pod the selector does not select changes its node, not the count.
  h.AddObjects(PodYaml("y1", "{bar: y}", "a1"));
  EXPECT_EQ(RunFilter(h, pod), (Verdicts{{"a1", ""}, {"b1", kSkew}}));
  h.AddObjects(PodYaml("x4", "{foo: x}", "a1") + PodYaml("x5", "{foo: x}", "a1"));
  EXPECT_EQ(RunFilter(h, pod), (Verdicts{{"a1", kSkew}, {"b1", ""}}));
  // Another selector is counted apart: nothing on either node has label baz.
  const std::string other =
      PodYaml("q", "{baz: z}", "", Spread({C(1, "zone", "DoNotSchedule",
                                             "{matchExpressions: [{key: baz, operator: Exists}]}")}));
  EXPECT_EQ(RunFilter(h, other), (Verdicts{{"a1", ""}, {"b1", ""}}));
}

// For pods whose inclusion policies do not depend on the pod, the cache also keeps each
// node's domain and inclusion per (selector, namespace, topology key, policies): constraints
// that differ only in the key, or pods that select nodes, must not read another's entries.
TEST(PodTopologySpreadCountCache, PlacedEntriesAreKeptPerTopologyKeyAndPolicy) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("a1", "{zone: a, host: a1}") + NodeYaml("a2", "{zone: a, host: a2}") +
               NodeYaml("b1", "{zone: b, host: b1}") + NodeYaml("c1", "{host: c1}") +
               PodYaml("x1", "{foo: x}", "a1") + PodYaml("x2", "{foo: x}", "b1"));
  // By zone a and b hold one each (c1 has no zone): every zoned node fits.
  const std::string by_zone = PodYaml("p", "{foo: x}", "", kZone1);
  const Verdicts zone = {{"a1", ""}, {"a2", ""}, {"b1", ""}, {"c1", kMissing}};
  EXPECT_EQ(RunFilter(h, by_zone), zone);
  // The same selector by host: a1 and b1 hold one, a2 and c1 none.
  const Verdicts host = {{"a1", kSkew}, {"a2", ""}, {"b1", kSkew}, {"c1", ""}};
  EXPECT_EQ(RunFilter(h, PodYaml("q", "{foo: x}", "", Spread({C(1, "host", "DoNotSchedule")}))),
            host);
  // A pod that selects zone-a nodes counts only there (nodeAffinityPolicy Honor): b1's pod is
  // not counted, so b1 (whose domain then holds nothing) passes this plugin.
  EXPECT_EQ(RunFilter(h, PodYaml("r", "{foo: x}", "",
                                 "  nodeSelector: {zone: a}\n" +
                                     Spread({C(1, "host", "DoNotSchedule")}))),
            (Verdicts{{"a1", kSkew}, {"a2", ""}, {"b1", ""}, {"c1", ""}}));
  EXPECT_EQ(RunFilter(h, PodYaml("s", "{foo: x}", "", "  nodeSelector: {zone: b}\n" + kZone1)),
            zone);
  // The first two again, from their caches.
  EXPECT_EQ(RunFilter(h, by_zone), zone);
  EXPECT_EQ(RunFilter(h, PodYaml("q2", "{foo: x}", "", Spread({C(1, "host", "DoNotSchedule")}))),
            host);
}

TEST(PodTopologySpreadExtensions, AddAndRemovePodUpdateCounts) {
  Harness h;
  h.OnlyPlugins({kName});
  // Zone a holds one matching pod, zone b none: only b1 fits a maxSkew-1 pod.
  h.AddObjects(NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
               PodYaml("x1", "{foo: x}", "a1"));
  auto pod = h.MakePod(PodYaml("p", "{foo: x}", "", kZone1));
  auto existing = h.MakePod(PodYaml("x1", "{foo: x}", "a1"));
  auto matching = h.MakePod(PodYaml("n1", "{foo: x}", "b1"));
  auto other_labels = h.MakePod(PodYaml("n2", "{bar: x}", "b1"));
  auto other_ns = h.MakePod(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: n3, namespace: other, labels: {foo: x}}\n"
      "spec: {nodeName: b1, containers: [{name: c}]}\n");
  framework::Framework& fw = h.framework();
  const auto& snap = h.snapshot();
  auto view = [&](std::string_view name) -> const schedhost_node_info_view* {
    for (size_t i = 0; i < snap.size(); ++i) {
      if (snap.at(i).node()->name() == name) return snap.views()[i];
    }
    return nullptr;
  };
  const schedhost_node_info_view* a1 = view("a1");
  const schedhost_node_info_view* b1 = view("b1");
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(b1, nullptr);
  auto verdicts = [&](const framework::CycleState& st) {
    return std::make_pair(fw.RunFilterPlugins(st, pod->view(), a1).ok(),
                          fw.RunFilterPlugins(st, pod->view(), b1).ok());
  };
  framework::CycleState state;
  ASSERT_TRUE(fw.RunPreFilterPlugins(state, pod->view()).second.ok());
  EXPECT_EQ(verdicts(state), std::make_pair(false, true));

  // Pods the constraint does not select, or in another namespace, change nothing.
  ASSERT_TRUE(fw.RunPreFilterExtensionAddPod(state, pod->view(), other_labels->view(), b1).ok());
  ASSERT_TRUE(fw.RunPreFilterExtensionAddPod(state, pod->view(), other_ns->view(), b1).ok());
  EXPECT_EQ(verdicts(state), std::make_pair(false, true));

  // A clone is independent: adding a matching pod to b1 there evens the zones (both fit).
  auto clone = state.Clone();
  ASSERT_TRUE(fw.RunPreFilterExtensionAddPod(*clone, pod->view(), matching->view(), b1).ok());
  EXPECT_EQ(verdicts(*clone), std::make_pair(true, true));
  EXPECT_EQ(verdicts(state), std::make_pair(false, true));

  // Removing the pod of zone a leaves both zones at 0: both fit.
  ASSERT_TRUE(fw.RunPreFilterExtensionRemovePod(state, pod->view(), existing->view(), a1).ok());
  EXPECT_EQ(verdicts(state), std::make_pair(true, true));
  // ... and adding one to b makes b the fuller zone.
  ASSERT_TRUE(fw.RunPreFilterExtensionAddPod(state, pod->view(), matching->view(), b1).ok());
  EXPECT_EQ(verdicts(state), std::make_pair(true, false));
}

// ---------------------------------------------------------------------------------------------
// Score cases
// ---------------------------------------------------------------------------------------------

using Scores = std::map<std::string, std::pair<int64_t, int64_t>>;  // node -> {raw, normalised}

Scores RunScore(Harness& h, const std::string& pod) {
  std::vector<framework::testing::ScoredNode> scores;
  framework::Status s = h.RunScoreDetailed(*h.MakePod(pod), scores);
  EXPECT_TRUE(s.ok()) << s.Message();
  Scores out;
  for (const auto& ns : scores) {
    out[std::string(ns.node_info->node->name.data, ns.node_info->node->name.len)] = {
        ns.raw.at(0), ns.weighted.at(0)};
  }
  return out;
}

struct ScoreCase {
  std::string name;
  std::string args;
  std::string cluster;
  std::string pod;
  Scores want;

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class PodTopologySpreadScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(PodTopologySpreadScoreTest, ScoresAndNormalizes) {
  const ScoreCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName},
                c.args.empty() ? "" : "[profile.plugin_config.PodTopologySpread]\n" + c.args);
  h.AddObjects(c.cluster);
  EXPECT_EQ(RunScore(h, c.pod), c.want);
}

const std::string kHost = "kubernetes.io/hostname";

// Hosts h1..h3 labelled with their hostname and 2, 1, 0 matching pods; h4 without the label.
std::string Hosts() {
  return NodeYaml("h1", "{kubernetes.io/hostname: h1, zone: a}") +
         NodeYaml("h2", "{kubernetes.io/hostname: h2, zone: a}") +
         NodeYaml("h3", "{kubernetes.io/hostname: h3, zone: b}") + NodeYaml("h4", "{}") +
         PodYaml("x1", "{foo: x}", "h1") + PodYaml("x2", "{foo: x}", "h1") +
         PodYaml("x3", "{foo: x}", "h2");
}

// Controller-owned pods for default constraints: h1 2, h3 1; h4 carries a hostname but no zone.
std::string OwnedHosts() {
  return NodeYaml("h1", "{kubernetes.io/hostname: h1, topology.kubernetes.io/zone: a}") +
         NodeYaml("h2", "{kubernetes.io/hostname: h2, topology.kubernetes.io/zone: a}") +
         NodeYaml("h3", "{kubernetes.io/hostname: h3, topology.kubernetes.io/zone: b}") +
         NodeYaml("h4", "{kubernetes.io/hostname: h4}") +
         PodYaml("w1", "{app: web}", "h1", "", kOwnedByWeb) +
         PodYaml("w2", "{app: web}", "h1", "", kOwnedByWeb) +
         PodYaml("w3", "{app: web}", "h3", "", kOwnedByWeb) +
         // Same labels, other controller: not counted.
         PodYaml("o1", "{app: web}", "h2", "",
                 ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: other, uid: "
                 "rs-o, controller: true}]");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PodTopologySpreadScoreTest,
    ::testing::Values(
        // Hostname: counted per node, weight log(3 hosts + 2); h4 misses the key and is ignored
        // (0). h1 2*1.609 -> 3, h2 -> 2, h3 0; normalised 100*(3+0-s)/3.
        ScoreCase{"Hostname",
                  "",
                  Hosts(),
                  PodYaml("p", "{foo: x}", "", Spread({C(1, kHost, "ScheduleAnyway")})),
                  {{"h1", {3, 0}}, {"h2", {2, 33}}, {"h3", {0, 100}}, {"h4", {0, 0}}}},
        // maxSkew - 1 is added per constraint: h1 3.2+2 -> 5, h2 3.6 -> 4, h3 2.
        ScoreCase{"MaxSkewAddsToEveryNode",
                  "",
                  Hosts(),
                  PodYaml("p", "{foo: x}", "", Spread({C(3, kHost, "ScheduleAnyway")})),
                  {{"h1", {5, 40}}, {"h2", {4, 60}}, {"h3", {2, 100}}, {"h4", {0, 0}}}},
        // All scores 0: every node gets 100 (ignored ones 0).
        ScoreCase{"AllZero",
                  "",
                  Hosts(),
                  PodYaml("p", "{foo: x}", "",
                          Spread({C(1, kHost, "ScheduleAnyway", "{matchLabels: {none: y}}")})),
                  {{"h1", {0, 100}}, {"h2", {0, 100}}, {"h3", {0, 100}}, {"h4", {0, 0}}}},
        // Zone key: weight log(2 + 2); zone a 3 pods, zone b 0: a 4.16 -> 4, b 0.
        ScoreCase{"Zone",
                  "",
                  Hosts(),
                  PodYaml("p", "{foo: x}", "", Spread({C(1, "zone", "ScheduleAnyway")})),
                  {{"h1", {4, 0}}, {"h2", {4, 0}}, {"h3", {0, 100}}, {"h4", {0, 0}}}},
        // System defaults (hostname maxSkew 3, zone maxSkew 5) for a controller-owned pod; h4
        // without a zone is still scored (the empty zone is a domain): zones a, b, "" -> log 5,
        // hosts 4 -> log 6. h1 2*1.79+2 + 2*1.61+4 = 12.8 -> 13; h2 2 + 7.22 -> 9;
        // h3 3.79 + 5.61 -> 9; h4 2. Normalised 100*(13+2-s)/13.
        ScoreCase{"SystemDefaults",
                  "",
                  OwnedHosts(),
                  PodYaml("p", "{app: web}", "", "", kOwnedByWeb),
                  {{"h1", {13, 15}}, {"h2", {9, 46}}, {"h3", {9, 46}}, {"h4", {2, 100}}}},
        // List defaults require every key: h4 (no zone) is ignored. Zone weight log(2+2):
        // h1 2*1.386 -> 3, h2 2.77 -> 3, h3 1.39 -> 1.
        ScoreCase{"ListDefaults",
                  "defaulting_type = \"List\"\ndefault_constraints = [{ max_skew = 1, "
                  "topology_key = \"topology.kubernetes.io/zone\", when_unsatisfiable = "
                  "\"ScheduleAnyway\" }]\n",
                  OwnedHosts(),
                  PodYaml("p", "{app: web}", "", "", kOwnedByWeb),
                  {{"h1", {3, 33}}, {"h2", {3, 33}}, {"h3", {1, 100}}, {"h4", {0, 0}}}},
        // A pod with constraints of its own does not get the defaults (none soft here).
        ScoreCase{
            "OwnConstraintsReplaceDefaults",
            "",
            OwnedHosts(),
            PodYaml("p", "{app: web}", "",
                    Spread({C(5, "topology.kubernetes.io/zone", "DoNotSchedule")}), kOwnedByWeb),
            {{"h1", {0, 0}}, {"h2", {0, 0}}, {"h3", {0, 0}}}},
        // No controller: upstream's nothing-selects-this-pod case, no default constraints.
        ScoreCase{"NoControllerNoDefaults",
                  "",
                  OwnedHosts(),
                  PodYaml("p", "{app: web}", ""),
                  {{"h1", {0, 0}}, {"h2", {0, 0}}, {"h3", {0, 0}}, {"h4", {0, 0}}}}));

// Default constraints with DoNotSchedule (List) are filtered on, selecting the same controller.
TEST(PodTopologySpreadDefaults, ListDefaultsFilterByController) {
  Harness h;
  h.OnlyPlugins({kName},
                "[profile.plugin_config.PodTopologySpread]\ndefaulting_type = \"List\"\n"
                "default_constraints = [{ max_skew = 1, topology_key = \"zone\", "
                "when_unsatisfiable = \"DoNotSchedule\" }]\n");
  h.AddObjects(NodeYaml("a1", "{zone: a}") + NodeYaml("b1", "{zone: b}") +
               PodYaml("w1", "{app: web}", "a1", "", kOwnedByWeb));
  EXPECT_EQ(RunFilter(h, PodYaml("p", "{app: web}", "", "", kOwnedByWeb)),
            (Verdicts{{"a1", kSkew}, {"b1", ""}}));
  // Another controller's pod: nothing of its own is placed yet, both fit.
  EXPECT_EQ(RunFilter(h, PodYaml("q", "{app: web}", "", "",
                                 ", ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, "
                                 "name: web, uid: ss, controller: true}]")),
            (Verdicts{{"a1", ""}, {"b1", ""}}));
  // No controller: no defaults at all.
  EXPECT_EQ(RunFilter(h, PodYaml("r", "{app: web}", "")), (Verdicts{{"a1", ""}, {"b1", ""}}));
}

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

struct ArgsCase {
  std::string name;
  std::string args;
  std::string error;

  friend void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }
};

class PodTopologySpreadArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(PodTopologySpreadArgsTest, RefusesBadArguments) {
  const ArgsCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.PodTopologySpread]\n" + c.args + "\n");
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.error));
    EXPECT_THAT(e.what(), HasSubstr("test.toml:"));
  }
}

std::string List(const std::string& item) {
  return "defaulting_type = \"List\"\ndefault_constraints = [" + item + "]";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PodTopologySpreadArgsTest,
    ::testing::Values(
        ArgsCase{"UnknownKey", "defaultConstraints = []",
                 "plugin_config.PodTopologySpread.defaultConstraints: unknown key"},
        ArgsCase{"BadDefaultingType", "defaulting_type = \"Cluster\"",
                 "plugin_config.PodTopologySpread.defaulting_type: unsupported value \"Cluster\""},
        ArgsCase{"SystemWithList",
                 "default_constraints = [{ max_skew = 1, topology_key = \"zone\", "
                 "when_unsatisfiable = \"DoNotSchedule\" }]",
                 "plugin_config.PodTopologySpread.default_constraints: must be empty when "
                 "defaulting_type is \"System\""},
        ArgsCase{"ZeroMaxSkew",
                 List("{ max_skew = 0, topology_key = \"zone\", when_unsatisfiable = "
                      "\"DoNotSchedule\" }"),
                 "default_constraints[0].max_skew: must be at least 1, got 0"},
        ArgsCase{"MaxSkewNotInteger",
                 List("{ max_skew = \"1\", topology_key = \"zone\", when_unsatisfiable = "
                      "\"DoNotSchedule\" }"),
                 "default_constraints[0].max_skew: expected an integer"},
        ArgsCase{"EmptyKey",
                 List("{ max_skew = 1, topology_key = \"\", when_unsatisfiable = "
                      "\"DoNotSchedule\" }"),
                 "default_constraints[0].topology_key: can not be empty"},
        ArgsCase{"BadKey",
                 List("{ max_skew = 1, topology_key = \"a b\", when_unsatisfiable = "
                      "\"DoNotSchedule\" }"),
                 "default_constraints[0].topology_key: \"a b\" is not a valid label key"},
        ArgsCase{"MissingKey", List("{ max_skew = 1, when_unsatisfiable = \"DoNotSchedule\" }"),
                 "default_constraints[0].topology_key: is required"},
        ArgsCase{"BadAction",
                 List("{ max_skew = 1, topology_key = \"zone\", when_unsatisfiable = \"Never\" }"),
                 "default_constraints[0].when_unsatisfiable: unsupported value \"Never\""},
        ArgsCase{"UnknownConstraintKey",
                 List("{ max_skew = 1, topology_key = \"zone\", when_unsatisfiable = "
                      "\"DoNotSchedule\", label_selector = {} }"),
                 "default_constraints[0].label_selector: unknown key"},
        ArgsCase{"Duplicate",
                 List("{ max_skew = 1, topology_key = \"zone\", when_unsatisfiable = "
                      "\"DoNotSchedule\" }, { max_skew = 2, topology_key = \"zone\", "
                      "when_unsatisfiable = \"DoNotSchedule\" }"),
                 "default_constraints[1]: duplicate constraint for topology_key \"zone\""},
        ArgsCase{"NotATable", "default_constraints = 3",
                 "default_constraints: expected an array"}));

TEST(PodTopologySpreadArgs, AcceptsListAndSystem) {
  for (const std::string args :
       {"defaulting_type = \"System\"", "defaulting_type = \"List\"",
        "defaulting_type = \"List\"\ndefault_constraints = [{ max_skew = 2, topology_key = "
        "\"topology.kubernetes.io/zone\", when_unsatisfiable = \"ScheduleAnyway\" }]"}) {
    Harness h;
    h.OnlyPlugins({kName}, "[profile.plugin_config.PodTopologySpread]\n" + args + "\n");
    EXPECT_NO_THROW(h.framework()) << args;
  }
}

TEST(PodTopologySpreadEvents, RegistersPodAndNodeEvents) {
  Harness h;
  h.OnlyPlugins({kName});
  for (const auto& [plugin, regs] : h.framework().EventsToRegister()) {
    if (plugin != kName) continue;
    ASSERT_EQ(regs.size(), 2u);
    EXPECT_EQ(regs[0].event.resource, SCHEDHOST_RESOURCE_POD);
    EXPECT_EQ(regs[0].event.actions,
              SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_POD_LABEL | SCHEDHOST_ACTION_DELETE);
    EXPECT_EQ(regs[1].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(regs[1].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_DELETE |
                                         SCHEDHOST_ACTION_UPDATE_NODE_LABEL |
                                         SCHEDHOST_ACTION_UPDATE_NODE_TAINT);
    return;
  }
  FAIL() << "no registrations for " << kName;
}

// The hints skip changes that cannot alter a count the waiting pod was judged by.
TEST(PodTopologySpreadEvents, HintsSkipIrrelevantChanges) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("a1", "{zone: a}") + NodeYaml("n0", "{other: x}"));
  framework::Framework& fw = h.framework();
  const framework::PluginInstance* pi = fw.FindPlugin(kName);
  ASSERT_NE(pi, nullptr);
  std::vector<queue::EventRegistration> regs;
  for (const auto& [plugin, r] : fw.EventsToRegister()) {
    if (plugin == kName) regs = r;
  }
  ASSERT_EQ(regs.size(), 2u);
  auto waiting = h.MakePod(PodYaml("p", "{foo: x}", "", kZone1));
  auto pod_hint = [&](const std::string& yaml) {
    auto changed = h.MakePod(yaml);
    schedhost_event_object obj{changed->view(), nullptr, nullptr};
    return regs[0].hint(pi->instance, waiting->view(), &regs[0].event, nullptr, &obj);
  };
  EXPECT_EQ(pod_hint(PodYaml("m", "{foo: x}", "a1")), SCHEDHOST_QUEUE);
  EXPECT_EQ(pod_hint(PodYaml("o", "{bar: x}", "a1")), SCHEDHOST_QUEUE_SKIP);
  EXPECT_EQ(pod_hint(PodYaml("u", "{foo: x}", "")), SCHEDHOST_QUEUE_SKIP);
  EXPECT_EQ(pod_hint("apiVersion: v1\nkind: Pod\nmetadata: {name: n, namespace: other, labels: "
                     "{foo: x}}\nspec: {nodeName: a1, containers: [{name: c}]}\n"),
            SCHEDHOST_QUEUE_SKIP);
  const auto& snap = h.snapshot();
  for (size_t i = 0; i < snap.size(); ++i) {
    const schedhost_node_view* node = snap.views()[i]->node;
    schedhost_event_object obj{nullptr, node, nullptr};
    const int32_t got = regs[1].hint(pi->instance, waiting->view(), &regs[1].event, nullptr, &obj);
    // upstream: only a node carrying the constraint's key can matter.
    EXPECT_EQ(got, snap.at(i).node()->name() == "a1" ? SCHEDHOST_QUEUE : SCHEDHOST_QUEUE_SKIP);
  }
}

}  // namespace
}  // namespace schedhost::plugins
