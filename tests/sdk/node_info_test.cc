// schedhost::NodeInfo (sdk/include/schedhost/plugin.hpp) over a bare view: has_node() tells a
// view with its node from one without (pods bound to a node the host has not seen).
#include <gtest/gtest.h>

#include <schedhost/plugin.hpp>

namespace schedhost {
namespace {

TEST(NodeInfoTest, HasNodeSaysWhetherTheViewCarriesItsNode) {
  schedhost_node_view node{};
  schedhost_node_info_view with{};
  with.node = &node;
  EXPECT_TRUE(NodeInfo(&with).has_node());

  schedhost_node_info_view without{};
  EXPECT_FALSE(NodeInfo(&without).has_node());
  EXPECT_EQ(NodeInfo(&without).pod_count(), 0u);
}

}  // namespace
}  // namespace schedhost
