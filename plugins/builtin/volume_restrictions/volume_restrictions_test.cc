// VolumeRestrictions through the real framework over a real snapshot, with
// PersistentVolumeClaims in the host's object store. Behaviour follows upstream's
// volumerestrictions plugin: the in-tree disk conflicts (gcePersistentDisk, awsElasticBlockStore,
// rbd, iscsi and their read-only exceptions) against the node's pods, a ReadWriteOncePod claim
// in use by a pod of the snapshot on any node, AddPod and RemovePod moving that use, upstream's
// message for a missing claim, Skip for a pod with nothing to check, and its events and queueing
// hints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
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

constexpr char kName[] = "VolumeRestrictions";
constexpr char kDisk[] = "node(s) had no available disk";
constexpr char kRwop[] =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod";

std::string NodeYaml(const std::string& name) {
  return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus: {allocatable: {cpu: \"4\", memory: 4Gi, pods: \"10\"}}\n";
}

// PvcYaml renders a claim with access modes `modes` (a flow sequence).
std::string PvcYaml(const std::string& name, const std::string& modes,
                    const std::string& namespace_name = "default") {
  return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: " + namespace_name + "}\nspec: {accessModes: " + modes +
         ", resources: {requests: {storage: 1Gi}}}\n";
}

// PodYaml renders a pod whose volumes are `volumes`, flow mappings (none: no volumes); a
// non-empty `node` binds it.
std::string PodYaml(const std::string& name, const std::vector<std::string>& volumes,
                    const std::string& node = "", const std::string& namespace_name = "default") {
  std::string yaml = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                     ", namespace: " + namespace_name + ", uid: " + namespace_name + "-" + name +
                     "}\nspec:\n  containers: [{name: c, image: busybox}]\n";
  if (!node.empty()) yaml += "  nodeName: " + node + "\n";
  if (!volumes.empty()) yaml += "  volumes:\n";
  for (size_t i = 0; i < volumes.size(); ++i) {
    yaml += "  - {name: v" + std::to_string(i) + ", " + volumes[i] + "}\n";
  }
  return yaml;
}

// The volume sources, as flow-mapping entries.
std::string Claim(const std::string& name) {
  return "persistentVolumeClaim: {claimName: \"" + name + "\"}";
}
std::string Gce(const std::string& pd, bool read_only = false) {
  return "gcePersistentDisk: {pdName: " + pd + (read_only ? ", readOnly: true" : "") + "}";
}
std::string Aws(const std::string& id, bool read_only = false) {
  return "awsElasticBlockStore: {volumeID: " + id + (read_only ? ", readOnly: true" : "") + "}";
}
// Rbd: `pool` empty leaves it out (the API's default, "rbd").
std::string Rbd(const std::string& monitors, const std::string& pool, const std::string& image,
                bool read_only = false) {
  return "rbd: {monitors: " + monitors + (pool.empty() ? "" : ", pool: " + pool) +
         ", image: " + image + ", fsType: ext4" + (read_only ? ", readOnly: true" : "") + "}";
}
std::string Iscsi(const std::string& iqn, bool read_only = false) {
  return "iscsi: {targetPortal: \"127.0.0.1:3260\", iqn: \"" + iqn + "\", lun: 0, fsType: ext4" +
         (read_only ? ", readOnly: true" : "") + "}";
}

constexpr char kIqn[] = "iqn.2016-12.server:storage.target01";
constexpr char kOtherIqn[] = "iqn.2017-12.server:storage.target01";

// The cluster: n1 holds a pod of each in-tree disk (read-write) and one of a ReadWriteOnce
// claim; n2 holds read-only disks and the user of ReadWriteOncePod claim rwop-1; n3 holds the
// user of rwx, whose modes include ReadWriteOncePod. rwop-2 is ReadWriteOncePod and unused; other/rwop-1 is ReadWriteOncePod in another namespace
// (unused there: default/rwop-1's user does not count for it).
std::string Cluster() {
  return NodeYaml("n1") + NodeYaml("n2") + NodeYaml("n3") +
         PodYaml("gce", {Gce("pd-rw")}, "n1") + PodYaml("aws", {Aws("vol-rw")}, "n1") +
         PodYaml("rbd", {Rbd("[a, b]", "foo", "bar")}, "n1") +
         PodYaml("rbd-default-pool", {Rbd("[m]", "", "img")}, "n1") +
         PodYaml("iscsi", {Iscsi(kIqn)}, "n1") + PodYaml("rwo-user", {Claim("rwo")}, "n1") +
         PodYaml("gce-ro", {Gce("pd-ro", true)}, "n2") +
         PodYaml("aws-ro", {Aws("vol-ro", true)}, "n2") +
         PodYaml("rbd-ro", {Rbd("[x]", "foo", "ro", true)}, "n2") +
         PodYaml("iscsi-ro", {Iscsi(kOtherIqn, true)}, "n2") +
         PodYaml("rwop-user", {Claim("rwop-1")}, "n2") + PodYaml("rwx-user", {Claim("rwx")}, "n3");
}

std::string Claims() {
  return PvcYaml("rwop-1", "[ReadWriteOncePod]") + PvcYaml("rwop-2", "[ReadWriteOncePod]") +
         PvcYaml("rwo", "[ReadWriteOnce]") + PvcYaml("rwx", "[ReadWriteMany, ReadWriteOncePod]") +
         PvcYaml("rwop-1", "[ReadWriteOncePod]", "other");
}

// Load adds nodes and bound pods to the snapshot and the claims to the object store.
void Load(Harness& h, const std::string& yaml) {
  std::vector<model::GenericObject> generic;
  h.AddObjects(model::DecodeManifests(yaml, "test", model::DecodeLimits{}, &generic));
  h.AddGeneric(generic);
}

void LoadCluster(Harness& h) {
  h.OnlyPlugins({kName});
  Load(h, Cluster() + Claims());
}

// A verdict is "" (passes) or "<code>: <message>".
std::string Unschedulable(const std::string& message) { return "Unschedulable: " + message; }
std::string Unresolvable(const std::string& message) {
  return "UnschedulableAndUnresolvable: " + message;
}

using Verdicts = std::map<std::string, std::string>;

std::string VerdictOf(const framework::Status& s) {
  if (s.ok()) return "";
  switch (s.code) {
    case Code::kUnschedulable: return Unschedulable(s.Message());
    case Code::kUnschedulableAndUnresolvable: return Unresolvable(s.Message());
    case Code::kError: return "Error: " + s.Message();
    default: return "code " + std::to_string(static_cast<int>(s.code)) + ": " + s.Message();
  }
}

Verdicts RunFilter(Harness& h, const std::string& pod) {
  Verdicts out;
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    if (!r.status.ok()) {
      EXPECT_EQ(r.status.reasons.size(), 1u) << r.node;
      EXPECT_EQ(r.status.plugin, kName) << r.node;
    }
    out[r.node] = VerdictOf(r.status);
  }
  return out;
}

// PreFilterSkips runs PreFilter alone and tells whether VolumeRestrictions answered Skip.
bool PreFilterSkips(Harness& h, const std::string& pod) {
  auto p = h.MakePod(pod);
  h.snapshot();
  framework::CycleState state;
  h.framework().RunPreFilterPlugins(state, p->view());  // RunFilter checks its status
  return state.skip_filter_plugins.count(kName) == 1;
}

Verdicts Each(const std::string& verdict) {
  return {{"n1", verdict}, {"n2", verdict}, {"n3", verdict}};
}
// OnN1 rejects n1 only, for a disk conflict.
Verdicts OnN1() { return {{"n1", Unschedulable(kDisk)}, {"n2", ""}, {"n3", ""}}; }
// OnN2 rejects n2 only, for a disk conflict.
Verdicts OnN2() { return {{"n1", ""}, {"n2", Unschedulable(kDisk)}, {"n3", ""}}; }

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

class VolumeRestrictionsFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(VolumeRestrictionsFilterTest, MatchesUpstream) {
  const FilterCase& c = GetParam();
  Harness h;
  LoadCluster(h);
  EXPECT_EQ(RunFilter(h, c.pod), c.want);
  EXPECT_EQ(PreFilterSkips(h, c.pod), c.skip);
}

FilterCase Case(std::string name, const std::vector<std::string>& volumes, Verdicts want,
                bool skip = false, const std::string& namespace_name = "default") {
  return {std::move(name), PodYaml("p", volumes, "", namespace_name), std::move(want), skip};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeRestrictionsFilterTest,
    ::testing::Values(
        // Nothing to check: Skip.
        Case("PodWithoutVolumes", {}, Each(""), true),
        Case("VolumeWithoutRestrictions", {"emptyDir: {}"}, Each(""), true),
        // ReadWriteOncePod: a pod of the snapshot on any node using the claim rejects every
        // node, Unschedulable (preemption may free it).
        Case("ReadWriteOncePodInUseOnAnotherNode", {Claim("rwop-1")}, Each(Unschedulable(kRwop))),
        Case("ReadWriteOncePodAmongOtherModes", {Claim("rwx")}, Each(Unschedulable(kRwop))),
        Case("ReadWriteOncePodNotInUse", {Claim("rwop-2")}, Each(""), true),
        Case("ReadWriteOnceInUse", {Claim("rwo")}, Each(""), true),
        Case("TwoClaimsOneInUse", {Claim("rwop-2"), Claim("rwop-1")}, Each(Unschedulable(kRwop))),
        Case("ReadWriteOncePodOfAnotherNamespace", {Claim("rwop-1")}, Each(""), true, "other"),
        // A missing claim keeps the pod pending with upstream's lister message, whatever else.
        Case("MissingClaim", {Claim("nope")},
             Each(Unresolvable("persistentvolumeclaim \"nope\" not found"))),
        Case("MissingClaimOfAnotherNamespace", {Claim("rwo")},
             Each(Unresolvable("persistentvolumeclaim \"rwo\" not found")), false, "other"),
        Case("EmptyClaimName", {Claim("")},
             Each(Unresolvable("persistentvolumeclaim \"\" not found"))),
        Case("FirstMissingClaimDecides", {Gce("pd-rw"), Claim("rwo"), Claim("gone"), Claim("x")},
             Each(Unresolvable("persistentvolumeclaim \"gone\" not found"))),
        // gcePersistentDisk: the same pdName conflicts unless both mounts are read-only.
        Case("GceSameDisk", {Gce("pd-rw")}, OnN1()),
        Case("GceSameDiskReadOnlyAgainstReadWrite", {Gce("pd-rw", true)}, OnN1()),
        Case("GceSameDiskReadWriteAgainstReadOnly", {Gce("pd-ro")}, OnN2()),
        Case("GceSameDiskBothReadOnly", {Gce("pd-ro", true)}, Each("")),
        Case("GceOtherDisk", {Gce("pd-other")}, Each("")),
        // awsElasticBlockStore: the same volumeID always conflicts.
        Case("AwsSameVolume", {Aws("vol-rw")}, OnN1()),
        Case("AwsSameVolumeBothReadOnly", {Aws("vol-ro", true)}, OnN2()),
        Case("AwsOtherVolume", {Aws("vol-other")}, Each("")),
        // rbd: the same image and pool with a monitor in common, unless both are read-only.
        Case("RbdSameImage", {Rbd("[b, c]", "foo", "bar")}, OnN1()),
        Case("RbdNoCommonMonitor", {Rbd("[c, d]", "foo", "bar")}, Each("")),
        Case("RbdOtherPool", {Rbd("[a]", "baz", "bar")}, Each("")),
        Case("RbdOtherImage", {Rbd("[a]", "foo", "baz")}, Each("")),
        Case("RbdSameImageBothReadOnly", {Rbd("[x]", "foo", "ro", true)}, Each("")),
        Case("RbdSameImageReadWriteAgainstReadOnly", {Rbd("[x]", "foo", "ro")}, OnN2()),
        Case("RbdDefaultPoolIsRbd", {Rbd("[m]", "rbd", "img")}, OnN1()),
        // iscsi: the same IQN, unless both are read-only.
        Case("IscsiSameIqn", {Iscsi(kIqn)}, OnN1()),
        Case("IscsiSameIqnReadOnlyAgainstReadWrite", {Iscsi(kIqn, true)}, OnN1()),
        Case("IscsiSameIqnBothReadOnly", {Iscsi(kOtherIqn, true)}, Each("")),
        Case("IscsiOtherIqn", {Iscsi("iqn.2018-01.server:other")}, Each("")),
        // Disks of different kinds never conflict, even under the same name.
        Case("DifferentKindsSameName", {Aws("pd-rw"), Gce("vol-rw")}, Each("")),
        // Disks are checked on the node first, then the claim on every node.
        Case("DiskThenReadWriteOncePod", {Gce("pd-rw"), Claim("rwop-1")},
             {{"n1", Unschedulable(kDisk)},
              {"n2", Unschedulable(kRwop)},
              {"n3", Unschedulable(kRwop)}}),
        Case("DiskBesideUnusedClaim", {Claim("rwop-2"), Iscsi(kIqn)}, OnN1()),
        // Disks of another namespace's pods count (a disk is not namespaced).
        Case("DiskOfAnotherNamespace", {Aws("vol-rw")}, OnN1(), false, "other")),
    [](const auto& info) { return info.param.name; });

TEST(VolumeRestrictionsFilter, ScheduleFailureMessages) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, NodeYaml("n1") + NodeYaml("n2") + PodYaml("a", {Gce("pd")}, "n1") +
              PodYaml("b", {Gce("pd")}, "n2") + PodYaml("c", {Claim("rwop-1")}, "n1") + Claims());
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("p", {Gce("pd")})), &failure), "");
  EXPECT_EQ(failure, "0/2 nodes are available: 2 node(s) had no available disk.");
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("q", {Claim("rwop-1")})), &failure), "");
  EXPECT_EQ(failure, std::string("0/2 nodes are available: 2 ") + kRwop + ".");
  EXPECT_NE(h.Schedule(*h.MakePod(PodYaml("r", {Gce("pd2"), Rbd("[m]", "", "i")}))), "");
}

