// VolumeZone through the real framework over a real snapshot, with PersistentVolumeClaims,
// PersistentVolumes and StorageClasses in the host's object store. Behaviour follows upstream's
// volumezone plugin: the bound volumes' zone and region labels (beta and GA keys, "__"-separated
// sets) against the node's, a node without such labels passing, unbound WaitForFirstConsumer
// claims skipped, upstream's messages for a missing claim, class or volume, and its events and
// queueing hints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/config/config_tree.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/model/decode.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;
using framework::testing::Registrations;
using ::testing::HasSubstr;

constexpr char kName[] = "VolumeZone";
constexpr char kConflict[] = "node(s) had no available volume zone";

constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";
constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kBetaRegion[] = "failure-domain.beta.kubernetes.io/region";

std::string Labels(const std::map<std::string, std::string>& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    out += (out.size() > 1 ? ", " : "") + k + ": \"" + v + "\"";
  }
  return out + "}";
}

std::string NodeYaml(const std::string& name, const std::map<std::string, std::string>& labels) {
  return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: " +
         Labels(labels) + "}\nstatus: {allocatable: {cpu: \"4\", memory: 4Gi, pods: \"10\"}}\n";
}

std::string PvYaml(const std::string& name, const std::map<std::string, std::string>& labels) {
  return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
         ", labels: " + Labels(labels) +
         "}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}\n";
}

// PvcYaml renders a claim of namespace default; `spec` is its spec as a flow mapping.
std::string PvcYaml(const std::string& name, const std::string& spec) {
  return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: default}\nspec: " + spec + "\n";
}

// ScYaml renders a StorageClass; an empty `mode` leaves volumeBindingMode out.
std::string ScYaml(const std::string& name, const std::string& mode) {
  return "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " + name +
         "}\nprovisioner: example.com/disk\n" +
         (mode.empty() ? "" : "volumeBindingMode: " + mode + "\n");
}

// Bound renders a claim bound to volume `pv`.
std::string Bound(const std::string& name, const std::string& pv) {
  return PvcYaml(name, "{volumeName: " + pv + ", accessModes: [ReadWriteOnce]}");
}

// Five nodes: three with GA zone and region labels, one with the beta labels only, one without
// any topology label.
std::string Nodes() {
  return NodeYaml("west-a", {{kZone, "us-west1-a"}, {kRegion, "us-west1"}}) +
         NodeYaml("west-b", {{kZone, "us-west1-b"}, {kRegion, "us-west1"}}) +
         NodeYaml("east-c", {{kZone, "us-east1-c"}, {kRegion, "us-east1"}}) +
         NodeYaml("beta-a", {{kBetaZone, "us-west1-a"}, {kBetaRegion, "us-west1"}}) +
         NodeYaml("bare", {{"disk", "ssd"}});
}

std::string Storage() {
  return PvYaml("pv-zone-a", {{kZone, "us-west1-a"}}) + Bound("zone-a", "pv-zone-a") +
         PvYaml("pv-region", {{kRegion, "us-west1"}}) + Bound("region", "pv-region") +
         PvYaml("pv-multi", {{kZone, "us-west1-b__us-east1-c"}}) + Bound("multi", "pv-multi") +
         PvYaml("pv-spaced", {{kZone, " us-west1-a __us-east1-c "}}) +
         Bound("spaced", "pv-spaced") +
         PvYaml("pv-beta-a", {{kBetaZone, "us-west1-a"}}) + Bound("beta-a", "pv-beta-a") +
         PvYaml("pv-both", {{kZone, "us-west1-a"}, {kRegion, "us-west1"}}) +
         Bound("both", "pv-both") +
         PvYaml("pv-malformed", {{kZone, "us-west1-a__"}}) + Bound("malformed", "pv-malformed") +
         PvYaml("pv-plain", {{"tier", "gold"}}) + Bound("plain", "pv-plain") +
         Bound("lost", "pv-gone") +
         ScYaml("wait", "WaitForFirstConsumer") + ScYaml("immediate", "Immediate") +
         ScYaml("unset", "") +
         PvcYaml("unbound-wait", "{storageClassName: wait}") +
         PvcYaml("unbound-immediate", "{storageClassName: immediate}") +
         PvcYaml("unbound-unset", "{storageClassName: unset}") +
         PvcYaml("unbound-gone-class", "{storageClassName: gone}") +
         PvcYaml("unbound-no-class", "{accessModes: [ReadWriteOnce]}");
}

