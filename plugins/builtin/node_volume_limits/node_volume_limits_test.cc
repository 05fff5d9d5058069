// NodeVolumeLimits through the real framework over a real snapshot, with CSINodes,
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, VolumeAttachments and CSIDrivers in
// the host's object store. Behaviour follows upstream's nodevolumelimits CSI plugin: unique
// volumes counted per driver against the CSINode's allocatable count, bound claims by their
// volume's CSI handle, unbound ones by their class's provisioner, ephemeral volumes by their
// claim, migrated in-tree disks, VolumeAttachments, and its events and queueing hints.
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

constexpr char kName[] = "NodeVolumeLimits";
constexpr char kExceeded[] = "Unschedulable: node(s) exceed max volume count";

constexpr char kDriverA[] = "a.csi.example.com";
constexpr char kDriverB[] = "b.csi.example.com";
constexpr char kEbs[] = "ebs.csi.aws.com";

std::string NodeYaml(const std::string& name) {
  return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus: {allocatable: {cpu: \"4\", memory: 4Gi, pods: \"20\"}}\n";
}

// CSINodeYaml renders node `name`'s CSINode; each driver is {name, count} (count < 0: no
// allocatable).
std::string CSINodeYaml(const std::string& name,
                        const std::vector<std::pair<std::string, int>>& drivers) {
  std::string out = "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: " +
                    name + "}\nspec:\n  drivers:" + (drivers.empty() ? " []\n" : "\n");
  for (const auto& [driver, count] : drivers) {
    out += "  - {name: " + driver + ", nodeID: " + name;
    if (count >= 0) out += ", allocatable: {count: " + std::to_string(count) + "}";
    out += "}\n";
  }
  return out;
}

// CsiPvYaml renders a CSI PersistentVolume of `driver` with `handle`.
std::string CsiPvYaml(const std::string& name, const std::string& driver,
                      const std::string& handle) {
  return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
         "}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driver: " +
         driver + ", volumeHandle: " + handle + "}}\n";
}

// PvYaml renders a PersistentVolume whose source is `source` (a flow mapping entry).
std::string PvYaml(const std::string& name, const std::string& source) {
  return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
         "}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], " + source + "}\n";
}

// PvcYaml renders a claim of namespace default; `spec` is its spec as a flow mapping, `meta`
// extra metadata entries.
std::string PvcYaml(const std::string& name, const std::string& spec,
                    const std::string& meta = "") {
  return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: default" + meta + "}\nspec: " + spec + "\n";
}

std::string Bound(const std::string& name, const std::string& pv) {
  return PvcYaml(name, "{volumeName: " + pv + ", accessModes: [ReadWriteOnce]}");
}

// OwnedBound renders an ephemeral volume's claim, bound to `pv`, controlled by pod `uid`.
std::string OwnedBound(const std::string& name, const std::string& pv, const std::string& uid) {
  return PvcYaml(name, "{volumeName: " + pv + "}",
                 ", ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: " + uid +
                     ", controller: true}]");
}

std::string ScYaml(const std::string& name, const std::string& provisioner) {
  return "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " + name +
         "}\nprovisioner: " + provisioner + "\nvolumeBindingMode: WaitForFirstConsumer\n";
}

std::string VaYaml(const std::string& name, const std::string& attacher, const std::string& node,
                   const std::string& pv) {
  return "---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: " + name +
         "}\nspec: {attacher: " + attacher + ", nodeName: " + node +
         ", source: {persistentVolumeName: " + pv + "}}\nstatus: {attached: true}\n";
}

std::string CSIDriverYaml(const std::string& name, bool prevent) {
  return "---\napiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: " + name +
         "}\nspec: {preventPodSchedulingIfMissing: " + (prevent ? "true" : "false") + "}\n";
}

// PodYaml renders pod `name` (uid "uid-<name>") on `node` ("" pending) with `volumes`.
std::string PodYaml(const std::string& name, const std::string& node,
                    const std::vector<std::string>& volumes) {
  std::string yaml = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                     ", namespace: default, uid: uid-" + name +
                     "}\nspec:\n  containers: [{name: c, image: busybox}]\n";
  if (!node.empty()) yaml += "  nodeName: " + node + "\n";
  if (!volumes.empty()) yaml += "  volumes:\n";
  for (const auto& v : volumes) yaml += "  - " + v + "\n";
  return yaml;
}

std::string Claim(const std::string& volume, const std::string& claim) {
  return "{name: " + volume + ", persistentVolumeClaim: {claimName: \"" + claim + "\"}}";
}

std::string Ephemeral(const std::string& volume) {
  return "{name: " + volume +
         ", ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: "
         "{requests: {storage: 1Gi}}}}}}";
}

// Claims renders pod `name` on `node` using the claims `names`, as volumes v0, v1, ...
std::string Claims(const std::string& name, const std::string& node,
                   const std::vector<std::string>& names) {
  std::vector<std::string> volumes;
  for (size_t i = 0; i < names.size(); ++i) {
    volumes.push_back(Claim(std::string(1, 'v') + std::to_string(i), names[i]));
  }
  return PodYaml(name, node, volumes);
}

// New is the pending pod "new" using the claims `names`.
std::string New(const std::vector<std::string>& names) { return Claims("new", "", names); }

// The cluster: n1 allows 2 volumes of driver A and 1 of driver B; n2 has no CSINode; n3's
// CSINode lists driver A without a count; n4 allows 1 EBS volume (a migration target).
std::string Cluster() {
  return NodeYaml("n1") + NodeYaml("n2") + NodeYaml("n3") + NodeYaml("n4") +
         CSINodeYaml("n1", {{kDriverA, 2}, {kDriverB, 1}}) + CSINodeYaml("n3", {{kDriverA, -1}}) +
         CSINodeYaml("n4", {{kEbs, 1}});
}

// Storage: claims a, b, c, d on driver A volumes, x and y on driver B, claims of unbound
// classes, a claim bound to a missing volume, in-tree EBS volumes.
std::string Storage() {
  std::string out;
  for (const char* v : {"a", "b", "c", "d"}) {
    out += CsiPvYaml(std::string("pv-") + v, kDriverA, std::string("vol-") + v) +
           Bound(v, std::string("pv-") + v);
  }
  for (const char* v : {"x", "y"}) {
    out += CsiPvYaml(std::string("pv-") + v, kDriverB, std::string("vol-") + v) +
           Bound(v, std::string("pv-") + v);
  }
  // Two volumes with the same handle are one volume.
  out += CsiPvYaml("pv-a-again", kDriverA, "vol-a") + Bound("a-again", "pv-a-again");
  out += ScYaml("class-a", kDriverA) + ScYaml("class-other", "other.csi.example.com") +
         ScYaml("class-ebs", "kubernetes.io/aws-ebs");
  out += PvcYaml("unbound-a", "{storageClassName: class-a}") +
         PvcYaml("unbound-a2", "{storageClassName: class-a}") +
         PvcYaml("unbound-other", "{storageClassName: class-other}") +
         PvcYaml("unbound-ebs", "{storageClassName: class-ebs}") +
         PvcYaml("unbound-gone-class", "{storageClassName: gone}") +
         PvcYaml("unbound-no-class", "{accessModes: [ReadWriteOnce]}");
  // Bound to a volume that does not exist: counted by its class.
  out += PvcYaml("lost-a", "{volumeName: pv-gone, storageClassName: class-a}");
  out += PvYaml("pv-ebs1", "awsElasticBlockStore: {volumeID: \"aws://us-east-1a/vol-111\"}") +
         Bound("ebs1", "pv-ebs1") +
         PvYaml("pv-ebs2", "awsElasticBlockStore: {volumeID: vol-222}") + Bound("ebs2", "pv-ebs2") +
         PvYaml("pv-nfs", "nfs: {server: s, path: /x}") + Bound("nfs", "pv-nfs");
  // The ephemeral volume "scratch" of pod p (uid-p), and of pod q, not owned by q.
  out += CsiPvYaml("pv-e", kDriverA, "vol-e") + OwnedBound("p-scratch", "pv-e", "uid-p") +
         OwnedBound("q-scratch", "pv-e", "uid-p");
  return out;
}

void Load(Harness& h, const std::string& yaml) {
  std::vector<model::GenericObject> generic;
  h.AddObjects(model::DecodeManifests(yaml, "test", model::DecodeLimits{}, &generic));
  h.AddGeneric(generic);
}

// Verdicts is each node's Filter outcome: "" passes, else "<code>: <reason>".
using Verdicts = std::map<std::string, std::string>;

Verdicts RunFilter(Harness& h, const std::string& pod) {
  Verdicts out;
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    if (r.status.ok()) {
      out[r.node] = "";
      continue;
    }
    EXPECT_EQ(r.status.reasons.size(), 1u) << r.node;
    EXPECT_EQ(r.status.plugin, kName) << r.node;
    out[r.node] = std::string(framework::CodeName(r.status.code)) + ": " + r.status.Message();
  }
  return out;
}

