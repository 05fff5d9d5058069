#include "host/model/pod_pack.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "host/model/pod.h"

namespace schedhost::model {
namespace {

Quantity Q(std::string_view text) { return *Quantity::Parse(text); }

LabelSelector Selector(const std::string& key) {
  LabelSelector s;
  s.match_labels = {{key, "v-" + key}, {"z", ""}};
  s.match_expressions = {{key, SelectorOp::kNotIn, {"a", "b"}}, {"e", SelectorOp::kExists, {}}};
  return s;
}

PodAffinityTerm Term(const std::string& key) {
  PodAffinityTerm t;
  t.label_selector = Selector(key);
  t.namespaces = {"ns1", "ns2"};
  t.topology_key = "topology.kubernetes.io/zone";
  t.namespace_selector = Selector("team");
  t.match_label_keys = {"pod-template-hash"};
  t.mismatch_label_keys = {"tenant"};
  return t;
}

Container FullContainer(const std::string& name) {
  Container c;
  c.name = name;
  c.image = "registry.example.com/" + name + ":1.2.3";
  c.resources.requests = {{"cpu", Q("1500m")}, {"memory", Q("1Gi")}, {"example.com/gpu", Q("2")}};
  c.resources.limits = {{"cpu", Q("2")}, {"memory", Q("1.5e9")}};
  c.ports = {{"http", 80, 8080, Protocol::kTCP, "10.0.0.1"}, {"dns", 53, 0, Protocol::kUDP, ""}};
  c.restart_policy = "Always";
  return c;
}

// FullPod sets every field PodData has to something other than its default.
PodData FullPod() {
  PodData d;
  d.metadata.name = "a-pod-name-longer-than-fifteen";
  d.metadata.namespace_name = "team-a";
  d.metadata.uid = "0f8e2c1a-9c55-4a57-9f0e-3a3c0c2f7b11";
  d.metadata.labels = {{"app", "web"}, {"tier", "front"}};
  d.metadata.annotations = {{"note", "kept"}};
  d.metadata.owner_references = {{"apps/v1", "ReplicaSet", "web-1", "uid-rs", true}};
  d.metadata.creation_timestamp_ns = 1'700'000'000'123'456'789;
  d.metadata.resource_version = 42;
  PodSpec& s = d.spec;
  s.scheduler_name = "my-scheduler";
  s.node_name = "";
  s.priority = -7;
  s.priority_class_name = "low";
  s.preemption_policy = PreemptionPolicy::kNever;
  s.node_selector = {{"disk", "ssd"}, {"kubernetes.io/os", "linux"}};
  Affinity a;
  NodeSelectorTerm nterm;
  nterm.match_expressions = {{"zone", SelectorOp::kIn, {"z1", "z2"}}};
  nterm.match_fields = {{"metadata.name", SelectorOp::kNotIn, {"n9"}}};
  a.node_affinity.emplace();
  a.node_affinity->required = NodeSelector{{nterm, NodeSelectorTerm{}}};
  a.node_affinity->preferred = {{17, nterm}};
  a.pod_affinity = PodAffinity{{Term("app")}, {{30, Term("db")}}};
  a.pod_anti_affinity = PodAffinity{{Term("web")}, {}};
  s.affinity = std::move(a);
  s.tolerations = {{"k", TolerationOperator::kEqual, "v", TaintEffect::kNoExecute, -5},
                   {"", TolerationOperator::kExists, "", TaintEffect::kNone, std::nullopt}};
  TopologySpreadConstraint tsc;
  tsc.max_skew = 5;
  tsc.topology_key = "kubernetes.io/hostname";
  tsc.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
  tsc.label_selector = Selector("app");
  tsc.min_domains = 3;
  tsc.node_affinity_policy = NodeInclusionPolicy::kIgnore;
  tsc.node_taints_policy = NodeInclusionPolicy::kHonor;
  tsc.match_label_keys = {"pod-template-hash", "version"};
  s.topology_spread_constraints = {tsc, TopologySpreadConstraint{}};
  s.containers = {FullContainer("app"), FullContainer("sidecar-logger")};
  s.init_containers = {FullContainer("init")};
  s.init_containers[0].restart_policy = "";
  s.overhead = {{"cpu", Q("250m")}};
  s.scheduling_gates = {"example.com/wait", "example.com/quota"};
  d.status.nominated_node_name = "node-7";
  return d;
}

// Formats are not part of Quantity's ==: compare the texts too.
void ExpectSameTexts(const ResourceList& want, const ResourceList& got) {
  ASSERT_EQ(want.size(), got.size());
  for (const auto& [name, q] : want) {
    ASSERT_TRUE(got.contains(name)) << name;
    EXPECT_EQ(q.ToString(), got.at(name).ToString()) << name;
  }
}

TEST(PodPackTest, EveryFieldSurvivesPackingAndUnpacking) {
  const PodData want = FullPod();
  const std::string bytes =
      internal::PackPodState(want.spec, want.status, want.metadata.owner_references);
  PodSpec spec;
  spec.node_name = "overwritten";
  PodStatus status;
  std::vector<OwnerReference> owners(3);
  owners[0].kind = "Kept";
  internal::UnpackPodState(bytes, spec, status, owners);
  EXPECT_EQ(spec, want.spec);
  EXPECT_EQ(status, want.status);
  // Only the apiVersions are packed: the rest of an owner is in the view.
  ASSERT_EQ(owners.size(), 1U);
  EXPECT_EQ(owners[0].api_version, "apps/v1");
  EXPECT_EQ(owners[0].kind, "Kept");
  EXPECT_EQ(internal::PackedOwnerPart(bytes), std::string_view(bytes).substr(0, 9));
  ExpectSameTexts(want.spec.containers[0].resources.requests,
                  spec.containers[0].resources.requests);
  ExpectSameTexts(want.spec.containers[0].resources.limits, spec.containers[0].resources.limits);
  ExpectSameTexts(want.spec.overhead, spec.overhead);
  // A pod with every field set packs into a fraction of its decoded size.
  EXPECT_LT(bytes.size(), 1200U);
}

TEST(PodPackTest, ExtremeNumbersAndEmptyPodsRoundTrip) {
  PodData d;
  d.spec.priority = INT32_MIN;
  Container c;
  c.resources.requests = {
      {"big", Quantity::FromUnits(INT64_MAX)}, {"neg", Quantity::FromMilli(-1)}, {"tiny", Q("1n")}};
  c.ports = {{"", INT32_MAX, INT32_MIN, Protocol::kSCTP, ""}};
  d.spec.containers = {c};
  d.spec.tolerations = {{"", TolerationOperator::kExists, "", TaintEffect::kNone, INT64_MIN}};
  for (const PodData& pod : {d, PodData{}}) {
    PodSpec spec;
    PodStatus status;
    std::vector<OwnerReference> owners;
    internal::UnpackPodState(internal::PackPodState(pod.spec, pod.status, {}), spec, status,
                             owners);
    EXPECT_TRUE(owners.empty());
    EXPECT_EQ(spec, pod.spec);
    EXPECT_EQ(status, pod.status);
  }
}

TEST(PodPackTest, QuantitiesAndResourceNamesPackSmallAndComeBackExactly) {
  PodData d;
  Container c;
  c.resources.requests = {
      {"cpu", Q("100m")},
      {"memory", Q("500Mi")},
      {"example.com/gpu", Q("2")},
      {"ephemeral-storage", Q("1e3")},
      {"pods", Q("0")},
      {"huge", Quantity::FromNano(-(__int128{1} << 120), Quantity::Format::kDecimalSI)},
      {"round", Quantity::FromNano(__int128{100'000'000'000'000'000} * 1'000'000'000'000'000'000,
                                   Quantity::Format::kDecimalSI)}};
  d.spec.containers = {c};
  const std::string bytes = internal::PackPodState(d.spec, d.status, {});
  PodSpec spec;
  PodStatus status;
  std::vector<OwnerReference> owners;
  internal::UnpackPodState(bytes, spec, status, owners);
  EXPECT_EQ(spec, d.spec);
  ExpectSameTexts(c.resources.requests, spec.containers[0].resources.requests);

  // A usual container's requests: a byte per name, a few per round quantity.
  Container usual;
  usual.resources.requests = {{"cpu", Q("100m")}, {"memory", Q("500Mi")}};
  PodSpec small;
  small.containers = {usual};
  PodSpec none;
  none.containers = {Container{}};
  const size_t with = internal::PackPodState(small, {}, {}).size();
  const size_t without = internal::PackPodState(none, {}, {}).size();
  EXPECT_LE(with - without, 10U);
}

TEST(PodPackTest, TruncatedOrTrailingBytesAreRefused) {
  const PodData d = FullPod();
  const std::string bytes = internal::PackPodState(d.spec, d.status, d.metadata.owner_references);
  PodSpec spec;
  PodStatus status;
  std::vector<OwnerReference> owners;
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(
        internal::UnpackPodState(std::string_view(bytes).substr(0, cut), spec, status, owners),
        std::logic_error)
        << cut;
  }
  EXPECT_THROW(internal::UnpackPodState(bytes + '\0', spec, status, owners), std::logic_error);
}

TEST(PodPackTest, AMadePodDecodesOnlyWhenAskedAndGivesBackItsData) {
  PodData want = FullPod();
  auto pod = Pod::Make(want);
  ApplyPodDefaults(want);
  EXPECT_FALSE(pod->decoded());
  // The accessors and the view answer without decoding.
  EXPECT_EQ(pod->name(), want.metadata.name);
  EXPECT_EQ(pod->scheduler_name(), "my-scheduler");
  EXPECT_EQ(pod->nominated_node_name(), "node-7");
  EXPECT_EQ(pod->priority(), -7);
  EXPECT_EQ(pod->DecodeMetadata(), want.metadata);
  EXPECT_EQ(pod->uid(), want.metadata.uid);
  EXPECT_EQ(pod->namespace_name(), "team-a");
  EXPECT_EQ(pod->Key(), "team-a/a-pod-name-longer-than-fifteen");
  EXPECT_EQ(pod->labels(), want.metadata.labels);
  EXPECT_EQ(pod->creation_timestamp_ns(), want.metadata.creation_timestamp_ns);
  EXPECT_EQ(pod->resource_version(), 42U);
  const schedhost_pod_view* v = pod->view();
  EXPECT_EQ(std::string_view(v->priority_class_name.data, v->priority_class_name.len), "low");
  ASSERT_EQ(v->images_len, 3U);
  EXPECT_EQ(std::string_view(v->images[0].data, v->images[0].len),
            "registry.example.com/init:1.2.3");
  ASSERT_EQ(v->host_ports_len, 2U);  // one per app container with a host port
  EXPECT_EQ(std::string_view(v->host_ports[0].host_ip.data, v->host_ports[0].host_ip.len),
            "10.0.0.1");
  ASSERT_EQ(v->scheduling_gates_len, 2U);
  EXPECT_EQ(std::string_view(v->scheduling_gates[1].data, v->scheduling_gates[1].len),
            "example.com/quota");
  EXPECT_FALSE(pod->decoded());

  // Many threads asking at once all get the one decoded copy.
  std::vector<const PodData*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = &pod->data(); });
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(pod->decoded());
  for (const PodData* d : seen) EXPECT_EQ(d, seen[0]);
  EXPECT_EQ(*seen[0], want);
}