// The profile evaluates claims and the four in-tree disks, so the host lets pods using them
// reach the plugins; other disks still need another plugin.
TEST(VolumeRestrictionsFilter, EvaluatesItsVolumeSources) {
  Harness h;
  h.OnlyPlugins({kName});
  for (const std::string& source : {Claim("c"), Gce("pd"), Aws("vol"), Rbd("[m]", "", "i"),
                                    Iscsi(kIqn)}) {
    const auto why = h.framework().Unevaluated(*h.MakePod(PodYaml("p", {source})));
    EXPECT_FALSE(why.has_value()) << source << ": " << why->Message();
  }
  const auto why =
      h.framework().Unevaluated(*h.MakePod(PodYaml("p", {"azureDisk: {diskName: d}"})));
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(why->Message(), HasSubstr("spec.volumes.azureDisk"));
}

// The snapshot's view of node `name`.
const schedhost_node_info_view* NodeView(Harness& h, std::string_view name) {
  const auto& snap = h.snapshot();
  for (size_t i = 0; i < snap.size(); ++i) {
    if (snap.at(i).node()->name() == name) return snap.views()[i];
  }
  throw std::runtime_error("no node " + std::string(name));
}

// Filter without PreFilter's state checks the disks, then fails as upstream does.
TEST(VolumeRestrictionsFilter, WithoutPreFilterState) {
  Harness h;
  LoadCluster(h);
  const auto& inst = h.Plugin(kName);
  auto filter = [&](const std::string& pod_yaml, std::string_view node) {
    auto pod = h.MakePod(pod_yaml);
    framework::CycleState state;  // PreFilter did not run
    framework::StatusSink sink;
    const int32_t rc =
        inst.desc->filter(inst.instance, state.abi(), pod->view(), NodeView(h, node), sink.abi());
    return VerdictOf(framework::ToStatus(rc, sink, inst.name_text));
  };
  EXPECT_EQ(filter(PodYaml("p", {Gce("pd-rw")}), "n1"), Unschedulable(kDisk));
  EXPECT_EQ(filter(PodYaml("p", {Gce("pd-rw")}), "n3"),
            "Error: cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  EXPECT_EQ(filter(PodYaml("p", {}), "n1"),
            "Error: cannot read \"PreFilterVolumeRestrictions\" from cycleState");
}