// PreFilterSkips runs PreFilter alone and tells whether NodeVolumeLimits answered Skip.
bool PreFilterSkips(Harness& h, const std::string& pod) {
  auto p = h.MakePod(pod);
  h.snapshot();
  framework::CycleState state;
  h.framework().RunPreFilterPlugins(state, p->view());
  return state.skip_filter_plugins.count(kName) == 1;
}

Verdicts Each(const std::string& verdict) {
  Verdicts out;
  for (const char* n : {"n1", "n2", "n3", "n4"}) out[n] = verdict;
  return out;
}

// FilterError is the framework's Error status of a Filter failure `why`.
std::string FilterError(const std::string& why) {
  return "Error: running \"NodeVolumeLimits\" filter plugin: " + why;
}

// Only n1 rejects (n2 has no CSINode, n3 no count, n4 no limit for the driver).
Verdicts OnlyN1(const std::string& verdict) {
  Verdicts out = Each("");
  out["n1"] = verdict;
  return out;
}

// ---------------------------------------------------------------------------------------------
// PreFilter and Filter
// ---------------------------------------------------------------------------------------------

struct FilterCase {
  std::string name;
  std::string existing;  // pods on the nodes and extra objects
  std::string pod;
  Verdicts want;
  bool skip = false;  // PreFilter answers Skip

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class NodeVolumeLimitsFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeVolumeLimitsFilterTest, CountsVolumes) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, Cluster() + Storage() + c.existing);
  EXPECT_EQ(RunFilter(h, c.pod), c.want);
  EXPECT_EQ(PreFilterSkips(h, c.pod), c.skip);
}