TEST(PodPackTest, MetadataComparesWithoutDecodingAndIgnoresOnlyTheVersion) {
  const PodData base = FullPod();
  auto pod = Pod::Make(base);
  const auto changed = [&](auto edit) {
    PodData d = base;
    edit(d);
    return Pod::Make(std::move(d));
  };
  const auto same_but_version = changed([](PodData& d) { d.metadata.resource_version = 43; });
  EXPECT_TRUE(pod->SameMetadataExceptVersion(*same_but_version));
  const auto spec_only = changed([](PodData& d) { d.spec.priority = 9; });
  EXPECT_TRUE(pod->SameMetadataExceptVersion(*spec_only));
  EXPECT_FALSE(pod->SameSpecAndStatus(*spec_only));

  const std::vector<std::function<void(PodData&)>> edits = {
      [](PodData& d) { d.metadata.name += "x"; },
      [](PodData& d) { d.metadata.namespace_name = "team-b"; },
      [](PodData& d) { d.metadata.uid = "0f8e2c1a-9c55-4a57-9f0e-3a3c0c2f7b12"; },
      [](PodData& d) { d.metadata.labels[1].second = "back"; },
      [](PodData& d) { d.metadata.labels.pop_back(); },
      [](PodData& d) { d.metadata.annotations[0].second = "changed"; },
      [](PodData& d) { d.metadata.annotations.clear(); },
      [](PodData& d) { d.metadata.owner_references[0].api_version = "apps/v2"; },
      [](PodData& d) { d.metadata.owner_references[0].uid = "uid-rs-2"; },
      [](PodData& d) { d.metadata.owner_references[0].controller = false; },
      [](PodData& d) {
        d.metadata.owner_references.push_back({"v1", "Node", "n", "u", false});
      },
      [](PodData& d) { d.metadata.creation_timestamp_ns += 1; },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    const auto other = changed(edits[i]);
    EXPECT_FALSE(pod->SameMetadataExceptVersion(*other)) << "edit " << i;
    EXPECT_FALSE(other->SameMetadataExceptVersion(*pod)) << "edit " << i;
  }
  EXPECT_TRUE(pod->SameLabels(*changed([](PodData& d) { d.metadata.annotations.clear(); })));
  EXPECT_FALSE(pod->SameLabels(*changed([](PodData& d) { d.metadata.labels.pop_back(); })));
  EXPECT_FALSE(pod->decoded());
}

