// Volume scheduling against a real control plane with kube-controller-manager's PV controller
// (persistentvolume-binder-controller) and ephemeral volume controller running, built from the
// same module as kube-apiserver. schedhostd's VolumeBinding matches a WaitForFirstConsumer
// claim to the local volume of the one node it fits, writes the volume's claimRef in PreBind,
// and waits for the PV controller to bind the claim before the pod is bound; an ephemeral
// volume's pod waits until the controller makes its claim; a ReadWriteOncePod claim in use, a
// CSINode's attach limit and a volume's zone hold pods with kube-scheduler's messages; a
// schedhostd killed while PreBind waits for a provisioner leaves the pod pending, and the next
// one binds it where the provisioned volume is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using ::testing::HasSubstr;
using kubetest::ControlPlane;
using kubetest::ExitStatus;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::SpawnLogged;
using kubetest::WaitFor;

class KubeStorageTest : public KubeModeTest {
 protected:
  static void SetUpTestSuite() {
    if (!ControlPlane::Unavailable().empty()) return;  // SetUp skips or fails, saying why
    ControlPlane::Options options;
    options.controllers = {"persistentvolume-binder-controller", "ephemeral-volume-controller"};
    options.kube_scheduler = true;  // for pods of schedulerName default-scheduler
    cp_ = ControlPlane::Start(options);
  }

  // LocalClass creates the test's WaitForFirstConsumer class of local volumes and returns its
  // name; DynamicClass one named `<namespace>-<suffix>` whose provisioner is Provisioner() (the
  // tests' provisioner serves it when it runs); MakeClass any class, of binding mode
  // `mode`. TearDown deletes them.
  std::string LocalClass() {
    return MakeClass(ns_ + "-local", "kubernetes.io/no-provisioner");
  }
  std::string DynamicClass(const std::string& suffix) {
    return MakeClass(ns_ + "-" + suffix, Provisioner());
  }
  std::string Provisioner() const { return "example.com/" + ns_; }
  std::string MakeClass(const std::string& name, const std::string& provisioner,
                                        const std::string& mode = "WaitForFirstConsumer") {
    Create(Json{{"apiVersion", "storage.k8s.io/v1"},
                {"kind", "StorageClass"},
                {"metadata", {{"name", name}, {"labels", {{"schedhost-test", ns_}}}}},
                {"provisioner", provisioner},
                {"volumeBindingMode", mode}});
    return name;
  }