// Two driver A volumes on n1 (its limit), through two pods.
const std::string kFullA = Claims("e1", "n1", {"a"}) + Claims("e2", "n1", {"b"});

// An inline EBS volume whose ID does not translate fails where migration is on (a CSINode).
const std::string kInvalidEbs = FilterError(
    "converting volume(d) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
    "Invalid format for AWS volume (aws://z/x)");

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeVolumeLimitsFilterTest,
    ::testing::Values(
        FilterCase{"UnderTheLimit", "", New({"a", "b"}), Each("")},
        FilterCase{"NewPodAloneOverTheLimit", "", New({"a", "b", "c"}), OnlyN1(kExceeded)},
        FilterCase{"LimitReachedByPodsOnTheNode", kFullA, New({"c"}), OnlyN1(kExceeded)},
        FilterCase{"PodsOnOtherNodesDoNotCount",
                   Claims("e1", "n2", {"a"}) + Claims("e2", "n3", {"b"}), New({"c", "d"}),
                   Each("")},
        // A volume the node already has is not a new one.
        FilterCase{"VolumeOnTheNodeCountsOnce", kFullA, New({"a"}), Each("")},
        FilterCase{"SameHandleIsOneVolume", kFullA, New({"a-again"}), Each("")},
        // A node already past a driver's limit still takes a pod that attaches nothing new.
        FilterCase{"NodeOverTheLimitTakesNoNewVolume",
                   kFullA + Claims("e3", "n1", {"c"}), New({"a"}), Each("")},
        FilterCase{"NodeOverTheLimitRefusesANewVolume",
                   kFullA + Claims("e3", "n1", {"c"}), New({"a", "d"}), OnlyN1(kExceeded)},
        FilterCase{"VolumeSharedByTwoPodsCountsOnce",
                   Claims("e1", "n1", {"a"}) + Claims("e2", "n1", {"a"}), New({"b"}), Each("")},
        FilterCase{"VolumeSharedByTwoPodsThenOneTooMany",
                   Claims("e1", "n1", {"a"}) + Claims("e2", "n1", {"a"}), New({"b", "c"}),
                   OnlyN1(kExceeded)},
        FilterCase{"VolumeTwiceInTheNewPod", Claims("e1", "n1", {"a"}), New({"b", "b"}),
                   Each("")},
        // A node without a CSINode has no limits (n2 passes everywhere); n3's CSINode lists
        // driver A without a count.
        FilterCase{"NodeWithoutCSINodeHasNoLimits",
                   Claims("e1", "n2", {"a", "b", "c"}) + Claims("e2", "n3", {"a", "b", "c"}),
                   New({"d", "x", "y"}), OnlyN1(kExceeded)},
        // Driver B has its own limit (1).
        FilterCase{"OtherDriverCountedSeparately", kFullA, New({"x"}), Each("")},
        FilterCase{"OtherDriverOverItsLimit", "", New({"x", "y"}), OnlyN1(kExceeded)},
        FilterCase{"OtherDriverLimitReached", Claims("e1", "n1", {"x"}), New({"y"}),
                   OnlyN1(kExceeded)},
        // Unbound claims count by their class's provisioner, each as a volume of its own.
        FilterCase{"UnboundClaimCountsByProvisioner", Claims("e1", "n1", {"a"}),
                   New({"b", "unbound-a"}), OnlyN1(kExceeded)},
        FilterCase{"UnboundClaimsAreDistinct", "", New({"a", "unbound-a", "unbound-a2"}),
                   OnlyN1(kExceeded)},
        FilterCase{"UnboundClaimOnTheNodeCounts", Claims("e1", "n1", {"unbound-a"}),
                   New({"a", "b"}), OnlyN1(kExceeded)},
        FilterCase{"UnboundClaimOfUnlimitedDriver", kFullA, New({"unbound-other"}), Each("")},
        FilterCase{"UnboundClaimWithoutClassNotCounted", kFullA, New({"unbound-no-class"}),
                   Each("")},
        FilterCase{"UnboundClaimOfMissingClassNotCounted", kFullA,
                   New({"unbound-gone-class"}), Each("")},
        FilterCase{"ClaimOfMissingVolumeCountsByClass", kFullA, New({"lost-a"}),
                   OnlyN1(kExceeded)},
        // A volume that is not a CSI one (and migrates to none) is not counted.
        FilterCase{"NonCsiVolumeNotCounted", kFullA, New({"nfs"}), Each("")},
        // Ephemeral volumes count by their claim "<pod>-<volume>".
        FilterCase{"EphemeralVolumeCounted", kFullA, PodYaml("p", "", {Ephemeral("scratch")}),
                   OnlyN1(kExceeded)},
        FilterCase{"EphemeralVolumeUnderTheLimit", Claims("e1", "n1", {"a"}),
                   PodYaml("p", "", {Ephemeral("scratch")}), Each("")},
        FilterCase{"EphemeralVolumeNotOwned", "", PodYaml("q", "", {Ephemeral("scratch")}),
                   Each(FilterError("PVC default/q-scratch was not created for pod default/q (pod "
                                    "is not owner)"))},
        FilterCase{"EphemeralClaimMissing", "", PodYaml("r", "", {Ephemeral("scratch")}),
                   Each("UnschedulableAndUnresolvable: looking up PVC default/r-scratch: "
                        "persistentvolumeclaim \"r-scratch\" not found")},
        FilterCase{"EphemeralVolumeOfPodOnTheNode",
                   PodYaml("p", "n1", {Ephemeral("scratch")}) + Claims("e1", "n1", {"a"}),
                   New({"b"}), OnlyN1(kExceeded)},
        // VolumeAttachments of the node count, once with the pods' volumes.
        FilterCase{"VolumeAttachmentCounted",
                   VaYaml("va-a", kDriverA, "n1", "pv-a") + Claims("e1", "n1", {"b"}),
                   New({"c"}), OnlyN1(kExceeded)},
        FilterCase{"VolumeAttachmentsAlone",
                   VaYaml("va-a", kDriverA, "n1", "pv-a") + VaYaml("va-b", kDriverA, "n1", "pv-b"),
                   New({"c"}), OnlyN1(kExceeded)},
        FilterCase{"VolumeAttachmentOfAPodsVolumeCountsOnce",
                   VaYaml("va-b", kDriverA, "n1", "pv-b") + Claims("e1", "n1", {"b"}),
                   New({"c"}), Each("")},
        // As upstream, an attachment is set against the pods' volumes only: the new pod's own
        // volume, attached but used by no pod on the node yet, counts twice.
        FilterCase{"VolumeAttachmentOfTheNewPodsVolumeCountsAgain",
                   VaYaml("va-a", kDriverA, "n1", "pv-a") + Claims("e1", "n1", {"b"}),
                   New({"a"}), OnlyN1(kExceeded)},
        FilterCase{"VolumeAttachmentOfAnotherNode",
                   VaYaml("va-a", kDriverA, "n2", "pv-a") + Claims("e1", "n1", {"b"}),
                   New({"c"}), Each("")},
        FilterCase{"VolumeAttachmentOfMissingVolume",
                   VaYaml("va-a", kDriverA, "n1", "pv-gone") + Claims("e1", "n1", {"b"}),
                   New({"c"}), Each("")},
        // A missing claim of the new pod keeps it pending; one of a pod on the node is ignored.
        FilterCase{"MissingClaim", "", New({"nope"}),
                   Each("UnschedulableAndUnresolvable: looking up PVC default/nope: "
                        "persistentvolumeclaim \"nope\" not found")},
        FilterCase{"MissingClaimOfPodOnTheNodeIgnored", Claims("e1", "n1", {"nope", "a"}),
                   New({"b"}), Each("")},
        FilterCase{"EmptyClaimName", "", New({""}),
                   Each(FilterError("PersistentVolumeClaim had no name"))},
        // In-tree EBS volumes count as ebs.csi.aws.com volumes on nodes with a CSINode.
        FilterCase{"MigratedVolumeCounted", Claims("e1", "n4", {"ebs1"}), New({"ebs2"}),
                   {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", kExceeded}}},
        FilterCase{"MigratedVolumeSharedCountsOnce", Claims("e1", "n4", {"ebs1"}),
                   New({"ebs1"}), Each("")},
        FilterCase{"MigratedClassCounted", Claims("e1", "n4", {"ebs1"}), New({"unbound-ebs"}),
                   {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", kExceeded}}},
        FilterCase{"InlineMigratedVolumeCounted", Claims("e1", "n4", {"ebs1"}),
                   PodYaml("p", "", {"{name: d, awsElasticBlockStore: {volumeID: vol-333}}"}),
                   {{"n1", ""}, {"n2", ""}, {"n3", ""}, {"n4", kExceeded}}},
        FilterCase{"InlineMigratedSameDiskCountsOnce", Claims("e1", "n4", {"ebs1"}),
                   PodYaml("p", "", {"{name: d, awsElasticBlockStore: {volumeID: vol-111}}"}),
                   Each("")},
        FilterCase{"InlineMigratedVolumeInvalid", "",
                   PodYaml("p", "", {"{name: d, awsElasticBlockStore: {volumeID: \"aws://z/x\"}}"}),
                   {{"n1", kInvalidEbs}, {"n2", ""}, {"n3", kInvalidEbs}, {"n4", kInvalidEbs}}},
        // Pods that use none of the volumes it counts: Skip.
        FilterCase{"PodWithoutVolumes", kFullA, PodYaml("p", "", {}), Each(""), true},
        FilterCase{"PodWithoutClaims", kFullA, PodYaml("p", "", {"{name: s, emptyDir: {}}"}),
                   Each(""), true},
        FilterCase{"InlineCsiVolumeNotCounted", kFullA,
                   PodYaml("p", "", {"{name: s, csi: {driver: a.csi.example.com}}"}), Each(""),
                   true}),
    [](const auto& info) { return info.param.name; });

TEST(NodeVolumeLimitsFilter, ScheduleFailureMessage) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, NodeYaml("n1") + CSINodeYaml("n1", {{kDriverA, 1}}) + Storage() +
              Claims("e1", "n1", {"a"}));
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(New({"b"})), &failure), "");
  EXPECT_EQ(failure, "0/1 nodes are available: 1 node(s) exceed max volume count.");
  EXPECT_EQ(h.Schedule(*h.MakePod(New({"a"}))), "n1");
}