TEST(VolumeRestrictionsArgs, TakesNoArguments) {
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.VolumeRestrictions]\nstrict = true\n");
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("plugin_config.VolumeRestrictions.strict"));
  }
  Harness empty;
  empty.OnlyPlugins({kName}, "[profile.plugin_config.VolumeRestrictions]\n");
  EXPECT_NO_THROW(empty.framework());
}

// ---------------------------------------------------------------------------------------------
// AddPod / RemovePod
// ---------------------------------------------------------------------------------------------

class VolumeRestrictionsExtensions : public ::testing::Test {
 protected:
  void SetUp() override { LoadCluster(h_); }

  // Verdicts runs Filter on every node with `state`.
  Verdicts Run(const framework::CycleState& state, const model::Pod& pod) {
    Verdicts out;
    for (const char* n : {"n1", "n2", "n3"}) {
      out[n] = VerdictOf(h_.framework().RunFilterPlugins(state, pod.view(), NodeView(h_, n)));
    }
    return out;
  }
  framework::Status Add(framework::CycleState& state, const model::Pod& pod,
                        const model::Pod& other, std::string_view node) {
    return h_.framework().RunPreFilterExtensionAddPod(state, pod.view(), other.view(),
                                                      NodeView(h_, node));
  }
  framework::Status Remove(framework::CycleState& state, const model::Pod& pod,
                           const model::Pod& other, std::string_view node) {
    return h_.framework().RunPreFilterExtensionRemovePod(state, pod.view(), other.view(),
                                                         NodeView(h_, node));
  }