TEST(PodPackTest, LabelsComeBackInKeyOrderWhateverTheirInternedIds) {
  // Interned in the reverse of their text order, so the view (by id) orders them the other way.
  PodData first;
  first.metadata.labels = {{"pod-pack-test.example/zz", "2"}};
  auto intern_first = Pod::Make(first);
  PodData d;
  d.metadata.labels = {{"pod-pack-test.example/aa", "1"}, {"pod-pack-test.example/zz", "2"}};
  auto pod = Pod::Make(d);
  const schedhost_pod_view* v = pod->view();
  ASSERT_EQ(v->labels.len, 2U);
  EXPECT_LT(v->labels.items[0].key, v->labels.items[1].key);
  EXPECT_EQ(pod->labels(), d.metadata.labels);
  EXPECT_EQ(pod->data().metadata.labels, d.metadata.labels);
}

TEST(PodPackTest, EmptyStringsInTheViewAreNeverNull) {
  auto pod = Pod::Make(PodData{});
  const schedhost_pod_view* v = pod->view();
  EXPECT_NE(v->nominated_node_name.data, nullptr);
  EXPECT_EQ(v->nominated_node_name.len, 0U);
  EXPECT_NE(v->priority_class_name.data, nullptr);
  EXPECT_NE(v->node_name.data, nullptr);
}

}  // namespace
}  // namespace schedhost::model