// Load adds nodes to the snapshot and the storage objects to the object store.
void Load(Harness& h, const std::string& yaml) {
  std::vector<model::GenericObject> generic;
  h.AddObjects(model::DecodeManifests(yaml, "test", model::DecodeLimits{}, &generic));
  // The manifest decoder defaults volumeBindingMode as the API server does; the class "unset"
  // keeps it unset, for the plugin's check of a class without one.
  for (model::GenericObject& o : generic) {
    if (o.kind != "StorageClass" || o.name != "unset") continue;
    auto tree = std::make_shared<model::ValueNode>(*o.tree);
    std::erase_if(tree->children,
                  [](const model::ValueNode& c) { return c.key == "volumeBindingMode"; });
    o.tree = std::move(tree);
  }
  h.AddGeneric(generic);
}

// PodYaml renders a pod whose volumes are `volumes`, flow mappings (none: no volumes).
std::string PodYaml(const std::vector<std::string>& volumes,
                    const std::string& namespace_name = "default") {
  std::string yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " +
                     namespace_name + "}\nspec:\n  containers: [{name: c, image: busybox}]\n";
  if (!volumes.empty()) yaml += "  volumes:\n";
  for (const auto& v : volumes) yaml += "  - " + v + "\n";
  return yaml;
}

// Claims renders a pod using the claims `names`, as volumes v0, v1, ...
std::string Claims(const std::vector<std::string>& names,
                   const std::string& namespace_name = "default") {
  std::vector<std::string> volumes;
  for (size_t i = 0; i < names.size(); ++i) {
    volumes.push_back("{name: v" + std::to_string(i) + ", persistentVolumeClaim: {claimName: \"" +
                      names[i] + "\"}}");
  }
  return PodYaml(volumes, namespace_name);
}

// Verdicts is each node's Filter outcome: "" passes, anything else is the one reason.
using Verdicts = std::map<std::string, std::string>;

Verdicts RunFilter(Harness& h, const std::string& pod) {
  Verdicts out;
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    if (r.status.ok()) {
      out[r.node] = "";
      continue;
    }
    EXPECT_EQ(r.status.code, Code::kUnschedulableAndUnresolvable)
        << r.node << ": " << r.status.Message();
    EXPECT_EQ(r.status.reasons.size(), 1u) << r.node;
    EXPECT_EQ(r.status.plugin, kName) << r.node;
    out[r.node] = r.status.Message();
  }
  return out;
}

// PreFilterSkips runs PreFilter alone and tells whether VolumeZone answered Skip.
bool PreFilterSkips(Harness& h, const std::string& pod) {
  auto p = h.MakePod(pod);
  h.snapshot();
  framework::CycleState state;
  h.framework().RunPreFilterPlugins(state, p->view());  // RunFilter checks its status
  return state.skip_filter_plugins.count(kName) == 1;
}

Verdicts Each(const std::string& verdict) {
  Verdicts out;
  for (const char* n : {"west-a", "west-b", "east-c", "beta-a", "bare"}) out[n] = verdict;
  return out;
}

// ---------------------------------------------------------------------------------------------
// PreFilter and Filter
// ---------------------------------------------------------------------------------------------

struct FilterCase {
  std::string name;
  std::string pod;
  Verdicts want;
  bool skip = false;  // PreFilter answers Skip

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class VolumeZoneFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(VolumeZoneFilterTest, MatchesVolumeTopology) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, Nodes() + Storage());
  EXPECT_EQ(RunFilter(h, c.pod), c.want);
  EXPECT_EQ(PreFilterSkips(h, c.pod), c.skip);
}

