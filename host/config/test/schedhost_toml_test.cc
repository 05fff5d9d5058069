// The shipped config files: config/schedhost.toml must equal the built-in defaults, and the
// examples must load and expand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "host/config/defaults.h"
#include "host/config/expand.h"
#include "host/config/test/config_test_util.h"

namespace schedhost::config {
namespace {

using test::FakeRegistry;
using test::NamesAndWeights;
using ::testing::ElementsAre;

std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR")) return dir;
  return SCHEDHOST_SOURCE_DIR_FALLBACK;
}

std::vector<std::string> Merged(const Profile& profile) {
  std::vector<std::string> out;
  for (const PluginEntry& e : profile.multi_point.enabled) {
    out.push_back(e.name + "(" + std::to_string(e.weight) + ")");
  }
  return out;
}

TEST(SchedhostTomlTest, EqualsBuiltInDefaults) {
  const std::filesystem::path path = SourceDir() / "config" / "schedhost.toml";
  HostConfig file = LoadConfigFile(path);
  HostConfig builtin = ParseConfig("", "builtin", "");
  EXPECT_EQ(file.source, path.string());
  EXPECT_EQ(file.parallelism, builtin.parallelism);
  EXPECT_EQ(file.percentage_of_nodes_to_score, builtin.percentage_of_nodes_to_score);
  EXPECT_EQ(file.pod_initial_backoff, builtin.pod_initial_backoff);
  EXPECT_EQ(file.pod_max_backoff, builtin.pod_max_backoff);
  EXPECT_EQ(file.plugin_dirs, builtin.plugin_dirs);
  EXPECT_EQ(file.libraries.size(), builtin.libraries.size());
  EXPECT_EQ(file.state_dir, builtin.state_dir);
  EXPECT_EQ(file.unload, builtin.unload);
  EXPECT_EQ(file.watch_config, builtin.watch_config);
  EXPECT_EQ(file.api_listen, builtin.api_listen);
  EXPECT_EQ(file.metrics_listen, builtin.metrics_listen);
  ASSERT_EQ(file.profiles.size(), 1u);
  const Profile& profile = file.profiles[0];
  EXPECT_EQ(profile.name, builtin.profiles[0].name);
  EXPECT_EQ(profile.percentage_of_nodes_to_score, builtin.profiles[0].percentage_of_nodes_to_score);
  EXPECT_EQ(Merged(profile), Merged(builtin.profiles[0]));
  EXPECT_TRUE(profile.plugin_config.empty());

  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  ExpandedProfile from_file = ExpandProfile(profile, registry.Lookup());
  ExpandedProfile from_builtin = ExpandProfile(builtin.profiles[0], registry.Lookup());
  for (Point point : kAllPoints) {
    EXPECT_EQ(NamesAndWeights(from_file.PluginsAt(point)),
              NamesAndWeights(from_builtin.PluginsAt(point)))
        << PointName(point);
  }
}

TEST(SchedhostTomlTest, CustomExampleLoadsAndExpands) {
  HostConfig config = LoadConfigFile(SourceDir() / "config" / "examples" / "custom.toml");
  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  ASSERT_EQ(config.profiles.size(), 2u);
  EXPECT_EQ(config.parallelism, 8);

  ExpandedProfile def = ExpandProfile(config.profiles[0], registry.Lookup(), registry.Names());
  EXPECT_EQ(def.name, "default-scheduler");
  std::vector<std::string> score = NamesAndWeights(def.PluginsAt(Point::kScore));
  ASSERT_FALSE(score.empty());
  EXPECT_EQ(score[0], "NodeResourcesFit(5)");

  ExpandedProfile batch = ExpandProfile(config.profiles[1], registry.Lookup(), registry.Names());
  EXPECT_EQ(batch.name, "batch-scheduler");
  EXPECT_EQ(batch.percentage_of_nodes_to_score, 30);
  EXPECT_THAT(NamesAndWeights(batch.PluginsAt(Point::kScore)),
              ElementsAre("TaintToleration(1)", "NodeResourcesFit(3)"));
  EXPECT_THAT(NamesAndWeights(batch.PluginsAt(Point::kFilter)),
              ElementsAre("NodeUnschedulable(0)", "TaintToleration(0)", "NodeResourcesFit(0)"));
  EXPECT_TRUE(batch.PluginsAt(Point::kPreEnqueue).empty());
  EXPECT_EQ(batch.plugin_config.count("NodeResourcesFit"), 1u);
}

}  // namespace
}  // namespace schedhost::config
