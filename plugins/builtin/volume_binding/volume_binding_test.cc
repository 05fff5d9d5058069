// VolumeBinding loaded as a library into a profile built by the host: the claims it holds a
// pod for (with upstream's messages), the nodes a bound volume reaches, static matching and
// dynamic provisioning of WaitForFirstConsumer claims, the score, and PreBind's writes and
// wait, with a stand-in for the PV controller completing (or refusing) the binding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "host/config/config_tree.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/model/decode.h"
#include "host/store/object_write.h"
#include "plugins/builtin/volume_binding/storage_objects.h"

namespace schedhost::framework::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kNodes = R"(
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

// A local volume on `node`, of class `cls`, with `size`.
std::string LocalPv(std::string_view name, std::string_view node, std::string_view size,
                    std::string_view cls, std::string_view extra = "") {
  return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + std::string(name) +
         "}\nspec:\n  capacity: {storage: " + std::string(size) +
         "}\n  accessModes: [ReadWriteOnce]\n  storageClassName: " + std::string(cls) +
         "\n  local: {path: /mnt/disk}\n" + std::string(extra) +
         "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
         "        - {key: kubernetes.io/hostname, operator: In, values: [" +
         std::string(node) + "]}\nstatus: {phase: Available}\n---\n";
}

constexpr std::string_view kClasses = R"(
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: fast.csi.example.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a]}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard}
provisioner: standard.csi.example.com
volumeBindingMode: Immediate
---
)";

std::string Claim(std::string_view name, std::string_view cls, std::string_view size,
                  std::string_view extra = "") {
  return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + std::string(name) +
         ", namespace: default, uid: uid-" + std::string(name) + std::string(extra) +
         "}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " + std::string(cls) +
         "\n  resources: {requests: {storage: " + std::string(size) + "}}\n---\n";
}

std::string PodWith(std::string_view name, std::string_view volumes) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + std::string(name) +
         ", namespace: default, uid: pod-" + std::string(name) +
         "}\nspec:\n  containers: [{name: c, image: busybox}]\n  volumes:\n" +
         std::string(volumes);
}

class VolumeBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.OnlyPlugins({"NodeResourcesFit", "VolumeBinding"},
                   "[profile.plugin_config.VolumeBinding]\nbind_timeout_seconds = 2\n");
    h_.AddObjects(kNodes);
  }
  void AddGeneric(const std::string& yaml) {
    std::vector<model::GenericObject> generic;
    model::DecodeManifests(yaml, "test.yaml", {}, &generic);
    h_.framework();  // built, so that the kinds are declared
    h_.AddGeneric(generic);
  }
  std::string Schedule(std::string_view pod_yaml, std::string* failure = nullptr) {
    auto pod = h_.MakePod(pod_yaml);
    return h_.Schedule(*pod, failure);
  }
  const model::ValueNode* Object(std::string_view key, std::string_view ns,
                                 std::string_view name) {
    snapshot_ = h_.objects().Snapshot();
    const store::KindObjects* table = snapshot_->Find(key);
    const store::StoredObject* o = table == nullptr ? nullptr : table->Get(ns, name);
    return o == nullptr ? nullptr : o->tree.get();
  }
  std::string Json(std::string_view key, std::string_view ns, std::string_view name) {
    const model::ValueNode* o = Object(key, ns, name);
    return o == nullptr ? "" : model::ValueTreeToJson(*o);
  }
  void Patch(std::string_view resource, std::string_view ns, std::string_view name,
             const std::string& body) {
    const auto kind = h_.objects().FindKey(resource);
    ASSERT_TRUE(kind.has_value()) << resource;
    store::WriteObject(h_.objects(), *kind, store::ObjectWriteOp::kMergePatch, ns, name, body);
  }

  Harness h_;
  std::shared_ptr<const store::ObjectSnapshot> snapshot_;
};

