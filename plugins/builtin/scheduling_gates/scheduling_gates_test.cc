// SchedulingGates through the real framework: PreEnqueue holds back a pod while it has
// scheduling gates (upstream pkg/scheduler/framework/plugins/schedulinggates behaviour).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;

std::string PodWithGates(const std::string& gates) {
  std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  containers: [{name: c, image: busybox}]\n";
  if (!gates.empty()) yaml += "  schedulingGates: " + gates + "\n";
  return yaml;
}

struct Case {
  std::string name;
  std::string gates;   // YAML flow sequence, "" for none
  std::string reason;  // "" when the pod is admitted

  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class SchedulingGatesTest : public ::testing::TestWithParam<Case> {};

TEST_P(SchedulingGatesTest, PreEnqueue) {
  const Case& c = GetParam();
  Harness h;
  h.OnlyPlugins({"SchedulingGates"});
  auto pod = h.MakePod(PodWithGates(c.gates));
  framework::Status s = h.framework().RunPreEnqueuePlugins(pod->view());
  if (c.reason.empty()) {
    EXPECT_EQ(s.code, Code::kSuccess) << s.Message();
  } else {
    EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(s.reasons, framework::Reasons{framework::Text(c.reason)});
    EXPECT_EQ(s.plugin, "SchedulingGates");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SchedulingGatesTest,
    ::testing::Values(Case{"no_gates", "", ""}, Case{"empty_gate_list", "[]", ""},
                      Case{"one_gate", "[{name: example.com/quota}]",
                           "waiting for scheduling gates: [example.com/quota]"},
                      // Gates are listed in spec order, separated by spaces (Go's %v of a slice).
                      Case{"two_gates_in_spec_order", "[{name: foo}, {name: bar}]",
                           "waiting for scheduling gates: [foo bar]"}),
    [](const auto& info) { return info.param.name; });

TEST(SchedulingGatesEventsTest, RegistersGateRemoval) {
  Harness h;
  h.OnlyPlugins({"SchedulingGates"});
  bool found = false;
  for (const auto& [plugin, events] : h.framework().EventsToRegister()) {
    if (plugin != "SchedulingGates") continue;
    found = true;
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event.resource, SCHEDHOST_RESOURCE_POD);
    EXPECT_EQ(events[0].event.actions, SCHEDHOST_ACTION_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
    EXPECT_EQ(events[0].hint, nullptr);
  }
  EXPECT_TRUE(found);
}

TEST(SchedulingGatesArgsTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({"SchedulingGates"}, "[profile.plugin_config.SchedulingGates]\ngates = []\n");
  try {
    h.framework();
    FAIL() << "a profile with SchedulingGates arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(), ::testing::ContainsRegex(
                              R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.SchedulingGates\.gates: )"
                              R"(SchedulingGates takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
