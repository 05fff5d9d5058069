// DefaultPreemption: argument validation as upstream's ValidateDefaultPreemptionArgs, and that
// the plugin relays the toolkit's answer. Preemption itself (victims, candidates, eviction) is
// tested in host/preemption and end to end in tests/integration/simulate_preemption_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::testing::Harness;
using ::testing::HasSubstr;

constexpr char kName[] = "DefaultPreemption";

std::string Args(const std::string& body) {
  return std::string("[profile.plugin_config.DefaultPreemption]\n") + body + "\n";
}

struct ArgsCase {
  const char* name;
  std::string args;
  std::string error;  // "" = accepted
  friend void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }
};

class DefaultPreemptionArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(DefaultPreemptionArgsTest, ValidatesLikeUpstream) {
  const ArgsCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, Args(c.args));
  if (c.error.empty()) {
    EXPECT_NO_THROW(h.framework());
    return;
  }
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.error));
    EXPECT_THAT(e.what(), HasSubstr("test.toml:"));
  }
}

constexpr char kPct[] = "plugin_config.DefaultPreemption.min_candidate_nodes_percentage: ";
constexpr char kAbs[] = "plugin_config.DefaultPreemption.min_candidate_nodes_absolute: ";

INSTANTIATE_TEST_SUITE_P(
    Cases, DefaultPreemptionArgsTest,
    ::testing::Values(
        ArgsCase{"Defaults", "", ""},
        ArgsCase{"Bounds", "min_candidate_nodes_percentage = 100\nmin_candidate_nodes_absolute = 0",
                 ""},
        ArgsCase{"PercentageOnlyZero", "min_candidate_nodes_percentage = 0", ""},
        ArgsCase{"PercentageNegative", "min_candidate_nodes_percentage = -1",
                 std::string(kPct) + "must be in the range [0, 100], got -1"},
        ArgsCase{"PercentageAbove100", "min_candidate_nodes_percentage = 101",
                 std::string(kPct) + "must be in the range [0, 100], got 101"},
        ArgsCase{"AbsoluteNegative", "min_candidate_nodes_absolute = -5",
                 std::string(kAbs) + "must be at least 0, got -5"},
        // upstream: both zero would look for no candidate at all.
        ArgsCase{"BothZero", "min_candidate_nodes_percentage = 0\nmin_candidate_nodes_absolute = 0",
                 std::string(kAbs) +
                     "cannot be zero at the same time as min_candidate_nodes_percentage"},
        ArgsCase{"WrongType", "min_candidate_nodes_percentage = \"10%\"",
                 std::string(kPct) + "expected an integer"},
        ArgsCase{
            "UnknownKey", "minCandidateNodesPercentage = 10",
            "plugin_config.DefaultPreemption.minCandidateNodesPercentage: unknown key; did you "
            "mean \"min_candidate_nodes_percentage\"?"}));

TEST(DefaultPreemption, WithoutClusterStateItIsAnErrorNotACrash) {
  // The harness has no store behind it: the toolkit is not installed, and PostFilter says so.
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
  framework::Framework& fw = h.framework();
  auto pod = h.MakePod(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: 5\n"
      "  containers: [{name: c, image: i}]\n");
  framework::CycleState state;
  framework::NodeStatuses statuses = {
      {"n1", framework::Status::Make(framework::Code::kUnschedulable, "Insufficient cpu")}};
  auto [nominated, s] = fw.RunPostFilterPlugins(state, pod->view(), statuses);
  EXPECT_EQ(s.code, framework::Code::kError);
  EXPECT_THAT(s.Message(), HasSubstr("preempt is not available"));
  EXPECT_EQ(nominated, "");
}

}  // namespace
}  // namespace schedhost::plugins