// PvController stands in for kube-controller-manager's PV controller while it lives: a volume
// whose claimRef names a claim gets the claim bound to it; `on_selected` handles a claim that
// gained the selected-node annotation (provisioning).
class PvController {
 public:
  PvController(Harness& h, std::function<void(const model::ValueNode& claim)> on_selected = {})
      : h_(h), on_selected_(std::move(on_selected)), thread_([this] { Run(); }) {}
  ~PvController() {
    stop_ = true;
    thread_.join();
  }

 private:
  void Run() {
    while (!stop_) {
      auto snap = h_.objects().Snapshot();
      const store::KindObjects* pvs = snap->Find("persistentvolumes");
      const store::KindObjects* pvcs = snap->Find("persistentvolumeclaims");
      if (pvs != nullptr && pvcs != nullptr) {
        for (const auto& pv : pvs->items()) {
          const model::ValueNode* ref = pv->tree->Find("spec")->Find("claimRef");
          if (ref == nullptr) continue;
          const std::string ns = ref->Find("namespace")->string_value;
          const std::string name = ref->Find("name")->string_value;
          const store::StoredObject* pvc = pvcs->Get(ns, name);
          if (pvc == nullptr) continue;
          const model::ValueNode* spec = pvc->tree->Find("spec");
          if (spec->Find("volumeName") != nullptr) continue;
          Bind(ns, name, pv->name);
        }
        for (const auto& pvc : pvcs->items()) {
          const model::ValueNode* ann = pvc->tree->Find("metadata")->Find("annotations");
          if (ann == nullptr || ann->Find("volume.kubernetes.io/selected-node") == nullptr) continue;
          if (pvc->tree->Find("spec")->Find("volumeName") != nullptr) continue;
          if (on_selected_) on_selected_(*pvc->tree);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  void Bind(const std::string& ns, const std::string& name, const std::string& pv) {
    const auto kind = h_.objects().FindKey("persistentvolumeclaims");
    try {
      store::WriteObject(
          h_.objects(), *kind, store::ObjectWriteOp::kMergePatch, ns, name,
          R"({"metadata":{"annotations":{"pv.kubernetes.io/bind-completed":"yes"}},"spec":{"volumeName":")" +
              pv + R"("},"status":{"phase":"Bound"}})");
    } catch (const std::exception&) {
    }
  }

  Harness& h_;
  std::function<void(const model::ValueNode&)> on_selected_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(VolumeBindingTest, APodWithoutClaimsIsLeftAlone) {
  EXPECT_THAT(Schedule(PodWith("plain", "  - {name: s, emptyDir: {}}\n")),
              ::testing::AnyOf("n1", "n2"));
}

TEST_F(VolumeBindingTest, ClaimsThatCannotBeUsedHoldThePodWithUpstreamsMessages) {
  AddGeneric(std::string(kClasses) + Claim("lost", "local", "1Gi") +
             Claim("going", "local", "1Gi", ", deletionTimestamp: '2026-01-01T00:00:00Z'") +
             Claim("immediate", "standard", "1Gi") + Claim("not-mine-scratch", "local", "1Gi"));
  Patch("persistentvolumeclaims", "default", "lost",
        R"({"spec":{"volumeName":"gone"},"status":{"phase":"Lost"}})");
  std::string failure;
  const auto one = [&](std::string_view volume) {
    failure.clear();
    EXPECT_EQ(Schedule(PodWith("not-mine", volume), &failure), "");
    return failure;
  };
  EXPECT_THAT(one("  - {name: d, persistentVolumeClaim: {claimName: missing}}\n"),
              HasSubstr("persistentvolumeclaim \"missing\" not found"));
  EXPECT_THAT(one("  - {name: tmp, ephemeral: {volumeClaimTemplate: {spec: {}}}}\n"),
              HasSubstr("waiting for ephemeral volume controller to create the "
                        "persistentvolumeclaim \"not-mine-tmp\""));
  EXPECT_THAT(one("  - {name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}\n"),
              HasSubstr("PVC default/not-mine-scratch was not created for pod default/not-mine "
                        "(pod is not owner)"));
  EXPECT_THAT(one("  - {name: d, persistentVolumeClaim: {claimName: lost}}\n"),
              HasSubstr("persistentvolumeclaim \"lost\" bound to non-existent persistentvolume "
                        "\"gone\""));
  EXPECT_THAT(one("  - {name: d, persistentVolumeClaim: {claimName: going}}\n"),
              HasSubstr("persistentvolumeclaim \"going\" is being deleted"));
  EXPECT_THAT(one("  - {name: d, persistentVolumeClaim: {claimName: immediate}}\n"),
              HasSubstr("pod has unbound immediate PersistentVolumeClaims"));
}

TEST_F(VolumeBindingTest, ABoundClaimKeepsThePodWhereItsVolumeIs) {
  AddGeneric(std::string(kClasses) + LocalPv("pv-n2", "n2", "10Gi", "local") +
             Claim("data", "local", "5Gi",
                   ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}") +
             Claim("dangling", "local", "1Gi",
                   ", annotations: {pv.kubernetes.io/bind-completed: 'yes'}"));
  Patch("persistentvolumeclaims", "default", "data", R"({"spec":{"volumeName":"pv-n2"}})");
  Patch("persistentvolumeclaims", "default", "dangling", R"({"spec":{"volumeName":"nowhere"}})");
  const std::string pod = PodWith("db", "  - {name: d, persistentVolumeClaim: {claimName: data}}\n");
  auto p = h_.MakePod(pod);
  const auto results = h_.RunFilter(*p);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].node, "n1");
  EXPECT_THAT(results[0].status.Message(),
              HasSubstr("node(s) didn't match PersistentVolume's node affinity"));
  EXPECT_TRUE(results[1].status.ok()) << results[1].status.Message();
  EXPECT_EQ(Schedule(pod), "n2");
  // Nothing to write for a bound claim: the volume is not touched.
  EXPECT_EQ(Json("persistentvolumes", "", "pv-n2").find("claimRef"), std::string::npos);