const Verdicts kZoneA = {{"west-a", ""},
                         {"west-b", kConflict},
                         {"east-c", kConflict},
                         {"beta-a", kConflict},
                         {"bare", ""}};

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeZoneFilterTest,
    ::testing::Values(
        // A GA zone label on the volume: the node needs the GA key (beta-a has only the beta
        // one); a node without any zone or region label passes.
        FilterCase{"ZoneLabel", Claims({"zone-a"}), kZoneA},
        FilterCase{"RegionLabel",
                   Claims({"region"}),
                   {{"west-a", ""},
                    {"west-b", ""},
                    {"east-c", kConflict},
                    {"beta-a", kConflict},
                    {"bare", ""}}},
        FilterCase{"MultiZoneValue",
                   Claims({"multi"}),
                   {{"west-a", kConflict},
                    {"west-b", ""},
                    {"east-c", ""},
                    {"beta-a", kConflict},
                    {"bare", ""}}},
        FilterCase{"MultiZoneValueIsTrimmed",
                   Claims({"spaced"}),
                   {{"west-a", ""},
                    {"west-b", kConflict},
                    {"east-c", ""},
                    {"beta-a", kConflict},
                    {"bare", ""}}},
        // A beta key on the volume matches the node's beta key, or else its GA key.
        FilterCase{"BetaVolumeLabelMatchesGaNodeLabel",
                   Claims({"beta-a"}),
                   {{"west-a", ""},
                    {"west-b", kConflict},
                    {"east-c", kConflict},
                    {"beta-a", ""},
                    {"bare", ""}}},
        FilterCase{"ZoneAndRegionBothApply", Claims({"both"}), kZoneA},
        FilterCase{"EveryVolumeApplies",
                   Claims({"region", "multi"}),
                   {{"west-a", kConflict},
                    {"west-b", ""},
                    {"east-c", kConflict},
                    {"beta-a", kConflict},
                    {"bare", ""}}},
        // A value with an empty element is ignored, as upstream's LabelZonesToSet refuses it.
        FilterCase{"MalformedLabelIgnored", Claims({"malformed"}), Each(""), true},
        FilterCase{"VolumeWithoutTopology", Claims({"plain"}), Each(""), true},
        FilterCase{"UnboundWaitForFirstConsumerSkipped", Claims({"unbound-wait"}), Each(""),
                   true},
        FilterCase{"UnboundWaitBesideBound", Claims({"unbound-wait", "zone-a"}), kZoneA},
        FilterCase{"PodWithoutVolumes", PodYaml({}), Each(""), true},
        FilterCase{"PodWithoutClaims", PodYaml({"{name: scratch, emptyDir: {}}"}), Each(""),
                   true},
        // Upstream's VolumeZone reads persistentVolumeClaim volumes only.
        FilterCase{"EphemeralVolumeIgnored",
                   PodYaml({"{name: e, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                            "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}"}),
                   Each(""), true},
        // PreFilter failures: every node gets upstream's message.
        FilterCase{"MissingClaim", Claims({"nope"}),
                   Each("persistentvolumeclaim \"nope\" not found")},
        FilterCase{"ClaimOfAnotherNamespace", Claims({"zone-a"}, "other"),
                   Each("persistentvolumeclaim \"zone-a\" not found")},
        FilterCase{"EmptyClaimName", Claims({""}), Each("PersistentVolumeClaim had no name")},
        FilterCase{"MissingVolume", Claims({"lost"}),
                   Each("persistentvolume \"pv-gone\" not found")},
        FilterCase{"UnboundImmediate", Claims({"unbound-immediate"}),
                   Each("PersistentVolume had no name")},
        FilterCase{"UnboundModeNotSet", Claims({"unbound-unset"}),
                   Each("VolumeBindingMode not set for StorageClass \"unset\"")},
        FilterCase{"UnboundWithoutClass", Claims({"unbound-no-class"}),
                   Each("PersistentVolumeClaim had no pv name and storageClass name")},
        FilterCase{"UnboundClassMissing", Claims({"unbound-gone-class"}),
                   Each("storageclass.storage.k8s.io \"gone\" not found")},
        FilterCase{"FirstFailingVolumeDecides", Claims({"zone-a", "lost", "nope"}),
                   Each("persistentvolume \"pv-gone\" not found")}),
    [](const auto& info) { return info.param.name; });

TEST(VolumeZoneFilter, ScheduleFailureMessage) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, NodeYaml("west-b", {{kZone, "us-west1-b"}}) +
              NodeYaml("east-c", {{kZone, "us-east1-c"}}) + Storage());
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(Claims({"zone-a"})), &failure), "");
  EXPECT_EQ(failure, "0/2 nodes are available: 2 node(s) had no available volume zone.");
  EXPECT_EQ(h.Schedule(*h.MakePod(Claims({"multi"}))), "west-b");
}