  Harness h_;
};

TEST_F(VolumeRestrictionsExtensions, RemovingTheUserLiftsTheConflict) {
  auto pod = h_.MakePod(PodYaml("p", {Claim("rwop-1")}));
  auto user = h_.MakePod(PodYaml("rwop-user", {Claim("rwop-1")}, "n2"));
  framework::CycleState state;
  ASSERT_TRUE(h_.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  EXPECT_EQ(Run(state, *pod), Each(Unschedulable(kRwop)));

  // A clone is independent: removing the user there lifts the conflict on every node.
  auto clone = state.Clone();
  ASSERT_TRUE(Remove(*clone, *pod, *user, "n2").ok());
  EXPECT_EQ(Run(*clone, *pod), Each(""));
  EXPECT_EQ(Run(state, *pod), Each(Unschedulable(kRwop)));
  // Adding it back (anywhere) restores it.
  ASSERT_TRUE(Add(*clone, *pod, *user, "n3").ok());
  EXPECT_EQ(Run(*clone, *pod), Each(Unschedulable(kRwop)));
}

TEST_F(VolumeRestrictionsExtensions, AddingAUserMakesAConflict) {
  // A disk keeps PreFilter from skipping; rwop-2 is not in use yet.
  auto pod = h_.MakePod(PodYaml("p", {Claim("rwop-2"), Gce("pd-new")}));
  auto user = h_.MakePod(PodYaml("u", {Claim("rwop-2")}, "n3"));
  auto unrelated = h_.MakePod(PodYaml("w", {Claim("rwo"), Claim("rwop-1"), Gce("pd-x")}, "n3"));
  framework::CycleState state;
  ASSERT_TRUE(h_.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  EXPECT_EQ(Run(state, *pod), Each(""));
  // Pods using other claims change nothing.
  ASSERT_TRUE(Add(state, *pod, *unrelated, "n3").ok());
  EXPECT_EQ(Run(state, *pod), Each(""));
  ASSERT_TRUE(Add(state, *pod, *user, "n3").ok());
  EXPECT_EQ(Run(state, *pod), Each(Unschedulable(kRwop)));
  // Two uses need two removals.
  ASSERT_TRUE(Add(state, *pod, *user, "n1").ok());
  ASSERT_TRUE(Remove(state, *pod, *user, "n3").ok());
  EXPECT_EQ(Run(state, *pod), Each(Unschedulable(kRwop)));
  ASSERT_TRUE(Remove(state, *pod, *user, "n1").ok());
  EXPECT_EQ(Run(state, *pod), Each(""));
  // As upstream, AddPod matches by claim name only: a pod of another namespace counts.
  auto elsewhere = h_.MakePod(PodYaml("e", {Claim("rwop-2")}, "n3", "other"));
  ASSERT_TRUE(Add(state, *pod, *elsewhere, "n3").ok());
  EXPECT_EQ(Run(state, *pod), Each(Unschedulable(kRwop)));
}

// AddPod and RemovePod do not touch the disks: Filter reads them from the node.
TEST_F(VolumeRestrictionsExtensions, DisksComeFromTheNode) {
  auto pod = h_.MakePod(PodYaml("p", {Gce("pd-rw")}));
  auto holder = h_.MakePod(PodYaml("gce", {Gce("pd-rw")}, "n1"));
  framework::CycleState state;
  ASSERT_TRUE(h_.framework().RunPreFilterPlugins(state, pod->view()).second.ok());
  ASSERT_TRUE(Remove(state, *pod, *holder, "n1").ok());
  EXPECT_EQ(Run(state, *pod), OnN1());
}

// ---------------------------------------------------------------------------------------------
// Cluster events and queueing hints
// ---------------------------------------------------------------------------------------------

TEST(VolumeRestrictionsEvents, RegistersUpstreamsEvents) {
  Harness h;
  h.OnlyPlugins({kName});
  const auto regs = Registrations(h.Plugin(kName));
  ASSERT_EQ(regs.size(), 3u);
  EXPECT_EQ(regs[0].event.resource, SCHEDHOST_RESOURCE_ASSIGNED_POD);
  EXPECT_EQ(regs[0].event.actions, SCHEDHOST_ACTION_DELETE);
  EXPECT_NE(regs[0].hint, nullptr);
  EXPECT_EQ(regs[1].event.resource, SCHEDHOST_RESOURCE_NODE);
  EXPECT_EQ(regs[1].event.actions, SCHEDHOST_ACTION_ADD);
  EXPECT_EQ(regs[1].hint, nullptr);
  EXPECT_EQ(regs[2].event.resource, SCHEDHOST_KIND_EVENT(0));  // PersistentVolumeClaim
  EXPECT_EQ(regs[2].event.actions, SCHEDHOST_ACTION_ADD);
  EXPECT_NE(regs[2].hint, nullptr);
  // The framework accepts them: every kind index is declared.
  EXPECT_NO_THROW(h.framework().EventsToRegister());
}

struct PodHintCase {
  std::string name;
  std::string pod;      // the rejected pod
  std::string deleted;  // the deleted pod's manifest ("": none in the event)
  int32_t want;

  friend void PrintTo(const PodHintCase& c, std::ostream* os) { *os << c.name; }
};

class VolumeRestrictionsPodHintTest : public ::testing::TestWithParam<PodHintCase> {};

TEST_P(VolumeRestrictionsPodHintTest, QueuesOnlyHelpfulDeletions) {
  const PodHintCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration& reg = Registrations(inst)[0];
  ASSERT_NE(reg.hint, nullptr);
  auto pod = h.MakePod(c.pod);
  std::shared_ptr<const model::Pod> deleted;
  if (!c.deleted.empty()) deleted = h.MakePod(c.deleted);
  schedhost_event_object old_obj{deleted ? deleted->view() : nullptr, nullptr, nullptr};
  schedhost_cluster_event event{SCHEDHOST_RESOURCE_ASSIGNED_POD, SCHEDHOST_ACTION_DELETE};
  EXPECT_EQ(reg.hint(inst.instance, pod->view(), &event, &old_obj, nullptr), c.want);
}

PodHintCase PodHint(std::string name, const std::vector<std::string>& pod,
                    const std::vector<std::string>& deleted, int32_t want,
                    const std::string& deleted_namespace = "default") {
  return {std::move(name), PodYaml("p", pod), PodYaml("d", deleted, "n1", deleted_namespace),
          want};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeRestrictionsPodHintTest,
    ::testing::Values(
        PodHint("GceConflict", {Gce("foo")}, {Gce("foo")}, SCHEDHOST_QUEUE),
        PodHint("GceNoConflict", {Gce("foo")}, {Gce("bar")}, SCHEDHOST_QUEUE_SKIP),
        PodHint("GceBothReadOnly", {Gce("foo", true)}, {Gce("foo", true)}, SCHEDHOST_QUEUE_SKIP),
        PodHint("AwsConflict", {Aws("foo")}, {Aws("foo")}, SCHEDHOST_QUEUE),
        PodHint("AwsNoConflict", {Aws("foo")}, {Aws("bar")}, SCHEDHOST_QUEUE_SKIP),
        PodHint("RbdConflict", {Rbd("[a, b]", "foo", "bar")}, {Rbd("[a, b]", "foo", "bar")},
                SCHEDHOST_QUEUE),
        PodHint("RbdNoConflict", {Rbd("[a, b]", "foo", "bar")}, {Rbd("[c, d]", "foo", "bar")},
                SCHEDHOST_QUEUE_SKIP),
        PodHint("IscsiConflict", {Iscsi(kIqn)}, {Iscsi(kIqn)}, SCHEDHOST_QUEUE),
        PodHint("IscsiNoConflict", {Iscsi(kIqn)}, {Iscsi(kOtherIqn)}, SCHEDHOST_QUEUE_SKIP),
        PodHint("SameClaim", {Claim("claim-rwop")}, {Claim("claim-rwop")}, SCHEDHOST_QUEUE),
        PodHint("OtherClaim", {Claim("claim-1-rwop")}, {Claim("claim-2-rwop")},
                SCHEDHOST_QUEUE_SKIP),
        PodHint("SameDiskOtherNamespace", {Gce("foo")}, {Gce("foo")}, SCHEDHOST_QUEUE_SKIP,
                "other"),
        PodHint("SameClaimOtherNamespace", {Claim("c")}, {Claim("c")}, SCHEDHOST_QUEUE_SKIP,
                "other"),
        PodHint("DeletedPodWithoutVolumes", {Gce("foo"), Claim("c")}, {}, SCHEDHOST_QUEUE_SKIP),
        PodHintCase{"NoPodInTheEvent", PodYaml("p", {Gce("foo")}), "", SCHEDHOST_QUEUE}),
    [](const auto& info) { return info.param.name; });

struct ClaimHintCase {
  std::string name;
  std::string pod;    // the rejected pod
  std::string claim;  // the added claim's manifest ("": none in the event)
  int32_t want;

  friend void PrintTo(const ClaimHintCase& c, std::ostream* os) { *os << c.name; }
};

class VolumeRestrictionsClaimHintTest : public ::testing::TestWithParam<ClaimHintCase> {};

TEST_P(VolumeRestrictionsClaimHintTest, QueuesOnlyThePodsClaims) {
  const ClaimHintCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration& reg = Registrations(inst)[2];
  ASSERT_NE(reg.hint, nullptr);
  std::shared_ptr<const model::ValueNode> tree;
  if (!c.claim.empty()) {
    std::vector<model::GenericObject> generic;
    model::DecodeManifests(c.claim, "test", model::DecodeLimits{}, &generic);
    ASSERT_EQ(generic.size(), 1u);
    tree = generic[0].tree;
  }
  schedhost_event_object old_obj{nullptr, nullptr, nullptr};
  schedhost_event_object new_obj{nullptr, nullptr, config::AsAbi(tree.get())};
  schedhost_cluster_event event{SCHEDHOST_KIND_EVENT(0), SCHEDHOST_ACTION_ADD};
  auto pod = h.MakePod(c.pod);
  EXPECT_EQ(reg.hint(inst.instance, pod->view(), &event, &old_obj, &new_obj), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeRestrictionsClaimHintTest,
    ::testing::Values(
        ClaimHintCase{"ClaimOfThePod", PodYaml("p", {Claim("c1"), Claim("c2")}),
                      PvcYaml("c2", "[ReadWriteMany]"), SCHEDHOST_QUEUE},
        ClaimHintCase{"OtherClaim", PodYaml("p", {Claim("c1")}), PvcYaml("c2", "[ReadWriteMany]"),
                      SCHEDHOST_QUEUE_SKIP},
        ClaimHintCase{"ClaimOfAnotherNamespace", PodYaml("p", {Claim("c1")}, "", "kube-system"),
                      PvcYaml("c1", "[ReadWriteMany]"), SCHEDHOST_QUEUE_SKIP},
        ClaimHintCase{"PodWithoutClaims", PodYaml("p", {Gce("c1")}),
                      PvcYaml("c1", "[ReadWriteOncePod]"), SCHEDHOST_QUEUE_SKIP},
        ClaimHintCase{"NoClaimInTheEvent", PodYaml("p", {Claim("c1")}), "", SCHEDHOST_QUEUE}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace schedhost::plugins