  std::string failure;
  EXPECT_EQ(Schedule(PodWith("db2", "  - {name: d, persistentVolumeClaim: {claimName: dangling}}\n"),
                     &failure),
            "");
  EXPECT_THAT(failure, HasSubstr("node(s) unavailable due to one or more pvc(s) bound to "
                                 "non-existent pv(s)"));
}

TEST_F(VolumeBindingTest, AWaitForFirstConsumerClaimIsMatchedBoundAndWaitedFor) {
  AddGeneric(std::string(kClasses) + LocalPv("small-n1", "n1", "5Gi", "local") +
             LocalPv("big-n2", "n2", "10Gi", "local") + LocalPv("tiny-n1", "n1", "1Gi", "local") +
             Claim("data", "local", "3Gi"));
  const std::string pod = PodWith("db", "  - {name: d, persistentVolumeClaim: {claimName: data}}\n");
  // Both nodes have a volume that fits; the score prefers the less used one (3 of 10 Gi).
  std::vector<ScoredNode> scored;
  ASSERT_TRUE(h_.RunScoreDetailed(*h_.MakePod(pod), scored).ok());
  ASSERT_EQ(scored.size(), 2u);
  EXPECT_EQ(scored[0].raw.back(), 40);  // n1: 3 of 5 Gi, 60% used
  EXPECT_EQ(scored[1].raw.back(), 70);  // n2: 3 of 10 Gi, 30% used
  PvController controller(h_);
  EXPECT_EQ(Schedule(pod), "n2");
  // PreBind wrote the volume's claimRef and waited for the controller to bind the claim.
  const model::ValueNode* pv = Object("persistentvolumes", "", "big-n2");
  ASSERT_NE(pv, nullptr);
  const model::ValueNode* ref = pv->Find("spec")->Find("claimRef");
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->Find("namespace")->string_value, "default");
  EXPECT_EQ(ref->Find("name")->string_value, "data");
  EXPECT_EQ(ref->Find("uid")->string_value, "uid-data");
  EXPECT_EQ(ref->Find("kind")->string_value, "PersistentVolumeClaim");
  EXPECT_THAT(Json("persistentvolumeclaims", "default", "data"), HasSubstr(R"("volumeName":"big-n2")"));
  EXPECT_EQ(Json("persistentvolumes", "", "small-n1").find("claimRef"), std::string::npos);
}

