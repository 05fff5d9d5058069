// NodePool through its C ABI entry: the built node_pool.so is dlopened and negotiated by
// FakeHost exactly as schedhostd would, then Filter and Score run on hand-made views.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fake_host.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kPool = "example.com/pool";

class NodePoolTest : public ::testing::Test {
 protected:
  void SetUp() override { descriptor_ = host_.Load(NODE_POOL_LIBRARY, "NodePool"); }

  FakeHost host_;
  const schedhost_plugin_descriptor* descriptor_ = nullptr;
};

TEST_F(NodePoolTest, NegotiatesAbi1AndNamesItsPlugin) {
  EXPECT_EQ(host_.negotiation().plugin_abi_major, 1u);
  EXPECT_EQ(host_.negotiation().plugins_len, 1u);
  EXPECT_EQ(std::string_view(descriptor_->version.data, descriptor_->version.len), "1.0.0");
  // Only the extension points NodePool implements are set.
  EXPECT_NE(descriptor_->filter, nullptr);
  EXPECT_NE(descriptor_->score, nullptr);
  EXPECT_EQ(descriptor_->pre_filter, nullptr);
  EXPECT_EQ(descriptor_->normalize_score, nullptr);
}

TEST_F(NodePoolTest, PodWithPoolLabelFitsOnlyItsPool) {
  FakeHost::Instance plugin = host_.Create(descriptor_);
  auto pod = host_.MakePod("trainer", {{std::string(kPool), "gpu"}});
  auto gpu = host_.MakeNode("gpu-1", {{std::string(kPool), "gpu"}});
  auto other_pool = host_.MakeNode("batch-1", {{std::string(kPool), "batch"}});
  auto general = host_.MakeNode("general-1", {{"kubernetes.io/hostname", "general-1"}});

  EXPECT_EQ(host_.Filter(plugin, *pod, *gpu).code, SCHEDHOST_SUCCESS);
  for (const auto* node : {other_pool.get(), general.get()}) {
    SCOPED_TRACE(node->name);
    FakeHost::Result r = host_.Filter(plugin, *pod, *node);
    EXPECT_EQ(r.code, SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE);
    EXPECT_THAT(r.reasons, ElementsAre("node(s) not in pool gpu"));
  }
}

TEST_F(NodePoolTest, PodWithoutPoolLabelFitsEverywhereAndPrefersGeneralNodes) {
  FakeHost::Instance plugin = host_.Create(descriptor_);
  auto pod = host_.MakePod("web", {{"app", "web"}});
  auto gpu = host_.MakeNode("gpu-1", {{std::string(kPool), "gpu"}});
  auto general = host_.MakeNode("general-1", {});

  EXPECT_EQ(host_.Filter(plugin, *pod, *gpu).code, SCHEDHOST_SUCCESS);
  EXPECT_EQ(host_.Filter(plugin, *pod, *general).code, SCHEDHOST_SUCCESS);
  int64_t on_gpu = -1;
  int64_t on_general = -1;
  EXPECT_EQ(host_.Score(plugin, *pod, *gpu, &on_gpu).code, SCHEDHOST_SUCCESS);
  EXPECT_EQ(host_.Score(plugin, *pod, *general, &on_general).code, SCHEDHOST_SUCCESS);
  EXPECT_EQ(on_gpu, SCHEDHOST_MIN_NODE_SCORE);
  EXPECT_EQ(on_general, SCHEDHOST_MAX_NODE_SCORE);

  // A pod in a pool scores its (already filtered) pool nodes at the maximum.
  auto trainer = host_.MakePod("trainer", {{std::string(kPool), "gpu"}});
  int64_t trainer_on_gpu = -1;
  EXPECT_EQ(host_.Score(plugin, *trainer, *gpu, &trainer_on_gpu).code, SCHEDHOST_SUCCESS);
  EXPECT_EQ(trainer_on_gpu, SCHEDHOST_MAX_NODE_SCORE);
}

TEST_F(NodePoolTest, LabelIsConfigurable) {
  FakeHost::Instance plugin =
      host_.Create(descriptor_, FakeConfig::Table({{"label", FakeConfig::String("team")}}));
  auto pod = host_.MakePod("p", {{"team", "red"}});
  auto red = host_.MakeNode("red-1", {{"team", "red"}});
  auto default_label_only = host_.MakeNode("n", {{std::string(kPool), "red"}});
  EXPECT_EQ(host_.Filter(plugin, *pod, *red).code, SCHEDHOST_SUCCESS);
  EXPECT_EQ(host_.Filter(plugin, *pod, *default_label_only).code,
            SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE);
}

TEST_F(NodePoolTest, BadArgumentsFailCreateWithTheirLocation) {
  try {
    host_.Create(descriptor_, FakeConfig::Table({{"label", FakeConfig::String("not a label!")}}));
    FAIL() << "an invalid label name was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("test.toml:2:1: plugin_config.NodePool.label: \"not a "
                                    "label!\" is not a valid label name"));
  }
  try {
    host_.Create(descriptor_, FakeConfig::Table({{"lable", FakeConfig::String("x")}}));
    FAIL() << "an unknown key was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("plugin_config.NodePool.lable: unknown key"));
  }
  try {
    host_.Create(descriptor_, FakeConfig::Table({{"label", FakeConfig::Int(3)}}));
    FAIL() << "a non-string label was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected a string"));
  }
}

TEST_F(NodePoolTest, RequeuesOnNodeAddAndLabelChange) {
  FakeHost::Instance plugin = host_.Create(descriptor_);
  const schedhost_event_registration* events = nullptr;
  size_t len = 0;
  ASSERT_EQ(descriptor_->events_to_register(plugin.self, &events, &len), SCHEDHOST_SUCCESS);
  ASSERT_EQ(len, 1u);
  EXPECT_EQ(events[0].event.resource, SCHEDHOST_RESOURCE_NODE);
  EXPECT_EQ(events[0].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL);
}

}  // namespace