  // LocalVolume is a local PersistentVolume of `cls` on node `node`.
  Json LocalVolume(const std::string& name, const std::string& node, const std::string& size,
                   const std::string& cls) {
    return Json{
        {"apiVersion", "v1"},
        {"kind", "PersistentVolume"},
        {"metadata", {{"name", name}, {"labels", {{"schedhost-test", ns_}}}}},
        {"spec",
         {{"capacity", {{"storage", size}}},
          {"accessModes", Json::array({"ReadWriteOnce"})},
          {"storageClassName", cls},
          {"local", {{"path", "/mnt/" + name}}},
          {"nodeAffinity",
           {{"required",
             {{"nodeSelectorTerms",
               Json::array({{{"matchExpressions",
                              Json::array({{{"key", "kubernetes.io/hostname"},
                                            {"operator", "In"},
                                            {"values", Json::array({node})}}})}}})}}}}}}}};
  }
  Json Claim(const std::string& name, const std::string& cls, const std::string& size) {
    return Json{{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", name}, {"namespace", ns_}}},
                {"spec",
                 {{"accessModes", Json::array({"ReadWriteOnce"})},
                  {"storageClassName", cls},
                  {"resources", {{"requests", {{"storage", size}}}}}}}};
  }
  // BoundPair creates a volume of `size` and `modes` (with `extra` merged into its spec, and
  // `labels`) pre-bound to a claim `claim` of the test's namespace, and waits until the PV
  // controller bound them.
  void BoundPair(const std::string& claim, const std::string& size, const Json& modes,
                 const Json& extra = Json::object(), const Json& labels = Json::object()) {
    const std::string pv = ns_ + "-" + claim;
    Json volume = {{"apiVersion", "v1"},
                   {"kind", "PersistentVolume"},
                   {"metadata", {{"name", pv}, {"labels", labels}}},
                   {"spec",
                    {{"capacity", {{"storage", size}}},
                     {"accessModes", modes},
                     {"storageClassName", ""},
                     {"claimRef", {{"namespace", ns_}, {"name", claim}}}}}};
    volume["metadata"]["labels"]["schedhost-test"] = ns_;
    if (!extra.contains("csi")) volume["spec"]["hostPath"] = {{"path", "/tmp/" + pv}};
    volume["spec"].update(extra);
    Create(volume);
    Create(Json{{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", claim}, {"namespace", ns_}}},
                {"spec",
                 {{"accessModes", modes},
                  {"storageClassName", ""},
                  {"volumeName", pv},
                  {"resources", {{"requests", {{"storage", size}}}}}}}});
    ASSERT_TRUE(WaitFor([&] { return Get("pvc/" + claim, "{.status.phase}") == "Bound"; }))
        << Get("pvc/" + claim, "{.status}");
  }
  // PodWithClaims is a pod mounting `claims`, for `scheduler`.
  Json PodWithClaims(const std::string& name, const std::vector<std::string>& claims,
                     const std::string& scheduler = "schedhost") {
    Json pod = Pod(name, "100m", scheduler);
    pod["spec"]["volumes"] = Json::array();
    for (const std::string& c : claims) {
      pod["spec"]["volumes"].push_back({{"name", c}, {"persistentVolumeClaim", {{"claimName", c}}}});
    }
    return pod;
  }
  std::string Message(const std::string& pod) {
    return Condition(pod, "PodScheduled").value("message", "");
  }
  std::string Get(const std::string& what, const std::string& jsonpath) {
    return cp_->Kubectl({"get", what, "-n", ns_, "-o", "jsonpath=" + jsonpath}).out;
  }
  void TearDown() override {
    if (cp_ != nullptr && !ns_.empty()) {
      cp_->Kubectl({"delete", "pv", "-l", "schedhost-test=" + ns_, "--wait=false"});
      cp_->Kubectl({"delete", "storageclass", "-l", "schedhost-test=" + ns_, "--wait=false"});
    }
    KubeModeTest::TearDown();
  }
};

TEST_F(KubeStorageTest, AWaitForFirstConsumerClaimIsBoundWhereItsVolumeIsThenThePod) {
  AddNode(ns_ + "-a", "8", "16Gi");
  AddNode(ns_ + "-b", "2", "4Gi");
  const std::string cls = LocalClass();
  // Only node b has a volume big enough; a too-small one on node a.
  Create(LocalVolume(ns_ + "-small", ns_ + "-a", "1Gi", cls));
  Create(LocalVolume(ns_ + "-big", ns_ + "-b", "10Gi", cls));
  Create(Claim("data", cls, "5Gi"));
  StartHost(Config());
  Create(PodWithClaims("db", {"data"}));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("db") == ns_ + "-b"; }, std::chrono::seconds(60)))
      << NodeOf("db") << " " << Get("pvc/data", "{.status}");
  // The PV controller bound the claim to the volume schedhost chose, before the pod was bound.
  EXPECT_EQ(Get("pvc/data", "{.spec.volumeName}"), ns_ + "-big");
  EXPECT_EQ(Get("pvc/data", "{.status.phase}"), "Bound");
  EXPECT_EQ(cp_->Kubectl({"get", "pv", ns_ + "-small", "-o", "jsonpath={.status.phase}"}).out,
            "Available");
}