TEST_F(VolumeBindingTest, AVolumeChosenForOnePodIsNotChosenForTheNext) {
  AddGeneric(std::string(kClasses) + LocalPv("only", "n1", "5Gi", "local") +
             Claim("a", "local", "1Gi") + Claim("b", "local", "1Gi"));
  auto first = h_.MakePod(PodWith("first", "  - {name: d, persistentVolumeClaim: {claimName: a}}\n"));
  auto second =
      h_.MakePod(PodWith("second", "  - {name: d, persistentVolumeClaim: {claimName: b}}\n"));
  // Reserve assumes the volume for the first pod; until the API server says otherwise, the
  // second pod finds none.
  CycleState state;
  Framework& fw = h_.framework();
  ASSERT_TRUE(fw.RunPreFilterPlugins(state, first->view()).second.ok());
  ASSERT_TRUE(fw.RunFilterPlugins(state, first->view(), h_.snapshot().views()[0]).ok());
  ASSERT_TRUE(fw.RunReservePluginsReserve(state, first->view(), "n1").ok());
  std::string failure;
  EXPECT_EQ(h_.Schedule(*second, &failure), "");
  EXPECT_THAT(failure, HasSubstr("node(s) didn't find available persistent volumes to bind"));
  // Unreserve gives it back.
  fw.RunReservePluginsUnreserve(state, first->view(), "n1");
  const auto results = h_.RunFilter(*second);
  EXPECT_TRUE(results[0].status.ok()) << results[0].status.Message();
}

TEST_F(VolumeBindingTest, ProvisioningFollowsTheClassTopologyAndTheDriversCapacity) {
  AddGeneric(std::string(kClasses) + Claim("fresh", "fast", "5Gi"));
  const std::string pod =
      PodWith("app", "  - {name: d, persistentVolumeClaim: {claimName: fresh}}\n");
  auto p = h_.MakePod(pod);
  auto results = h_.RunFilter(*p);
  EXPECT_TRUE(results[0].status.ok()) << results[0].status.Message();  // zone a
  EXPECT_THAT(results[1].status.Message(),
              HasSubstr("node(s) didn't find available persistent volumes to bind"));
  // A driver that publishes capacity: zone a has 2 Gi, too little for 5 Gi.
  AddGeneric(R"(
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: fast.csi.example.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: zone-a, namespace: kube-system}
storageClassName: fast
capacity: 2Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
)");
  results = h_.RunFilter(*p);
  EXPECT_THAT(results[0].status.Message(), HasSubstr("node(s) did not have enough free storage"));
  Patch("csistoragecapacities.storage.k8s.io", "kube-system", "zone-a", R"({"capacity":"20Gi"})");
  results = h_.RunFilter(*p);
  EXPECT_TRUE(results[0].status.ok()) << results[0].status.Message();
  // Bound by a provisioner that makes the volume on the selected node.
  PvController controller(h_, [this](const model::ValueNode& claim) {
    try {
      AddGeneric(LocalPv("pvc-fresh", "n1", "5Gi", "fast",
                         "  claimRef: {namespace: default, name: fresh, uid: uid-fresh}\n"));
    } catch (const std::exception&) {
    }
    (void)claim;
  });
  EXPECT_EQ(Schedule(pod), "n1");
  EXPECT_THAT(Json("persistentvolumeclaims", "default", "fresh"),
              HasSubstr(R"("volume.kubernetes.io/selected-node":"n1")"));
  EXPECT_THAT(Json("persistentvolumeclaims", "default", "fresh"),
              HasSubstr(R"("volumeName":"pvc-fresh")"));
}