// Filter without PreFilter's state computes the volumes' topology itself, as upstream.
TEST(VolumeZoneFilter, WithoutPreFilterState) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, Nodes() + Storage());
  const auto& inst = h.Plugin(kName);
  const auto views = h.snapshot().views();
  auto filter = [&](const std::string& pod_yaml) {
    auto pod = h.MakePod(pod_yaml);
    Verdicts out;
    for (const schedhost_node_info_view* v : views) {
      framework::CycleState state;  // PreFilter did not run
      framework::StatusSink sink;
      const int32_t rc = inst.desc->filter(inst.instance, state.abi(), pod->view(), v, sink.abi());
      const framework::Status s = framework::ToStatus(rc, sink, inst.name_text);
      out[std::string(v->node->name.data, v->node->name.len)] = s.ok() ? "" : s.Message();
    }
    return out;
  };
  EXPECT_EQ(filter(Claims({"zone-a"})), kZoneA);
  EXPECT_EQ(filter(Claims({"nope"})), Each("persistentvolumeclaim \"nope\" not found"));
  EXPECT_EQ(filter(PodYaml({})), Each(""));
}

TEST(VolumeZoneArgs, TakesNoArguments) {
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.VolumeZone]\nzones = 1\n");
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("plugin_config.VolumeZone.zones"));
  }
  Harness empty;
  empty.OnlyPlugins({kName}, "[profile.plugin_config.VolumeZone]\n");
  EXPECT_NO_THROW(empty.framework());
}

// ---------------------------------------------------------------------------------------------
// Cluster events and queueing hints
// ---------------------------------------------------------------------------------------------

TEST(VolumeZoneEvents, RegistersUpstreamsEvents) {
  Harness h;
  h.OnlyPlugins({kName});
  const auto regs = Registrations(h.Plugin(kName));
  ASSERT_EQ(regs.size(), 4u);
  EXPECT_EQ(regs[0].event.resource, SCHEDHOST_KIND_EVENT(2));  // StorageClass
  EXPECT_EQ(regs[0].event.actions, SCHEDHOST_ACTION_ADD);
  EXPECT_NE(regs[0].hint, nullptr);
  EXPECT_EQ(regs[1].event.resource, SCHEDHOST_RESOURCE_NODE);
  EXPECT_EQ(regs[1].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL);
  EXPECT_EQ(regs[1].hint, nullptr);
  EXPECT_EQ(regs[2].event.resource, SCHEDHOST_KIND_EVENT(0));  // PersistentVolumeClaim
  EXPECT_EQ(regs[2].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE);
  EXPECT_NE(regs[2].hint, nullptr);
  EXPECT_EQ(regs[3].event.resource, SCHEDHOST_KIND_EVENT(1));  // PersistentVolume
  EXPECT_EQ(regs[3].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE);
  EXPECT_NE(regs[3].hint, nullptr);
  // The framework accepts them: every kind index is declared.
  EXPECT_NO_THROW(h.framework().EventsToRegister());
}

struct HintCase {
  std::string name;
  int32_t resource;    // which registration
  std::string pod;     // the rejected pod
  std::string before;  // the old object's manifest ("" : none, an addition)
  std::string after;   // the new object's manifest ("" : none)
  int32_t want;

  friend void PrintTo(const HintCase& c, std::ostream* os) { *os << c.name; }
};

class VolumeZoneHintTest : public ::testing::TestWithParam<HintCase> {};

TEST_P(VolumeZoneHintTest, QueuesOnlyHelpfulChanges) {
  const HintCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration* reg = nullptr;
  for (const auto& r : Registrations(inst)) {
    if (r.event.resource == c.resource) reg = &r;
  }
  ASSERT_NE(reg, nullptr);
  ASSERT_NE(reg->hint, nullptr);
  auto tree = [](const std::string& yaml) -> std::shared_ptr<const model::ValueNode> {
    if (yaml.empty()) return nullptr;
    std::vector<model::GenericObject> generic;
    model::DecodeManifests(yaml, "test", model::DecodeLimits{}, &generic);
    if (generic.size() != 1) throw std::runtime_error("one object expected");
    return generic[0].tree;
  };
  const auto before = tree(c.before);
  const auto after = tree(c.after);
  schedhost_event_object old_obj{nullptr, nullptr, config::AsAbi(before.get())};
  schedhost_event_object new_obj{nullptr, nullptr, config::AsAbi(after.get())};
  schedhost_cluster_event event{c.resource, before == nullptr ? SCHEDHOST_ACTION_ADD
                                                              : SCHEDHOST_ACTION_UPDATE};
  auto pod = h.MakePod(c.pod);
  EXPECT_EQ(reg->hint(inst.instance, pod->view(), &event, &old_obj, &new_obj), c.want);
}

