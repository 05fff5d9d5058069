// NodePorts through the real framework: a wanted (protocol, hostIP, hostPort) conflicts with one
// in use on the node when protocol and port match and the IPs are equal or either is the
// wildcard (upstream pkg/scheduler/framework/plugins/nodeports and HostPortInfo behaviour).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "host/framework/cycle_state.h"
#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;

constexpr char kReason[] = "node(s) didn't have free ports for the requested pod ports";

constexpr char kNode[] = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

// Port renders one container port with a host port, e.g. Port("UDP", "127.0.0.1", 8080).
std::string Port(const std::string& protocol, const std::string& ip, int port) {
  std::string p = "{containerPort: " + std::to_string(port) + ", hostPort: " + std::to_string(port);
  if (!protocol.empty()) p += ", protocol: " + protocol;
  if (!ip.empty()) p += ", hostIP: \"" + ip + "\"";
  return p + "}";
}

// PodYaml renders a pod (bound to `node` when non-empty) whose one container has `ports`.
std::string PodYaml(const std::string& name, const std::string& node,
                    const std::vector<std::string>& ports) {
  std::string yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n";
  if (!node.empty()) yaml += "  nodeName: " + node + "\n";
  yaml += "  containers:\n  - name: c\n    image: busybox\n";
  if (!ports.empty()) {
    yaml += "    ports: [";
    for (size_t i = 0; i < ports.size(); ++i) yaml += (i ? ", " : "") + ports[i];
    yaml += "]\n";
  }
  return yaml;
}