// A CSIDriver with preventPodSchedulingIfMissing keeps its volumes on nodes whose CSINode lists
// it (VolumeLimitScaling).
TEST(NodeVolumeLimitsFilter, DriverMustBeInstalledWhenItAsks) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, Cluster() + Storage() + CSIDriverYaml(kDriverA, true) +
              CSIDriverYaml(kDriverB, false));
  const std::string missing =
      std::string("Unschedulable: ") + kDriverA + " CSI driver is not installed on the node";
  EXPECT_EQ(RunFilter(h, New({"a"})),
            (Verdicts{{"n1", ""}, {"n2", missing}, {"n3", ""}, {"n4", missing}}));
  EXPECT_EQ(RunFilter(h, New({"x"})), Each(""));
}

// Filter without PreFilter's state resolves the pod's volumes and lists attachments itself.
// Filter keeps what it works out about a node (its limits, the volumes its pods and
// attachments hold) across cycles; each change of a CSINode, a volume or an attachment between
// two cycles, with the nodes' pods unchanged, is seen by the next one.
TEST(NodeVolumeLimitsFilter, SeesEachChangeBetweenCycles) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, Cluster() + Storage() + Claims("e1", "n1", {"a"}));
  const auto change = [&h](const std::string& yaml) {
    std::vector<model::GenericObject> generic;
    EXPECT_TRUE(model::DecodeManifests(yaml, "test", model::DecodeLimits{}, &generic).empty());
    h.AddGeneric(generic);  // the snapshot of nodes and pods stays as it is
  };
  const std::string b = New({"b"});
  EXPECT_EQ(RunFilter(h, b), Each(""));  // one of n1's two driver A places is taken
  EXPECT_EQ(RunFilter(h, b), Each(""));  // the same, from what the first cycle kept

  change(CSINodeYaml("n1", {{kDriverA, 1}, {kDriverB, 1}}));
  EXPECT_EQ(RunFilter(h, b), OnlyN1(kExceeded));
  change(CSINodeYaml("n1", {{kDriverA, 2}, {kDriverB, 1}}));
  EXPECT_EQ(RunFilter(h, b), Each(""));

  change(VaYaml("va-c", kDriverA, "n1", "pv-c"));
  EXPECT_EQ(RunFilter(h, b), OnlyN1(kExceeded));

  // e1's volume now has b's handle: b is already on n1 and takes no new place.
  change(CsiPvYaml("pv-a", kDriverA, "vol-b"));
  EXPECT_EQ(RunFilter(h, b), Each(""));
  // e1's claim now names pv-x (driver B): driver A holds only the attachment again.
  change(Bound("a", "pv-x"));
  EXPECT_EQ(RunFilter(h, b), Each(""));
  EXPECT_EQ(RunFilter(h, New({"y"})), OnlyN1(kExceeded));  // n1's one driver B place is taken
}

