// store::VolumeController: the PV controller and provisioner `schedctl simulate` plays — a
// volume's phase, the bindings a claimRef asks for, Immediate claims matched to the smallest
// volume that fits, and provisioning (WaitForFirstConsumer only once a node is selected).
#include "host/store/volume_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "host/model/decode.h"
#include "host/store/object_write.h"

namespace schedhost::store {
namespace {

using Json = nlohmann::json;

const KindInfo kClaims{"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true};
const KindInfo kVolumes{"", "v1", "persistentvolumes", "PersistentVolume", false};
const KindInfo kClasses{"storage.k8s.io", "v1", "storageclasses", "StorageClass", false};

class VolumeControllerTest : public ::testing::Test {
 protected:
  VolumeControllerTest() {
    objects_.Declare(std::vector<KindInfo>{kClaims, kVolumes, kClasses});
  }
  void Create(const KindInfo& kind, const std::string& ns, const Json& object) {
    WriteObject(objects_, kind, ObjectWriteOp::kCreate, ns,
                object["metadata"]["name"].get<std::string>(), object.dump());
  }
  Json Get(const KindInfo& kind, const std::string& ns, const std::string& name) {
    const KindObjects* table = objects_.Snapshot()->Find(kind.Key());
    const StoredObject* o = table == nullptr ? nullptr : table->Get(ns, name);
    return o == nullptr ? Json() : Json::parse(model::ValueTreeToJson(*o->tree));
  }
  static Json Claim(const std::string& name, const std::string& cls, const std::string& size) {
    return {{"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec",
             {{"accessModes", {"ReadWriteOnce"}},
              {"storageClassName", cls},
              {"resources", {{"requests", {{"storage", size}}}}}}}};
  }
  static Json Volume(const std::string& name, const std::string& cls, const std::string& size) {
    return {{"metadata", {{"name", name}}},
            {"spec",
             {{"accessModes", {"ReadWriteOnce"}},
              {"storageClassName", cls},
              {"capacity", {{"storage", size}}}}}};
  }
  static Json Class(const std::string& name, const std::string& provisioner,
                    const std::string& mode) {
    return {{"metadata", {{"name", name}}},
            {"provisioner", provisioner},
            {"volumeBindingMode", mode}};
  }

  ObjectStore objects_;
  VolumeController controller_{objects_, [](std::string_view node) {
                                 return std::optional<std::string>("host-" + std::string(node));
                               }};
};

TEST_F(VolumeControllerTest, GivesVolumesTheirPhaseAndCompletesPreBoundPairs) {
  Create(kVolumes, "", Volume("free", "", "1Gi"));
  EXPECT_EQ(Get(kVolumes, "", "free")["status"]["phase"], "Available");
  Json bound = Volume("mine", "", "1Gi");
  bound["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "data"}};
  Create(kVolumes, "", bound);
  EXPECT_EQ(Get(kVolumes, "", "mine")["status"]["phase"], "Available") << "no claim yet";
  Create(kClaims, "default", Claim("data", "", "1Gi"));
  const Json claim = Get(kClaims, "default", "data");
  EXPECT_EQ(claim["spec"]["volumeName"], "mine");
  EXPECT_EQ(claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"], "yes");
  EXPECT_EQ(claim["status"]["phase"], "Bound");
  const Json volume = Get(kVolumes, "", "mine");
  EXPECT_EQ(volume["status"]["phase"], "Bound");
  EXPECT_EQ(volume["spec"]["claimRef"]["uid"], claim["metadata"]["uid"]);
  EXPECT_EQ(Get(kVolumes, "", "free")["status"]["phase"], "Available") << "left alone";
}

TEST_F(VolumeControllerTest, BindsAnImmediateClaimToTheSmallestVolumeThatFits) {
  Create(kClasses, "", Class("slow", "kubernetes.io/no-provisioner", "Immediate"));
  Create(kVolumes, "", Volume("big", "slow", "10Gi"));
  Create(kVolumes, "", Volume("small", "slow", "2Gi"));
  Create(kVolumes, "", Volume("tiny", "slow", "1Gi"));
  Create(kVolumes, "", Volume("other-class", "fast", "2Gi"));
  Create(kClaims, "default", Claim("data", "slow", "2Gi"));
  EXPECT_EQ(Get(kClaims, "default", "data")["spec"]["volumeName"], "small");
  EXPECT_EQ(Get(kVolumes, "", "small")["status"]["phase"], "Bound");
  EXPECT_FALSE(Get(kVolumes, "", "big")["spec"].contains("claimRef"));
}

TEST_F(VolumeControllerTest, ProvisionsAWaitForFirstConsumerClaimOnceANodeIsSelected) {
  Create(kClasses, "", Class("local", "local.csi.example.com", "WaitForFirstConsumer"));
  Create(kClaims, "default", Claim("data", "local", "5Gi"));
  EXPECT_FALSE(Get(kClaims, "default", "data")["spec"].contains("volumeName"))
      << "waits for the scheduler";
  WriteObject(objects_, kClaims, ObjectWriteOp::kMergePatch, "default", "data",
              R"({"metadata":{"annotations":{"volume.kubernetes.io/selected-node":"n1"}}})");
  const Json claim = Get(kClaims, "default", "data");
  const std::string name = claim["spec"]["volumeName"];
  EXPECT_EQ(name, "pvc-" + claim["metadata"]["uid"].get<std::string>());
  const Json volume = Get(kVolumes, "", name);
  EXPECT_EQ(volume["spec"]["capacity"]["storage"], std::to_string(int64_t{5} << 30));
  EXPECT_EQ(volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]
                  ["matchExpressions"][0]["values"][0],
            "host-n1");
  EXPECT_EQ(volume["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"],
            "local.csi.example.com");
  EXPECT_EQ(claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"], "yes");
  EXPECT_GT(controller_.writes(), 0u);
}

TEST_F(VolumeControllerTest, ActsOnlyWhenClaimsAndVolumesAreDeclared) {
  ObjectStore bare;
  bare.Declare(kClasses);
  VolumeController idle(bare, nullptr);
  WriteObject(bare, kClasses, ObjectWriteOp::kCreate, "", "local",
              Class("local", "x", "Immediate").dump());
  idle.Reconcile();
  EXPECT_EQ(idle.writes(), 0u);
}

}  // namespace
}  // namespace schedhost::store