constexpr int32_t kClaimEvent = SCHEDHOST_KIND_EVENT(0);
constexpr int32_t kVolumeEvent = SCHEDHOST_KIND_EVENT(1);
constexpr int32_t kClassEvent = SCHEDHOST_KIND_EVENT(2);

std::string OtherNamespaceClaim() {
  return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: ns1}\n"
         "spec: {volumeName: pv}\n";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeZoneHintTest,
    ::testing::Values(
        HintCase{"WaitForFirstConsumerClassAdded", kClassEvent, Claims({"data"}), "",
                 ScYaml("sc", "WaitForFirstConsumer"), SCHEDHOST_QUEUE},
        HintCase{"ImmediateClassAdded", kClassEvent, Claims({"data"}), "",
                 ScYaml("sc", "Immediate"), SCHEDHOST_QUEUE_SKIP},
        HintCase{"ClassWithoutModeAdded", kClassEvent, Claims({"data"}), "", ScYaml("sc", ""),
                 SCHEDHOST_QUEUE_SKIP},
        HintCase{"NoClassInTheEvent", kClassEvent, Claims({"data"}), "", "", SCHEDHOST_QUEUE},
        HintCase{"ClaimOfThePodAdded", kClaimEvent, Claims({"other", "data"}), "",
                 Bound("data", "pv"), SCHEDHOST_QUEUE},
        HintCase{"ClaimOfThePodBound", kClaimEvent, Claims({"data"}),
                 PvcYaml("data", "{storageClassName: wait}"), Bound("data", "pv"),
                 SCHEDHOST_QUEUE},
        HintCase{"OtherClaimAdded", kClaimEvent, Claims({"data"}), "", Bound("other", "pv"),
                 SCHEDHOST_QUEUE_SKIP},
        HintCase{"ClaimOfAnotherNamespace", kClaimEvent, Claims({"data"}), "",
                 OtherNamespaceClaim(), SCHEDHOST_QUEUE_SKIP},
        HintCase{"PodWithoutClaims", kClaimEvent, PodYaml({}), "", Bound("data", "pv"),
                 SCHEDHOST_QUEUE_SKIP},
        HintCase{"VolumeAdded", kVolumeEvent, Claims({"data"}), "",
                 PvYaml("pv", {{kBetaZone, "us-west1-b"}}), SCHEDHOST_QUEUE},
        HintCase{"VolumeZoneChanged", kVolumeEvent, Claims({"data"}),
                 PvYaml("pv", {{kBetaZone, "us-west1-a"}}),
                 PvYaml("pv", {{kBetaZone, "us-west1-b"}}), SCHEDHOST_QUEUE},
        HintCase{"VolumeTopologyLabelAdded", kVolumeEvent, Claims({"data"}),
                 PvYaml("pv", {{kBetaZone, "us-west1-a"}}),
                 PvYaml("pv", {{kBetaZone, "us-west1-a"}, {kZone, "zone"}}), SCHEDHOST_QUEUE},
        HintCase{"VolumeOtherLabelChanged", kVolumeEvent, Claims({"data"}),
                 PvYaml("pv", {{kBetaZone, "us-west1-a"}, {kZone, "zone"}}),
                 PvYaml("pv", {{kBetaZone, "us-west1-a"}, {kZone, "zone"}, {"tier", "gold"}}),
                 SCHEDHOST_QUEUE_SKIP},
        HintCase{"VolumeSameZoneSetReordered", kVolumeEvent, Claims({"data"}),
                 PvYaml("pv", {{kZone, "a__b"}}), PvYaml("pv", {{kZone, "b__a"}}),
                 SCHEDHOST_QUEUE_SKIP},
        HintCase{"VolumeMalformedLabelFixed", kVolumeEvent, Claims({"data"}),
                 PvYaml("pv", {{kZone, "a__"}}), PvYaml("pv", {{kZone, "a"}}), SCHEDHOST_QUEUE}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace schedhost::plugins