TEST(NodeVolumeLimitsFilter, WithoutPreFilterState) {
  Harness h;
  h.OnlyPlugins({kName});
  Load(h, Cluster() + Storage() + VaYaml("va-a", kDriverA, "n1", "pv-a") +
              Claims("e1", "n1", {"b"}));
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
      out[std::string(v->node->name.data, v->node->name.len)] =
          s.ok() ? "" : std::string(framework::CodeName(s.code)) + ": " + s.Message();
    }
    return out;
  };
  EXPECT_EQ(filter(New({"c"})), OnlyN1(kExceeded));
  EXPECT_EQ(filter(New({"b"})), Each(""));
  EXPECT_EQ(filter(New({"nope"})),
            Each("UnschedulableAndUnresolvable: looking up PVC default/nope: "
                 "persistentvolumeclaim \"nope\" not found"));
  EXPECT_EQ(filter(PodYaml("p", "", {})), Each(""));
}

TEST(NodeVolumeLimitsArgs, TakesNoArguments) {
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.NodeVolumeLimits]\nmax = 1\n");
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("plugin_config.NodeVolumeLimits.max"));
  }
  Harness empty;
  empty.OnlyPlugins({kName}, "[profile.plugin_config.NodeVolumeLimits]\n");
  EXPECT_NO_THROW(empty.framework());
}