TEST_F(VolumeBindingTest, PreBindFailsWhenTheProvisionerGivesUpOrNothingBinds) {
  AddGeneric(std::string(kClasses) + Claim("fresh", "fast", "1Gi") +
             LocalPv("pv-n1", "n1", "5Gi", "local") + Claim("data", "local", "1Gi"));
  // The provisioner removes the annotation: the pod fails and may be retried.
  {
    PvController controller(h_, [this](const model::ValueNode& claim) {
      try {
        Patch("persistentvolumeclaims", "default", claim.Find("metadata")->Find("name")->string_value,
              R"({"metadata":{"annotations":{"volume.kubernetes.io/selected-node":null}}})");
      } catch (const std::exception&) {
      }
    });
    std::string failure;
    EXPECT_EQ(Schedule(PodWith("app", "  - {name: d, persistentVolumeClaim: {claimName: fresh}}\n"),
                       &failure),
              "");
    EXPECT_THAT(failure, HasSubstr("binding volumes: selectedNode annotation reset for PVC \"fresh\""));
  }
  // No PV controller at all: PreBind gives up after bind_timeout_seconds.
  std::string failure;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Schedule(PodWith("db", "  - {name: d, persistentVolumeClaim: {claimName: data}}\n"),
                     &failure),
            "");
  EXPECT_THAT(failure, HasSubstr("binding volumes: context deadline exceeded"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(VolumeBindingTest, ArgumentsAreCheckedAsUpstreamChecksThem) {
  Harness h;
  h.OnlyPlugins({"VolumeBinding"},
                "[profile.plugin_config.VolumeBinding]\nshape = [{ utilization = 50, score = 1 },"
                " { utilization = 10, score = 2 }]\n");
  try {
    h.framework();
    ADD_FAILURE() << "an unsorted shape was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("values must be sorted in increasing order"));
  }
  Harness negative;
  negative.OnlyPlugins({"VolumeBinding"},
                       "[profile.plugin_config.VolumeBinding]\nbind_timeout_seconds = -1\n");
  EXPECT_THROW(negative.framework(), std::exception);
}

// The decode cache keeps what is read and lets go of objects nobody reads any more (deleted
// claims, say): it never holds many more than twice the objects still in use.
TEST(StorageVersionCache, DropsObjectsNoLongerReadAndKeepsTheOthers) {
  using Cache = plugins::storage::VersionCache<std::string>;
  Cache cache;
  int decodes = 0;
  const auto decode = [&decodes](const schedhost::Args& object) {
    ++decodes;
    return object["metadata"]["name"].String("");
  };
  const auto object = [](const std::string& name, int version) {
    return std::shared_ptr<const config::ConfigNode>(
        std::make_shared<config::ConfigNode>(model::ValueTreeFromJson(
            R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" +
                std::to_string(version) + R"("}})",
            "Object " + name)));
  };
  const schedhost_host_api* api = HostApi();
  const auto get = [&](const std::string& name, int version) {
    const auto tree = object(name, version);
    return *cache.Get(name, schedhost::Args(api, config::AsAbi(tree.get())), decode);
  };

  EXPECT_EQ(get("kept", 1), "kept");
  EXPECT_EQ(get("kept", 1), "kept");
  EXPECT_EQ(decodes, 1);  // the same version again: decoded once
  EXPECT_EQ(get("kept", 2), "kept");
  EXPECT_EQ(decodes, 2);  // a new version: decoded again
  // A churn of objects read once each, while "kept" is read all along.
  for (int i = 0; i < 20000; ++i) {
    get("gone-" + std::to_string(i), 1);
    if (i % 1000 == 0) get("kept", 2);
  }
  EXPECT_LE(cache.size(), 2 * Cache::kMinLimit);
  const int before = decodes;
  EXPECT_EQ(get("kept", 2), "kept");
  EXPECT_EQ(decodes, before);  // still cached
}

}  // namespace
}  // namespace schedhost::framework::testing