TEST_F(KubeStorageTest, AnEphemeralVolumesPodWaitsForItsClaimThenLands) {
  AddNode(ns_ + "-a", "8", "16Gi");
  const std::string cls = LocalClass();
  Create(LocalVolume(ns_ + "-scratch", ns_ + "-a", "2Gi", cls));
  StartHost(Config());
  Json pod = Pod("worker", "100m");
  pod["spec"]["volumes"] = Json::array(
      {{{"name", "scratch"},
        {"ephemeral",
         {{"volumeClaimTemplate",
           {{"spec",
             {{"accessModes", Json::array({"ReadWriteOnce"})},
              {"storageClassName", cls},
              {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}}}}}}});
  Create(pod);
  // The ephemeral volume controller makes worker-scratch, owned by the pod; the claim's event
  // requeues the pod, which then binds the claim to the local volume and lands.
  ASSERT_TRUE(WaitFor([&] { return NodeOf("worker") == ns_ + "-a"; }, std::chrono::seconds(60)))
      << NodeOf("worker") << " " << Get("pvc/worker-scratch", "{.status}");
  EXPECT_EQ(Get("pvc/worker-scratch", "{.spec.volumeName}"), ns_ + "-scratch");
}

// A pod whose claim does not exist waits saying so; the claim's creation (a PVC Add event)
// brings it back well before any periodic flush of unschedulable pods (5 min), and it lands.
TEST_F(KubeStorageTest, APodWaitsForItsMissingClaimAndLandsWhenItIsCreated) {
  AddNode(ns_ + "-a", "8", "16Gi");
  StartHost(Config());
  Create(PodWithClaims("late", {"late-data"}));
  ASSERT_TRUE(WaitFor([&] { return !Message("late").empty(); })) << Message("late");
  EXPECT_THAT(Message("late"), HasSubstr("persistentvolumeclaim \"late-data\" not found"));
  BoundPair("late-data", "1Gi", Json::array({"ReadWriteOnce"}));
  EXPECT_TRUE(WaitFor([&] { return NodeOf("late") == ns_ + "-a"; }, std::chrono::seconds(30)))
      << Message("late");
}

// A StorageClass whose binding mode this host does not know, as a newer API server might serve
// it (written to etcd behind kube-apiserver's back, so nothing validated it): the reflector
// skips and counts it, naming the field, and the watch goes on with the next class.
TEST_F(KubeStorageTest, AClassThisHostCannotReadIsSkippedAndTheWatchGoesOn) {
  StartHost(Config());
  const std::string future = ns_ + "-future";
  const Json stored = {{"apiVersion", "storage.k8s.io/v1"},
                       {"kind", "StorageClass"},
                       {"metadata",
                        {{"name", future},
                         {"uid", "5c4ed000-0000-4000-8000-00000000f00d"},
                         {"labels", {{"schedhost-test", ns_}}},
                         {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
                       {"provisioner", Provisioner()},
                       {"volumeBindingMode", "WhenTheMoonIsFull"}};
  cp_->EtcdPut("/registry/storageclasses/" + future, stored.dump());
  // The API server serves it as stored.
  ASSERT_TRUE(WaitFor([&] {
    return cp_->Kubectl({"get", "storageclass", future, "-o", "jsonpath={.volumeBindingMode}"})
               .out == "WhenTheMoonIsFull";
  }));
  const std::string after = LocalClass();  // a class this host reads, created next

  const auto decode_failures = [&] {
    return kube_->DeclaredStats("storageclasses.storage.k8s.io").value_or(ReflectorStats{})
        .decode_failures;
  };
  const auto mirrored = [&](const std::string& name) {
    const auto snapshot = host_->store().objects().Snapshot();
    const store::KindObjects* table = snapshot->Find("storageclasses.storage.k8s.io");
    return table != nullptr && table->Find("", name) != nullptr;
  };
  EXPECT_TRUE(WaitFor([&] { return mirrored(after); })) << "the watch stopped";
  EXPECT_FALSE(mirrored(future));
  EXPECT_GE(decode_failures(), 1u);
}

// schedhostd killed (SIGKILL) in PreBind, while it waits for a provisioner to make the volume
// of the node it chose: the pod stays pending, nothing else is written; once the provisioner
// (the test) made the volume and the PV controller bound the claim, the next schedhostd binds
// the pod to the node the claim's volume is on, once.
TEST_F(KubeStorageTest, SchedhostdKilledInPreBindLeavesNothingHalfDone) {
  if (!std::filesystem::exists(framework::testing::BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedhostd is not built in " << framework::testing::BinDir();
  }
  AddNode(ns_ + "-a", "8", "16Gi");
  AddNode(ns_ + "-b", "8", "16Gi");
  // A class whose provisioner nobody runs: PreBind sets the claim's selected node and waits.
  const std::string cls = DynamicClass("slow");
  Create(Claim("data", cls, "1Gi"));
  Create(PodWithClaims("db", {"data"}));

  const std::string kSelected = "{.metadata.annotations.volume\\.kubernetes\\.io/selected-node}";

  const pid_t first = SpawnReplica("storage-a");
  ASSERT_TRUE(WaitFor([&] { return !Get("pvc/data", kSelected).empty(); },
                      std::chrono::seconds(60)))
      << Get("pvc/data", "{.metadata}");
  const std::string node = Get("pvc/data", kSelected);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ::waitpid(first, nullptr, 0);
  EXPECT_EQ(NodeOf("db"), "") << "the pod was bound before its claim";

  // The provisioner's part: a volume on the selected node, its claimRef naming the claim.
  const std::string uid = Get("pvc/data", "{.metadata.uid}");
  Json volume = LocalVolume(ns_ + "-provisioned", node, "1Gi", cls);
  volume["metadata"]["annotations"] = {{"pv.kubernetes.io/provisioned-by", Provisioner()}};
  volume["spec"]["claimRef"] = {{"namespace", ns_}, {"name", "data"}, {"uid", uid}};
  Create(volume);
  ASSERT_TRUE(WaitFor([&] { return Get("pvc/data", "{.status.phase}") == "Bound"; }))
      << Get("pvc/data", "{.status}");

  const pid_t second = SpawnReplica("storage-b");
  ASSERT_TRUE(WaitFor([&] { return NodeOf("db") == node; }, std::chrono::seconds(60)))
      << "pod on \"" << NodeOf("db") << "\", claim " << Get("pvc/data", "{.metadata}");
  EXPECT_EQ(Get("pvc/data", "{.spec.volumeName}"), ns_ + "-provisioned");
  EXPECT_EQ(Get("pvc/data", kSelected), node);
  // One volume, the provisioned one, bound to the claim.
  EXPECT_EQ(cp_->Kubectl({"get", "pv", "-l", "schedhost-test=" + ns_, "-o",
                          "jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}"})
                .out,
            ns_ + "-provisioned=Bound ");
  ::kill(second, SIGTERM);  // gives the lease back for the tests that follow
  EXPECT_EQ(ExitStatus(second, std::chrono::seconds(30)), 0);
}

// ProvisionerProcess runs the tests' dynamic provisioner (tests/upstream/provisioner, on
// sig-storage-lib-external-provisioner) as `name`, with the admin's credentials, until the
// object goes; its log is log().
class ProvisionerProcess {
 public:
  ProvisionerProcess(const ControlPlane& cp, const std::string& name, int reschedule_first) {
    const std::filesystem::path exe = ControlPlane::Program("provisioner");
    if (exe.empty()) throw std::runtime_error("the provisioner is not built (upstream_binaries)");
    pid_ = SpawnLogged({exe.string(), "--kubeconfig", cp.admin_kubeconfig(), "--name", name,
                        "--reschedule-first", std::to_string(reschedule_first)},
                       log_path_);
  }
  ~ProvisionerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ProvisionerProcess(const ProvisionerProcess&) = delete;
  ProvisionerProcess& operator=(const ProvisionerProcess&) = delete;
  std::string log() const {
    std::ifstream in(log_path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Count is how many lines of the log contain `what`.
  int Count(const std::string& what) const {
    std::istringstream lines(log());
    int n = 0;
    for (std::string line; std::getline(lines, line);) n += line.find(what) != std::string::npos;
    return n;
  }

 private:
  framework::testing::TempDir dir_;
  std::filesystem::path log_path_ = dir_.path() / "provisioner.log";
  pid_t pid_ = -1;
};

// Dynamic provisioning of a WaitForFirstConsumer claim: schedhostd chooses the node in its
// cycle and writes it on the claim in PreBind; the provisioner makes a volume there, the PV
// controller binds it, and only then is the pod bound, to that node. When the provisioner
// cannot have the volume on the chosen node it removes the annotation: PreBind fails, the pod
// is tried again, and nothing is left half bound.
TEST_F(KubeStorageTest, AProvisionedClaimIsMadeOnTheChosenNodeEvenWhenTheFirstIsRefused) {
  AddNode(ns_ + "-a", "8", "16Gi");
  AddNode(ns_ + "-b", "8", "16Gi");
  const std::string cls = DynamicClass("dynamic");
  ProvisionerProcess running(*cp_, Provisioner(), /*reschedule_first=*/1);
  StartHost(Config());
  Create(Claim("data", cls, "2Gi"));
  Create(PodWithClaims("db", {"data"}));

  ASSERT_TRUE(WaitFor([&] { return !NodeOf("db").empty(); }, std::chrono::seconds(90)))
      << Message("db") << "\n" << running.log();
  const std::string node = NodeOf("db");
  const std::string volume = Get("pvc/data", "{.spec.volumeName}");
  EXPECT_EQ(Get("pvc/data", "{.status.phase}"), "Bound");
  EXPECT_EQ(Get("pvc/data", "{.metadata.annotations.volume\\.kubernetes\\.io/selected-node}"),
            node);
  // The volume is where the pod is.
  EXPECT_EQ(cp_->Kubectl({"get", "pv", volume, "-o",
                          "jsonpath={.spec.nodeAffinity.required.nodeSelectorTerms[0]"
                          ".matchExpressions[0].values[0]}"})
                .out,
            node);
  // One refusal (the annotation removed, the pod tried again), then one volume.
  EXPECT_EQ(running.Count("rescheduled " + ns_ + "/data from"), 1) << running.log();
  EXPECT_EQ(running.Count("for " + ns_ + "/data on "), 1) << running.log();
  EXPECT_EQ(cp_->Kubectl({"get", "pv", "-o",
                          "jsonpath={range .items[?(@.spec.storageClassName==\"" + cls +
                              "\")]}{.metadata.name} {end}"})
                .out,
            volume + " ");
  cp_->Kubectl({"delete", "pod", "db", "-n", ns_, "--wait=false"});
}

// VolumeRestrictions: a ReadWriteOncePod claim in use holds the next pod that asks for it;
// NodeVolumeLimits: a node's CSINode allows one volume of the driver; VolumeZone: a volume of
// zone b keeps its pod off the zone-a node.
TEST_F(KubeStorageTest, ClaimsInUseAttachLimitsAndZonesHoldPodsSayingWhy) {
  AddNode(ns_ + "-a", "8", "16Gi", Json{{"topology.kubernetes.io/zone", "a"}});
  Create(Json{{"apiVersion", "storage.k8s.io/v1"},
              {"kind", "CSINode"},
              {"metadata", {{"name", ns_ + "-a"}}},
              {"spec",
               {{"drivers",
                 Json::array({{{"name", "csi.example.com"},
                               {"nodeID", ns_ + "-a"},
                               {"allocatable", {{"count", 1}}}}})}}}});
  BoundPair("solo", "1Gi", Json::array({"ReadWriteOncePod"}));
  BoundPair("csi-1", "1Gi", Json::array({"ReadWriteOnce"}),
            {{"csi", {{"driver", "csi.example.com"}, {"volumeHandle", ns_ + "-h1"}}}});
  BoundPair("csi-2", "1Gi", Json::array({"ReadWriteOnce"}),
            {{"csi", {{"driver", "csi.example.com"}, {"volumeHandle", ns_ + "-h2"}}}});
  BoundPair("in-b", "1Gi", Json::array({"ReadWriteOnce"}), Json::object(),
            {{"topology.kubernetes.io/zone", "b"}});
  StartHost(Config());

  Create(PodWithClaims("first", {"solo", "csi-1"}));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("first") == ns_ + "-a"; })) << Message("first");
  Create(PodWithClaims("second", {"solo"}));
  Create(PodWithClaims("third", {"csi-2"}));
  Create(PodWithClaims("fourth", {"in-b"}));
  for (const char* pod : {"second", "third", "fourth"}) {
    ASSERT_TRUE(WaitFor([&] { return !Message(pod).empty(); })) << pod;
  }
  EXPECT_THAT(Message("second"),
              HasSubstr("1 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                        "access mode already in-use by another pod"));
  EXPECT_THAT(Message("third"), HasSubstr("1 node(s) exceed max volume count"));
  EXPECT_THAT(Message("fourth"), HasSubstr("1 node(s) had no available volume zone"));
  for (const char* pod : {"second", "third", "fourth"}) EXPECT_EQ(NodeOf(pod), "") << pod;
}

// The operator case, side by side on one control plane: the same objects, once for
// upstream kube-scheduler v1.37.2 (schedulerName default-scheduler) and once for schedhostd,
// land on the same node or wait with the same message.
TEST_F(KubeStorageTest, KubeSchedulerAndSchedhostdTreatTheSameClaimsAlike) {
  AddNode(ns_ + "-a", "8", "16Gi");
  AddNode(ns_ + "-b", "2", "4Gi");
  const std::string cls = LocalClass();
  // Dynamically provisioned claims too: a pod that only node a has room for (3 CPUs).
  const std::string dynamic = DynamicClass("dynamic");
  ProvisionerProcess running(*cp_, Provisioner(), /*reschedule_first=*/0);
  // An Immediate class no volume serves: its claims stay unbound.
  const std::string immediate =
      MakeClass(ns_ + "-immediate", "kubernetes.io/no-provisioner", "Immediate");
  StartHost(Config());
  for (const auto& [scheduler, s] : {std::pair{"default-scheduler", "ks"},
                                     std::pair{"schedhost", "sh"}}) {
    const std::string suffix = s;
    Create(Claim("dyn-" + suffix, dynamic, "3Gi"));
    Create(Claim("imm-" + suffix, immediate, "1Gi"));
    Create(PodWithClaims("imm-" + suffix, {"imm-" + suffix}, scheduler));
    Json wide = PodWithClaims("dyn-" + suffix, {"dyn-" + suffix}, scheduler);
    wide["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3";
    Create(wide);
    Create(LocalVolume(ns_ + "-local-" + suffix, ns_ + "-b", "10Gi", cls));
    Create(Claim("data-" + suffix, cls, "5Gi"));
    Create(Claim("big-" + suffix, cls, "50Gi"));
    Create(PodWithClaims("local-" + suffix, {"data-" + suffix}, scheduler));
    Create(PodWithClaims("missing-" + suffix, {"missing-" + suffix}, scheduler));
    Create(PodWithClaims("big-" + suffix, {"big-" + suffix}, scheduler));
  }
  for (const char* s : {"ks", "sh"}) {
    const std::string suffix = s;
    ASSERT_TRUE(WaitFor([&] { return NodeOf("local-" + suffix) == ns_ + "-b"; },
                        std::chrono::seconds(60)))
        << suffix << ": " << NodeOf("local-" + suffix) << " " << Message("local-" + suffix);
    EXPECT_EQ(Get("pvc/data-" + suffix, "{.spec.volumeName}"), ns_ + "-local-" + suffix);
    for (const char* pod : {"missing-", "big-", "imm-"}) {
      ASSERT_TRUE(WaitFor([&] { return !Message(pod + suffix).empty(); })) << pod << suffix;
    }
    // Provisioned where the pod lands, then bound.
    ASSERT_TRUE(WaitFor([&] { return NodeOf("dyn-" + suffix) == ns_ + "-a"; },
                        std::chrono::seconds(60)))
        << suffix << ": " << NodeOf("dyn-" + suffix) << " " << Message("dyn-" + suffix) << "\n"
        << running.log();
    EXPECT_EQ(Get("pvc/dyn-" + suffix, "{.status.phase}"), "Bound");
    EXPECT_EQ(
        Get("pvc/dyn-" + suffix, "{.metadata.annotations.volume\\.kubernetes\\.io/selected-node}"),
        ns_ + "-a");
  }
  EXPECT_EQ(running.Count(" on " + ns_ + "-a"), 2) << running.log();
  // The scheduling part of the message (up to what PostFilter appends), kube-scheduler's names
  // mapped to schedhost's.
  const auto fit = [](std::string message) {
    for (size_t at = message.find("-ks"); at != std::string::npos; at = message.find("-ks", at)) {
      message.replace(at, 3, "-sh");
    }
    return message.substr(0, message.find(". ") + 1);
  };
  EXPECT_EQ(fit(Message("missing-ks")), fit(Message("missing-sh")))
      << Message("missing-ks") << "\n" << Message("missing-sh");
  EXPECT_EQ(fit(Message("missing-sh")),
            "0/2 nodes are available: persistentvolumeclaim \"missing-sh\" not found.");
  EXPECT_EQ(fit(Message("imm-ks")), fit(Message("imm-sh")))
      << Message("imm-ks") << "\n" << Message("imm-sh");
  EXPECT_EQ(fit(Message("imm-sh")),
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
  EXPECT_EQ(fit(Message("big-ks")), fit(Message("big-sh")))
      << Message("big-ks") << "\n" << Message("big-sh");
  EXPECT_EQ(fit(Message("big-sh")),
            "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to "
            "bind.");
}

}  // namespace
}  // namespace schedhost::kube