// ---------------------------------------------------------------------------------------------
// Cluster events and queueing hints
// ---------------------------------------------------------------------------------------------

constexpr int32_t kClaimEvent = SCHEDHOST_KIND_EVENT(0);
constexpr int32_t kCSINodeEvent = SCHEDHOST_KIND_EVENT(3);
constexpr int32_t kAttachmentEvent = SCHEDHOST_KIND_EVENT(4);

TEST(NodeVolumeLimitsEvents, RegistersUpstreamsEvents) {
  Harness h;
  h.OnlyPlugins({kName});
  const auto regs = Registrations(h.Plugin(kName));
  ASSERT_EQ(regs.size(), 5u);
  EXPECT_EQ(regs[0].event.resource, kCSINodeEvent);
  EXPECT_EQ(regs[0].event.actions, SCHEDHOST_ACTION_ADD);
  EXPECT_EQ(regs[0].hint, nullptr);
  EXPECT_EQ(regs[1].event.resource, kCSINodeEvent);
  EXPECT_EQ(regs[1].event.actions, SCHEDHOST_ACTION_UPDATE);
  EXPECT_NE(regs[1].hint, nullptr);
  EXPECT_EQ(regs[2].event.resource, SCHEDHOST_RESOURCE_ASSIGNED_POD);
  EXPECT_EQ(regs[2].event.actions, SCHEDHOST_ACTION_DELETE);
  EXPECT_NE(regs[2].hint, nullptr);
  EXPECT_EQ(regs[3].event.resource, kClaimEvent);
  EXPECT_EQ(regs[3].event.actions, SCHEDHOST_ACTION_ADD);
  EXPECT_NE(regs[3].hint, nullptr);
  EXPECT_EQ(regs[4].event.resource, kAttachmentEvent);
  EXPECT_EQ(regs[4].event.actions, SCHEDHOST_ACTION_DELETE);
  EXPECT_NE(regs[4].hint, nullptr);
  // The framework accepts them: every kind index is declared.
  EXPECT_NO_THROW(h.framework().EventsToRegister());
}

