// Nothing is bound on a guess: a pod that uses a part of the spec whose scheduling meaning the
// host does not evaluate itself (a PersistentVolumeClaim, an ephemeral volume, an in-tree disk,
// a DRA claim, a volume source it does not know, a node feature the node must declare) is
// scheduled only by a profile with a plugin that evaluates that part (the descriptor's
// `evaluates`, abi 1.7); the default profile's VolumeBinding evaluates claims. Otherwise it stays pending,
// UnschedulableAndUnresolvable, with the part named; pods without such parts are untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/framework/testing/fake_plugin.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using ::testing::HasSubstr;

// WithVolume is a one-cpu pod with `volume` (YAML flow mapping) as its only volume.
std::string WithVolume(const std::string& name, const std::string& volume) {
  return PodYaml(name, "1", "  volumes: [" + volume + "]\n");
}

class NeverBlindTest : public SchedulerTest {};

TEST_F(NeverBlindTest, TheDefaultProfileHoldsPodsWithPartsNoPluginEvaluatesSayingWhy) {
  Build();
  Apply(NodeYaml("n1", "8") +
        WithVolume("disk", "{name: data, vsphereVolume: {volumePath: data-0}}") +
        WithVolume("odd", "{name: tmp, someFutureSource: {}}") +
        WithVolume("claimed", "{name: data, persistentVolumeClaim: {claimName: data-0}}") +
        WithVolume("ephemeral", "{name: tmp, ephemeral: {volumeClaimTemplate: {spec: {}}}}") +
        PodYaml("dra", "1", "  resourceClaims: [{name: gpu, resourceClaimName: gpu-0}]\n") +
        PodYaml("userns", "1", "  hostNetwork: true\n  hostUsers: false\n") +
        WithVolume("scratch", "{name: scratch, emptyDir: {}}") +
        WithVolume("config", "{name: conf, configMap: {name: conf}}"));
  Run();
  EXPECT_EQ(NodeOf("disk"), "");
  EXPECT_EQ(MessageOf("disk"),
            "0/1 nodes are available: pod's volume \"data\" at "
            "spec.volumes[0].vsphereVolume needs a plugin that evaluates "
            "spec.volumes.vsphereVolume, and profile \"default-scheduler\" has none. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  EXPECT_EQ(NodeOf("odd"), "");
  EXPECT_THAT(MessageOf("odd"),
              HasSubstr("volume \"tmp\" at spec.volumes[0].someFutureSource needs a plugin that "
                        "evaluates spec.volumes.someFutureSource"));
  EXPECT_EQ(NodeOf("dra"), "");
  EXPECT_THAT(MessageOf("dra"), HasSubstr("resource claim \"gpu\" at spec.resourceClaims[0] needs "
                                          "a plugin that evaluates spec.resourceClaims"));
  EXPECT_EQ(Where("disk"), queue::PodLocation::kUnschedulable);
  EXPECT_EQ(NodeOf("userns"), "");
  EXPECT_THAT(MessageOf("userns"),
              HasSubstr("pod's node declared feature UserNamespacesHostNetworkSupport at "
                        "spec.hostUsers needs a plugin that evaluates nodeDeclaredFeatures"));
  // Claims and ephemeral volumes are VolumeBinding's: a missing claim holds the pod with
  // upstream's message.
  EXPECT_EQ(NodeOf("claimed"), "");
  EXPECT_THAT(MessageOf("claimed"), HasSubstr("persistentvolumeclaim \"data-0\" not found"));
  EXPECT_THAT(MessageOf("ephemeral"),
              HasSubstr("waiting for ephemeral volume controller to create the "
                        "persistentvolumeclaim \"ephemeral-tmp\""));
  // Volumes without a meaning for scheduling need nothing.
  EXPECT_EQ(NodeOf("scratch"), "n1");
  EXPECT_EQ(NodeOf("config"), "n1");
}

TEST_F(NeverBlindTest, APluginThatEvaluatesThePartLetsThePodThroughAndOnlyThatPart) {
  framework::testing::FakePlugin& claims = fakes_.Add("ClaimAware");
  int filtered = 0;
  claims.filter = [&](const schedhost_cycle_state*, const schedhost_pod_view*,
                      const schedhost_node_info_view*, framework::testing::Reasons&) {
    ++filtered;
    return SCHEDHOST_SUCCESS;
  };
  claims.evaluates = {"spec.volumes.persistentVolumeClaim"};
  // Without the default profile's volume plugins, ClaimAware alone evaluates claims.
  Build("[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.filter]\n"
        "enabled = [{ name = \"ClaimAware\" }]\n[profile.plugins.multi_point]\n"
        "disabled = [{ name = \"VolumeRestrictions\" }, { name = \"NodeVolumeLimits\" }, "
        "{ name = \"VolumeBinding\" }, { name = \"VolumeZone\" }]\n",
        {claims.descriptor()});
  Apply(NodeYaml("n1", "8") +
        WithVolume("claimed", "{name: data, persistentVolumeClaim: {claimName: data-0}}") +
        WithVolume("disk", "{name: d, awsElasticBlockStore: {volumeID: v}}"));
  Run();
  EXPECT_EQ(NodeOf("claimed"), "n1");
  EXPECT_GT(filtered, 0) << "the plugin that evaluates claims saw the pod";
  EXPECT_EQ(NodeOf("disk"), "");
  EXPECT_THAT(MessageOf("disk"), HasSubstr("needs a plugin that evaluates "
                                           "spec.volumes.awsElasticBlockStore"));
}

TEST_F(NeverBlindTest, APartNoHostAsksAboutIsRefusedWhenTheProfileIsBuilt) {
  framework::testing::FakePlugin& odd = fakes_.Add("Odd");
  odd.filter = [](const schedhost_cycle_state*, const schedhost_pod_view*,
                  const schedhost_node_info_view*, framework::testing::Reasons&) {
    return SCHEDHOST_SUCCESS;
  };
  odd.evaluates = {"spec.containers"};
  try {
    Build("[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.filter]\n"
          "enabled = [{ name = \"Odd\" }]\n",
          {odd.descriptor()});
    ADD_FAILURE() << "a plugin evaluating spec.containers was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("plugin \"Odd\": evaluates[0] \"spec.containers\" is not a "
                                    "part of a pod the host asks plugins about"));
  }
}

}  // namespace
}  // namespace schedhost::integration
