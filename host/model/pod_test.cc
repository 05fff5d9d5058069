#include "host/model/pod.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "host/model/interner.h"

namespace schedhost::model {
namespace {

Quantity Q(std::string_view text) { return *Quantity::Parse(text); }

Container MakeContainer(std::string name, ResourceList requests, ResourceList limits = {}) {
  Container c;
  c.name = std::move(name);
  c.resources.requests = std::move(requests);
  c.resources.limits = std::move(limits);
  return c;
}

int64_t Find(std::span<const schedhost_resource> list, std::string_view name) {
  schedhost_id id = Interner::Global().Lookup(name);
  for (const auto& r : list) {
    if (r.name == id) return r.value;
  }
  return -1;
}

TEST(PodRequestsTest, EffectiveRequestsFollowUpstream) {
  struct Case {
    std::string name;
    std::vector<Container> containers;
    std::vector<Container> init_containers;
    ResourceList overhead;
    int64_t cpu;  // -1: absent
    int64_t memory;
    int64_t non_zero_cpu;
    int64_t non_zero_memory;
  };
  const int64_t mi = 1024 * 1024;
  Container sidecar = MakeContainer("sidecar", {{"cpu", Q("200m")}});
  sidecar.restart_policy = "Always";
  const Case cases[] = {
      {"no requests: non-zero defaults only",
       {MakeContainer("a", {})},
       {},
       {},
       -1,
       -1,
       100,
       200 * mi},
      {"sum of containers",
       {MakeContainer("a", {{"cpu", Q("250m")}, {"memory", Q("64Mi")}}),
        MakeContainer("b", {{"cpu", Q("0.5")}, {"memory", Q("128Mi")}})},
       {},
       {},
       750,
       192 * mi,
       750,
       192 * mi},
      {"explicit zero is not replaced by the default",
       {MakeContainer("a", {{"cpu", Q("0")}})},
       {},
       {},
       0,
       -1,
       0,
       200 * mi},
      {"default applies per container that misses the resource",
       {MakeContainer("a", {{"cpu", Q("1")}}), MakeContainer("b", {{"memory", Q("1Gi")}})},
       {},
       {},
       1000,
       1024 * mi,
       1100,
       1024 * mi + 200 * mi},
      {"init container larger than the sum wins",
       {MakeContainer("a", {{"cpu", Q("100m")}}), MakeContainer("b", {{"cpu", Q("100m")}})},
       {MakeContainer("init", {{"cpu", Q("1")}, {"memory", Q("10Mi")}})},
       {},
       1000,
       10 * mi,
       1000,
       200 * mi + 200 * mi},
      {"init container smaller than the sum loses",
       {MakeContainer("a", {{"cpu", Q("2")}})},
       {MakeContainer("init", {{"cpu", Q("1")}})},
       {},
       2000,
       -1,
       2000,
       200 * mi},
      {"overhead is added after the max",
       {MakeContainer("a", {{"cpu", Q("100m")}})},
       {MakeContainer("init", {{"cpu", Q("500m")}})},
       {{"cpu", Q("50m")}, {"memory", Q("1Mi")}},
       550,
       1 * mi,
       550,
       201 * mi},
      {"limits default the requests",
       {MakeContainer("a", {}, {{"cpu", Q("300m")}, {"memory", Q("1Gi")}})},
       {},
       {},
       300,
       1024 * mi,
       300,
       1024 * mi},
      {"sidecars run beside the app and before later init containers",
       {MakeContainer("a", {{"cpu", Q("1")}})},
       {sidecar, MakeContainer("init", {{"cpu", Q("1")}})},
       {},
       1200,
       -1,
       1200,
       400 * mi},
      {"fractions are summed exactly before rounding",
       {MakeContainer("a", {{"cpu", Q("0.5m")}}), MakeContainer("b", {{"cpu", Q("0.5m")}})},
       {},
       {},
       1,
       -1,
       1,
       400 * mi},
  };
  for (const Case& c : cases) {
    PodData data;
    data.metadata.name = "p";
    data.spec.containers = c.containers;
    data.spec.init_containers = c.init_containers;
    data.spec.overhead = c.overhead;
    auto pod = Pod::Make(std::move(data));
    EXPECT_EQ(Find(pod->requests(), "cpu"), c.cpu) << c.name;
    EXPECT_EQ(Find(pod->requests(), "memory"), c.memory) << c.name;
    EXPECT_EQ(pod->non_zero_milli_cpu(), c.non_zero_cpu) << c.name;
    EXPECT_EQ(pod->non_zero_memory(), c.non_zero_memory) << c.name;
    EXPECT_EQ(pod->view()->non_zero_milli_cpu, c.non_zero_cpu) << c.name;
    EXPECT_EQ(pod->view()->requests.len, pod->requests().size()) << c.name;
  }
}

TEST(PodRequestsTest, RequestsAreSortedByIdWithCpuInMillicores) {
  PodData data;
  data.metadata.name = "p";
  data.spec.containers = {MakeContainer("a", {{"nvidia.com/gpu", Q("2")},
                                              {"memory", Q("1Ki")},
                                              {"cpu", Q("1.5")},
                                              {"ephemeral-storage", Q("1G")}})};
  auto pod = Pod::Make(std::move(data));
  const schedhost_resources& r = pod->view()->requests;
  ASSERT_EQ(r.len, 4u);
  EXPECT_EQ(r.items[0].name, SCHEDHOST_ID_CPU);
  EXPECT_EQ(r.items[0].value, 1500);
  EXPECT_EQ(r.items[1].name, SCHEDHOST_ID_MEMORY);
  EXPECT_EQ(r.items[1].value, 1024);
  EXPECT_EQ(r.items[2].name, SCHEDHOST_ID_EPHEMERAL_STORAGE);
  EXPECT_EQ(r.items[2].value, 1000000000);
  EXPECT_EQ(Interner::Global().Str(r.items[3].name), "nvidia.com/gpu");
  EXPECT_EQ(r.items[3].value, 2);
}

TEST(PodTest, DefaultsAndUids) {
  PodData data;
  data.metadata.name = "web";
  data.spec.containers = {MakeContainer("a", {})};
  auto a = Pod::Make(data);
  auto b = Pod::Make(data);
  EXPECT_EQ(a->namespace_name(), "default");
  EXPECT_EQ(a->data().spec.scheduler_name, "default-scheduler");
  EXPECT_EQ(a->uid().size(), 36u);
  EXPECT_NE(a->uid(), b->uid());
  EXPECT_EQ(a->view()->namespace_id, SCHEDHOST_ID_NAMESPACE_DEFAULT);
  EXPECT_EQ(a->priority(), 0);
  EXPECT_EQ(a->view()->preemption_policy, SCHEDHOST_PREEMPT_LOWER_PRIORITY);
  data.metadata.uid = "given";
  data.spec.priority = 7;
  auto c = Pod::Make(data);
  EXPECT_EQ(c->uid(), "given");
  EXPECT_EQ(c->view()->priority, 7);
  std::set<std::string> uids;
  for (int i = 0; i < 1000; ++i) uids.insert(GenerateUid());
  EXPECT_EQ(uids.size(), 1000u);
}

TEST(PodTest, ViewRoundTripAndForeignViews) {
  PodData data;
  data.metadata.name = "p";
  data.spec.containers = {MakeContainer("a", {})};
  auto pod = Pod::Make(std::move(data));
  EXPECT_EQ(Pod::FromView(pod->view()), pod.get());
  EXPECT_EQ(pod->view()->struct_size, sizeof(schedhost_pod_view));
  EXPECT_EQ(Pod::FromView(nullptr), nullptr);
  struct {
    schedhost_pod_view view{};
    uint64_t magic = 0;
    const void* owner = nullptr;
  } foreign;
  EXPECT_EQ(Pod::FromView(&foreign.view), nullptr);
}

TEST(PodTest, ViewFieldsAreFilled) {
  Interner& in = Interner::Global();
  PodData data;
  data.metadata.name = "web-1";
  data.metadata.namespace_name = "prod";
  data.metadata.labels = {{"zz-last", "1"}, {"app", "web"}, {"app", "web2"}};
  data.metadata.annotations = {{"b", "2"}, {"a", "1"}};
  data.metadata.owner_references = {{"apps/v1", "ReplicaSet", "web", "rs-uid", true}};
  data.metadata.creation_timestamp_ns = 42;
  data.metadata.resource_version = 9;
  data.spec.node_name = "node-1";
  data.spec.priority_class_name = "high";
  data.spec.preemption_policy = PreemptionPolicy::kNever;
  data.spec.node_selector = {{"disk", "ssd"}, {"arch", "amd64"}};
  data.spec.tolerations = {{"", TolerationOperator::kExists, "", TaintEffect::kNone, {}},
                           {"k", TolerationOperator::kEqual, "v", TaintEffect::kNoExecute, -5}};
  TopologySpreadConstraint spread;
  spread.max_skew = 2;
  spread.topology_key = "topology.kubernetes.io/zone";
  spread.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
  spread.node_taints_policy = NodeInclusionPolicy::kHonor;
  spread.match_label_keys = {"pod-template-hash"};
  data.spec.topology_spread_constraints = {spread};
  Container c = MakeContainer("app", {});
  c.image = "nginx:1.25";
  c.ports = {{"http", 80, 8080, Protocol::kTCP, ""},
             {"dns", 53, 0, Protocol::kUDP, ""},
             {"q", 9000, 9000, Protocol::kSCTP, "10.0.0.1"}};
  Container init = MakeContainer("init", {});
  init.image = "busybox";
  data.spec.containers = {c};
  data.spec.init_containers = {init};
  data.spec.scheduling_gates = {"example.com/gate"};
  data.status.nominated_node_name = "node-2";
  auto pod = Pod::Make(std::move(data));
  const schedhost_pod_view* v = pod->view();

  EXPECT_EQ(std::string_view(v->name.data, v->name.len), "web-1");
  EXPECT_EQ(std::string_view(v->namespace_name.data, v->namespace_name.len), "prod");
  EXPECT_EQ(in.Str(v->namespace_id), "prod");
  EXPECT_EQ(std::string_view(v->node_name.data, v->node_name.len), "node-1");
  EXPECT_EQ(std::string_view(v->nominated_node_name.data, v->nominated_node_name.len), "node-2");
  EXPECT_EQ(std::string_view(v->scheduler_name.data, v->scheduler_name.len), "default-scheduler");
  EXPECT_EQ(std::string_view(v->priority_class_name.data, v->priority_class_name.len), "high");
  EXPECT_EQ(v->preemption_policy, SCHEDHOST_PREEMPT_NEVER);
  EXPECT_EQ(v->creation_timestamp_ns, 42);
  EXPECT_EQ(v->resource_version, 9u);

  // Labels: normalized (last duplicate wins) and sorted by key id.
  ASSERT_EQ(v->labels.len, 2u);
  EXPECT_LT(v->labels.items[0].key, v->labels.items[1].key);
  EXPECT_EQ(*FindLabel(pod->labels(), "app"), "web2");
  ASSERT_EQ(v->annotations_len, 2u);
  EXPECT_EQ(std::string_view(v->annotations[0].key.data, v->annotations[0].key.len), "a");
  ASSERT_EQ(v->owner_refs_len, 1u);
  EXPECT_EQ(v->owner_refs[0].controller, 1);
  EXPECT_EQ(std::string_view(v->owner_refs[0].kind.data, v->owner_refs[0].kind.len), "ReplicaSet");
  ASSERT_EQ(v->node_selector.len, 2u);
  EXPECT_LT(v->node_selector.items[0].key, v->node_selector.items[1].key);
  EXPECT_EQ(v->affinity, nullptr);

  ASSERT_EQ(v->tolerations_len, 2u);
  EXPECT_EQ(v->tolerations[0].key, 0u);
  EXPECT_EQ(v->tolerations[0].op, SCHEDHOST_TOLERATION_EXISTS);
  EXPECT_EQ(v->tolerations[0].toleration_seconds, -1);
  EXPECT_EQ(v->tolerations[1].effect, SCHEDHOST_EFFECT_NO_EXECUTE);
  EXPECT_EQ(v->tolerations[1].toleration_seconds, 0);
  EXPECT_EQ(in.Str(v->tolerations[1].value), "v");

  ASSERT_EQ(v->spread_constraints_len, 1u);
  EXPECT_EQ(v->spread_constraints[0].max_skew, 2);
  EXPECT_EQ(v->spread_constraints[0].topology_key, SCHEDHOST_ID_LABEL_ZONE);
  EXPECT_EQ(v->spread_constraints[0].when_unsatisfiable, SCHEDHOST_SCHEDULE_ANYWAY);
  EXPECT_EQ(v->spread_constraints[0].min_domains, 0);
  EXPECT_EQ(v->spread_constraints[0].label_selector, nullptr);
  EXPECT_EQ(v->spread_constraints[0].node_affinity_policy, SCHEDHOST_POLICY_UNSET);
  EXPECT_EQ(v->spread_constraints[0].node_taints_policy, SCHEDHOST_POLICY_HONOR);
  ASSERT_EQ(v->spread_constraints[0].match_label_keys_len, 1u);
  EXPECT_EQ(in.Str(v->spread_constraints[0].match_label_keys[0]), "pod-template-hash");

  ASSERT_EQ(v->host_ports_len, 2u);
  EXPECT_EQ(v->host_ports[0].port, 8080);
  EXPECT_EQ(v->host_ports[0].protocol, SCHEDHOST_ID_PROTOCOL_TCP);
  EXPECT_EQ(v->host_ports[1].protocol, SCHEDHOST_ID_PROTOCOL_SCTP);
  EXPECT_EQ(std::string_view(v->host_ports[1].host_ip.data, v->host_ports[1].host_ip.len),
            "10.0.0.1");
  ASSERT_EQ(v->images_len, 2u);
  EXPECT_EQ(std::string_view(v->images[0].data, v->images[0].len), "busybox");
  EXPECT_EQ(std::string_view(v->images[1].data, v->images[1].len), "nginx:1.25");
  ASSERT_EQ(v->scheduling_gates_len, 1u);
  EXPECT_EQ(std::string_view(v->scheduling_gates[0].data, v->scheduling_gates[0].len),
            "example.com/gate");
}

TEST(PodTest, AffinityAndSelectorsInTheView) {
  Interner& in = Interner::Global();
  PodData data;
  data.metadata.name = "p";
  data.spec.containers = {MakeContainer("a", {})};
  Affinity affinity;
  NodeAffinity node;
  NodeSelectorTerm term;
  term.match_expressions = {{"kubernetes.io/hostname", SelectorOp::kNotIn, {"n1", "n2"}},
                            {"gpu-count", SelectorOp::kGt, {"3"}}};
  term.match_fields = {{"metadata.name", SelectorOp::kIn, {"n3"}}};
  node.required = NodeSelector{{term}};
  node.preferred = {{40, term}};
  affinity.node_affinity = node;
  PodAffinityTerm pod_term;
  LabelSelector selector;
  selector.match_labels = {{"app", "web"}};
  selector.match_expressions = {{"tier", SelectorOp::kExists, {}}};
  pod_term.label_selector = selector;
  pod_term.topology_key = "kubernetes.io/hostname";
  pod_term.namespaces = {"a", "b"};
  pod_term.namespace_selector = LabelSelector{};  // Present but empty: matches every namespace.
  pod_term.match_label_keys = {"version"};
  PodAffinity anti;
  anti.required = {pod_term};
  anti.preferred = {{70, pod_term}};
  affinity.pod_anti_affinity = anti;
  data.spec.affinity = affinity;
  auto pod = Pod::Make(std::move(data));
  const schedhost_affinity* a = pod->view()->affinity;
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->has_required_node_affinity, 1);
  ASSERT_EQ(a->required_node_terms_len, 1u);
  const schedhost_node_selector_term& t = a->required_node_terms[0];
  ASSERT_EQ(t.match_expressions_len, 2u);
  EXPECT_EQ(t.match_expressions[0].key, SCHEDHOST_ID_LABEL_HOSTNAME);
  EXPECT_EQ(t.match_expressions[0].op, SCHEDHOST_OP_NOT_IN);
  ASSERT_EQ(t.match_expressions[0].values_len, 2u);
  EXPECT_EQ(in.Str(t.match_expressions[0].values[1]), "n2");
  EXPECT_EQ(t.match_expressions[1].op, SCHEDHOST_OP_GT);
  EXPECT_EQ(in.Str(t.match_expressions[1].values[0]), "3");
  ASSERT_EQ(t.match_fields_len, 1u);
  EXPECT_EQ(t.match_fields[0].key, SCHEDHOST_ID_FIELD_METADATA_NAME);
  ASSERT_EQ(a->preferred_node_terms_len, 1u);
  EXPECT_EQ(a->preferred_node_terms[0].weight, 40);
  EXPECT_EQ(a->pod_affinity.required_len, 0u);
  ASSERT_EQ(a->pod_anti_affinity.required_len, 1u);
  const schedhost_pod_affinity_term& pt = a->pod_anti_affinity.required[0];
  EXPECT_EQ(pt.weight, 0);
  EXPECT_EQ(pt.topology_key, SCHEDHOST_ID_LABEL_HOSTNAME);
  ASSERT_NE(pt.label_selector, nullptr);
  // matchLabels first (as In with one value), then matchExpressions.
  ASSERT_EQ(pt.label_selector->len, 2u);
  EXPECT_EQ(in.Str(pt.label_selector->requirements[0].key), "app");
  EXPECT_EQ(pt.label_selector->requirements[0].op, SCHEDHOST_OP_IN);
  ASSERT_EQ(pt.label_selector->requirements[0].values_len, 1u);
  EXPECT_EQ(in.Str(pt.label_selector->requirements[0].values[0]), "web");
  EXPECT_EQ(pt.label_selector->requirements[1].op, SCHEDHOST_OP_EXISTS);
  EXPECT_EQ(pt.label_selector->requirements[1].values_len, 0u);
  ASSERT_NE(pt.namespace_selector, nullptr);
  EXPECT_EQ(pt.namespace_selector->len, 0u);
  ASSERT_EQ(pt.namespaces_len, 2u);
  EXPECT_EQ(in.Str(pt.namespaces[0]), "a");
  ASSERT_EQ(pt.match_label_keys_len, 1u);
  EXPECT_EQ(pt.mismatch_label_keys_len, 0u);
  ASSERT_EQ(a->pod_anti_affinity.preferred_len, 1u);
  EXPECT_EQ(a->pod_anti_affinity.preferred[0].weight, 70);
}

TEST(PodTest, ConcurrentMakeInternsConsistently) {
  // Pods built on several threads at once share one interner; equal strings get equal ids.
  constexpr int kThreads = 4;
  std::vector<std::vector<std::shared_ptr<const Pod>>> pods(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        PodData data;
        data.metadata.name = "p" + std::to_string(i);
        data.metadata.labels = {{"concurrent-key-" + std::to_string(i), "v" + std::to_string(t)}};
        data.spec.containers = {MakeContainer("c", {{"vendor.io/r" + std::to_string(i), Q("1")}})};
        pods[t].push_back(Pod::Make(std::move(data)));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < 200; ++i) {
    const schedhost_id key = pods[0][i]->view()->labels.items[0].key;
    for (int t = 1; t < kThreads; ++t) {
      EXPECT_EQ(pods[t][i]->view()->labels.items[0].key, key);
      EXPECT_EQ(pods[t][i]->requests()[0].name, pods[0][i]->requests()[0].name);
    }
    EXPECT_EQ(Interner::Global().Str(key), "concurrent-key-" + std::to_string(i));
  }
}

}  // namespace
}  // namespace schedhost::model
