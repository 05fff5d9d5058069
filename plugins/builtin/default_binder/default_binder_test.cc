// DefaultBinder through the real framework: the chosen node is bound through the host's
// bind_pod (upstream pkg/scheduler/framework/plugins/defaultbinder behaviour: a failed
// binding is an Error).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;

constexpr char kCluster[] = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

constexpr char kPod[] = R"(
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: c, image: nginx}]
)";

TEST(DefaultBinderTest, BindsTheChosenNode) {
  Harness h;
  h.OnlyPlugins({});
  h.AddObjects(kCluster);
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(kPod), &failure), "n1") << failure;
  EXPECT_EQ(h.bindings(), std::vector<std::string>{"shop/web -> n1"});
}

TEST(DefaultBinderTest, HostRefusalIsAnError) {
  Harness h;
  h.OnlyPlugins({});
  h.AddObjects(kCluster);
  auto pod = h.MakePod(kPod);
  h.framework().SetBinder([](const schedhost_pod_view*, std::string_view) {
    return framework::Status::Error("pod shop/web is already bound");
  });
  framework::CycleState state;
  framework::Status s = h.framework().RunBindPlugins(state, pod->view(), "n1");
  EXPECT_EQ(s.code, Code::kError);
  // The host's own reason is relayed, with the plugin's context after it.
  EXPECT_EQ(s.Message(),
            "running Bind plugin \"DefaultBinder\": pod shop/web is already bound, binding pod "
            "shop/web to node n1");
  EXPECT_TRUE(h.bindings().empty());

  std::string failure;
  EXPECT_EQ(h.Schedule(*pod, &failure), "");
  EXPECT_NE(failure.find("binding pod shop/web to node n1"), std::string::npos) << failure;
}

TEST(DefaultBinderTest, HostWithoutClusterStateIsAnError) {
  Harness h;
  h.OnlyPlugins({});
  h.AddObjects(kCluster);
  auto pod = h.MakePod(kPod);
  h.framework().SetBinder(nullptr);
  framework::CycleState state;
  framework::Status s = h.framework().RunBindPlugins(state, pod->view(), "n1");
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(),
            "running Bind plugin \"DefaultBinder\": bind_pod: this host has no cluster state to "
            "bind to, binding pod shop/web to node n1");
}

TEST(DefaultBinderTest, RegistersNoEvents) {
  // Upstream's DefaultBinder and PrioritySort never reject a pod in Filter, so they have no
  // EnqueueExtensions.
  Harness h;
  h.OnlyPlugins({});
  for (const auto& [plugin, events] : h.framework().EventsToRegister()) {
    EXPECT_NE(plugin, "DefaultBinder");
    EXPECT_NE(plugin, "PrioritySort");
  }
}

TEST(DefaultBinderTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({}, "[profile.plugin_config.DefaultBinder]\ntimeout = \"5s\"\n");
  try {
    h.framework();
    FAIL() << "a profile with DefaultBinder arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(), ::testing::ContainsRegex(
                              R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.DefaultBinder\.timeout: )"
                              R"(DefaultBinder takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