struct HintCase {
  std::string name;
  int32_t resource;    // which registration
  std::string pod;     // the rejected pod
  std::string before;  // the old object's manifest ("": none)
  std::string after;   // the new object's manifest ("": none)
  int32_t want;

  friend void PrintTo(const HintCase& c, std::ostream* os) { *os << c.name; }
};

class NodeVolumeLimitsHintTest : public ::testing::TestWithParam<HintCase> {};

TEST_P(NodeVolumeLimitsHintTest, QueuesOnlyHelpfulChanges) {
  const HintCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName});
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration* reg = nullptr;
  for (const auto& r : Registrations(inst)) {
    if (r.event.resource == c.resource && r.hint != nullptr) reg = &r;
  }
  ASSERT_NE(reg, nullptr);
  auto pod = h.MakePod(c.pod);
  schedhost_cluster_event event = reg->event;
  if (c.resource == SCHEDHOST_RESOURCE_ASSIGNED_POD) {
    // The deleted pod is the old object.
    auto deleted = h.MakePod(c.before);
    schedhost_event_object old_obj{deleted->view(), nullptr, nullptr};
    EXPECT_EQ(reg->hint(inst.instance, pod->view(), &event, &old_obj, nullptr), c.want);
    return;
  }
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
  EXPECT_EQ(reg->hint(inst.instance, pod->view(), &event, &old_obj, &new_obj), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeVolumeLimitsHintTest,
    ::testing::Values(
        // CSINode update: only a raised limit helps.
        HintCase{"LimitRaised", kCSINodeEvent, New({"a"}), CSINodeYaml("n1", {{kDriverA, 1}}),
                 CSINodeYaml("n1", {{kDriverA, 2}}), SCHEDHOST_QUEUE},
        HintCase{"LimitLowered", kCSINodeEvent, New({"a"}), CSINodeYaml("n1", {{kDriverA, 2}}),
                 CSINodeYaml("n1", {{kDriverA, 1}}), SCHEDHOST_QUEUE_SKIP},
        HintCase{"LimitUnchanged", kCSINodeEvent, New({"a"}),
                 CSINodeYaml("n1", {{kDriverA, 2}}),
                 CSINodeYaml("n1", {{kDriverA, 2}, {kDriverB, -1}}), SCHEDHOST_QUEUE_SKIP},
        HintCase{"DriverWithLimitAdded", kCSINodeEvent, New({"a"}),
                 CSINodeYaml("n1", {{kDriverA, 2}}),
                 CSINodeYaml("n1", {{kDriverA, 2}, {kDriverB, 1}}), SCHEDHOST_QUEUE},
        HintCase{"LimitSetOnDriver", kCSINodeEvent, New({"a"}),
                 CSINodeYaml("n1", {{kDriverA, -1}}), CSINodeYaml("n1", {{kDriverA, 3}}),
                 SCHEDHOST_QUEUE},
        // Assigned pod deleted: a bound (or nominated) pod with a counted kind of volume.
        HintCase{"BoundPodWithClaimDeleted", SCHEDHOST_RESOURCE_ASSIGNED_POD, New({"a"}),
                 Claims("e1", "n1", {"b"}), "", SCHEDHOST_QUEUE},
        HintCase{"BoundPodWithEphemeralDeleted", SCHEDHOST_RESOURCE_ASSIGNED_POD, New({"a"}),
                 PodYaml("e1", "n1", {Ephemeral("s")}), "", SCHEDHOST_QUEUE},
        HintCase{"BoundPodWithInTreeDiskDeleted", SCHEDHOST_RESOURCE_ASSIGNED_POD, New({"a"}),
                 PodYaml("e1", "n1", {"{name: d, gcePersistentDisk: {pdName: d1}}"}), "",
                 SCHEDHOST_QUEUE},
        HintCase{"BoundPodWithoutVolumesDeleted", SCHEDHOST_RESOURCE_ASSIGNED_POD, New({"a"}),
                 PodYaml("e1", "n1", {}), "", SCHEDHOST_QUEUE_SKIP},
        HintCase{"BoundPodWithOtherVolumesDeleted", SCHEDHOST_RESOURCE_ASSIGNED_POD, New({"a"}),
                 PodYaml("e1", "n1", {"{name: s, emptyDir: {}}", "{name: r, rbd: {image: i}}"}),
                 "", SCHEDHOST_QUEUE_SKIP},
        HintCase{"UnboundPodDeleted", SCHEDHOST_RESOURCE_ASSIGNED_POD, New({"a"}),
                 Claims("e1", "", {"b"}), "", SCHEDHOST_QUEUE_SKIP},
        // Claim added: one the pod uses (by name, or its ephemeral claim).
        HintCase{"ClaimOfThePodAdded", kClaimEvent, New({"other", "data"}), "",
                 Bound("data", "pv"), SCHEDHOST_QUEUE},
        HintCase{"EphemeralClaimOfThePodAdded", kClaimEvent,
                 PodYaml("p", "", {Ephemeral("scratch")}), "", Bound("p-scratch", "pv"),
                 SCHEDHOST_QUEUE},
        HintCase{"OtherClaimAdded", kClaimEvent, New({"data"}), "", Bound("other", "pv"),
                 SCHEDHOST_QUEUE_SKIP},
        HintCase{"ClaimOfAnotherNamespaceAdded", kClaimEvent, New({"data"}), "",
                 "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, "
                 "namespace: ns1}\nspec: {volumeName: pv}\n",
                 SCHEDHOST_QUEUE_SKIP},
        // VolumeAttachment deleted: any claim of the pod, or an in-tree disk of its attacher.
        HintCase{"AttachmentDeletedPodWithClaim", kAttachmentEvent, New({"a"}),
                 VaYaml("va", kDriverB, "n1", "pv-x"), "", SCHEDHOST_QUEUE},
        HintCase{"AttachmentDeletedPodWithEphemeralOnly", kAttachmentEvent,
                 PodYaml("p", "", {Ephemeral("scratch")}), VaYaml("va", kDriverA, "n1", "pv-e"),
                 "", SCHEDHOST_QUEUE_SKIP},
        HintCase{"AttachmentOfInTreeDriverDeleted", kAttachmentEvent,
                 PodYaml("p", "", {"{name: d, awsElasticBlockStore: {volumeID: vol-1}}"}),
                 VaYaml("va", kEbs, "n1", "pv-ebs"), "", SCHEDHOST_QUEUE},
        HintCase{"AttachmentOfOtherDriverDeleted", kAttachmentEvent,
                 PodYaml("p", "", {"{name: d, awsElasticBlockStore: {volumeID: vol-1}}"}),
                 VaYaml("va", kDriverA, "n1", "pv-a"), "", SCHEDHOST_QUEUE_SKIP},
        HintCase{"AttachmentDeletedPodWithoutVolumes", kAttachmentEvent, PodYaml("p", "", {}),
                 VaYaml("va", kDriverA, "n1", "pv-a"), "", SCHEDHOST_QUEUE_SKIP}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace schedhost::plugins