struct Case {
  std::string name;
  std::vector<std::string> used;    // host ports of a pod already bound to n1
  std::vector<std::string> wanted;  // host ports of the pod being scheduled
  bool fits;

  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class NodePortsFilterTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodePortsFilterTest, DetectsConflicts) {
  const Case& c = GetParam();
  Harness h;
  h.OnlyPlugins({"NodePorts"});
  h.AddObjects(kNode);
  if (!c.used.empty()) h.AddObjects(PodYaml("existing", "n1", c.used));
  auto results = h.RunFilter(*h.MakePod(PodYaml("incoming", "", c.wanted)));
  ASSERT_EQ(results.size(), 1u);
  const auto& s = results[0].status;
  if (c.fits) {
    EXPECT_EQ(s.code, Code::kSuccess) << s.Message();
  } else {
    EXPECT_EQ(s.code, Code::kUnschedulable);
    EXPECT_EQ(s.reasons, schedhost::framework::Reasons{kReason});
    EXPECT_EQ(s.plugin, "NodePorts");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodePortsFilterTest,
    ::testing::Values(
        Case{"no_ports_anywhere", {}, {}, true},
        Case{"pod_without_ports_ignores_used_ports", {Port("TCP", "", 80)}, {}, true},
        Case{"free_node", {}, {Port("TCP", "", 80)}, true},
        Case{"same_port_other_protocol",
             {Port("UDP", "127.0.0.1", 8080)},
             {Port("TCP", "127.0.0.1", 8080)},
             true},
        Case{"same_protocol_ip_and_port",
             {Port("UDP", "127.0.0.1", 8080)},
             {Port("UDP", "127.0.0.1", 8080)},
             false},
        Case{"same_port_other_ip",
             {Port("TCP", "127.0.0.2", 8080)},
             {Port("TCP", "127.0.0.1", 8080)},
             true},
        Case{"second_wanted_port_conflicts",
             {Port("UDP", "127.0.0.1", 8080)},
             {Port("UDP", "127.0.0.1", 8000), Port("UDP", "127.0.0.1", 8080)},
             false},
        Case{"wanted_wildcard_vs_used_specific",
             {Port("TCP", "127.0.0.1", 8001)},
             {Port("TCP", "0.0.0.0", 8001)},
             false},
        Case{"wanted_specific_vs_used_wildcard",
             {Port("TCP", "0.0.0.0", 8001)},
             {Port("TCP", "10.0.10.10", 8001)},
             false},
        Case{"wildcards_other_protocol",
             {Port("UDP", "0.0.0.0", 8001)},
             {Port("TCP", "0.0.0.0", 8001)},
             true},
        // An empty hostIP binds every address, like 0.0.0.0.
        Case{"empty_ip_is_wildcard",
             {Port("TCP", "", 8001)},
             {Port("TCP", "10.0.10.10", 8001)},
             false},
        Case{"empty_ip_vs_explicit_wildcard",
             {Port("TCP", "0.0.0.0", 8001)},
             {Port("TCP", "", 8001)},
             false},
        // An absent protocol means TCP.
        Case{"default_protocol_is_tcp", {Port("TCP", "", 9000)}, {Port("", "", 9000)}, false},
        Case{"default_protocol_is_not_udp", {Port("UDP", "", 9000)}, {Port("", "", 9000)}, true},
        Case{"sctp", {Port("SCTP", "", 9000)}, {Port("SCTP", "", 9000)}, false},
        Case{"different_ports", {Port("TCP", "", 9000)}, {Port("TCP", "", 9001)}, true}),
    [](const auto& info) { return info.param.name; });

TEST(NodePortsTest, PortsOnOtherNodesDoNotCount) {
  Harness h;
  h.OnlyPlugins({"NodePorts"});
  h.AddObjects(kNode);
  h.AddObjects(R"(
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)");
  h.AddObjects(PodYaml("web", "n1", {Port("TCP", "", 80)}));
  auto pod = h.MakePod(PodYaml("web2", "", {Port("TCP", "", 80)}));
  EXPECT_EQ(h.Schedule(*pod), "n2");

  h.AddObjects(PodYaml("web3", "n2", {Port("TCP", "", 80)}));
  std::string failure;
  EXPECT_EQ(h.Schedule(*pod, &failure), "");
  EXPECT_EQ(failure,
            "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod "
            "ports.");
}

TEST(NodePortsTest, PreFilterSkipsPodsWithoutHostPorts) {
  Harness h;
  h.OnlyPlugins({"NodePorts"});
  h.AddObjects(kNode);
  auto& fw = h.framework();

  framework::CycleState without;
  auto no_ports = h.MakePod(PodYaml("a", "", {}));
  auto [nodes1, s1] = fw.RunPreFilterPlugins(without, no_ports->view());
  EXPECT_TRUE(s1.ok()) << s1.Message();
  EXPECT_FALSE(nodes1.has_value());
  EXPECT_EQ(without.skip_filter_plugins.count("NodePorts"), 1u);

  // A containerPort without hostPort is not a host port either.
  framework::CycleState container_only;
  auto container_port = h.MakePod(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers:\n  - name: c\n"
      "    image: busybox\n    ports: [{containerPort: 8080}]\n");
  EXPECT_TRUE(fw.RunPreFilterPlugins(container_only, container_port->view()).second.ok());
  EXPECT_EQ(container_only.skip_filter_plugins.count("NodePorts"), 1u);

  framework::CycleState with;
  auto ports = h.MakePod(PodYaml("c", "", {Port("TCP", "", 80)}));
  EXPECT_TRUE(fw.RunPreFilterPlugins(with, ports->view()).second.ok());
  EXPECT_EQ(with.skip_filter_plugins.count("NodePorts"), 0u);
}

TEST(NodePortsTest, FilterWithoutPreFilterStateIsAnError) {
  Harness h;
  h.OnlyPlugins({"NodePorts"});
  h.AddObjects(kNode);
  auto& fw = h.framework();
  framework::CycleState empty;
  auto pod = h.MakePod(PodYaml("a", "", {Port("TCP", "", 80)}));
  framework::Status s = fw.RunFilterPlugins(empty, pod->view(), h.snapshot().views()[0]);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_NE(s.Message().find("reading \"PreFilterNodePorts\" from cycle state: not found"),
            std::string::npos)
      << s.Message();
}

TEST(NodePortsTest, RegistersPodDeleteAndNodeAddUpdate) {
  Harness h;
  h.OnlyPlugins({"NodePorts"});
  bool found = false;
  for (const auto& [plugin, events] : h.framework().EventsToRegister()) {
    if (plugin != "NodePorts") continue;
    found = true;
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].event.resource, SCHEDHOST_RESOURCE_POD);
    EXPECT_EQ(events[0].event.actions, SCHEDHOST_ACTION_DELETE);
    EXPECT_EQ(events[1].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(events[1].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE);
  }
  EXPECT_TRUE(found);
}

TEST(NodePortsTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({"NodePorts"}, "[profile.plugin_config.NodePorts]\nports = [80]\n");
  try {
    h.framework();
    FAIL() << "a profile with NodePorts arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(), ::testing::ContainsRegex(
                              R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.NodePorts\.ports: )"
                              R"(NodePorts takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
