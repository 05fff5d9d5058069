#include "host/scheduler/profile_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "host/framework/plugin_instance.h"

namespace schedhost::scheduler {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::filesystem::path PluginDir() { return std::getenv("SCHEDHOST_PLUGIN_DIR"); }
std::filesystem::path SourceDir() { return std::getenv("SCHEDHOST_SOURCE_DIR"); }

TEST(ProfileSetTest, DefaultConfigBuildsTheDefaultProfileFromLoadedLibraries) {
  auto cfg = config::LoadConfigFile(SourceDir() / "config" / "schedhost.toml");
  auto set = ProfileSet::Build(cfg, PluginDir());
  ASSERT_EQ(set->frameworks().size(), 1u);
  framework::Framework* fw = set->Find("default-scheduler");
  ASSERT_NE(fw, nullptr);
  EXPECT_EQ(fw->QueueSortPluginName(), "PrioritySort");
  std::vector<std::string> scores;
  for (const auto& r : fw->plugins(config::Point::kScore)) {
    scores.push_back(r.plugin->name + "=" + std::to_string(r.weight));
  }
  EXPECT_THAT(scores,
              ::testing::ElementsAre("TaintToleration=3", "NodeAffinity=2", "NodeResourcesFit=1",
                                     "VolumeBinding=1", "PodTopologySpread=2", "InterPodAffinity=2",
                                     "NodeResourcesBalancedAllocation=1", "ImageLocality=1"));
  std::string text = set->Describe();
  EXPECT_THAT(text, HasSubstr("node_resources_fit.so"));
  EXPECT_THAT(text, HasSubstr("NodeResourcesFit 1.0.0"));
  EXPECT_EQ(set->Find("nope"), nullptr);
}

TEST(ProfileSetTest, ProfilesMustAgreeOnQueueSort) {
  auto profile = [](std::string name, std::string sort, std::string args) {
    config::ExpandedProfile p;
    p.name = std::move(name);
    p.points[config::PointIndex(config::Point::kQueueSort)].push_back({sort, 0, {}});
    if (!args.empty()) p.plugin_config[sort] = config::ParsePluginArgs(args, "test.toml");
    return p;
  };
  EXPECT_NO_THROW(CheckQueueSortAgreement(
      {profile("a", "PrioritySort", "x = 1"), profile("b", "PrioritySort", "x = 1")}));
  EXPECT_THAT(
      [&] {
        CheckQueueSortAgreement({profile("a", "PrioritySort", ""), profile("b", "FifoSort", "")});
      },
      ::testing::ThrowsMessage<ProfileSetError>(HasSubstr(
          "profile \"b\" uses a different queue_sort plugin or arguments than profile \"a\"")));
  EXPECT_THAT(
      [&] {
        CheckQueueSortAgreement(
            {profile("a", "PrioritySort", "x = 1"), profile("b", "PrioritySort", "x = 2")});
      },
      ::testing::ThrowsMessage<ProfileSetError>(HasSubstr("must agree on QueueSort")));
}

TEST(ProfileSetTest, TwoProfilesBuildFromOneConfig) {
  auto cfg =
      config::ParseConfig("[[profile]]\nname = \"a\"\n[[profile]]\nname = \"b\"\n", "two.toml", {});
  auto set = ProfileSet::Build(cfg, PluginDir());
  ASSERT_NE(set->Find("a"), nullptr);
  ASSERT_NE(set->Find("b"), nullptr);
  EXPECT_NE(set->Find("a"), set->Find("b"));
}

// Rebuild: the same libraries, loaded once, and new plugin instances, with the profiles of the
// config it is given (whose plugin_dirs it does not read).
TEST(ProfileSetTest, RebuildMakesNewInstancesOverTheSameLibraries) {
  auto set = ProfileSet::Build(config::ParseConfig("", "(defaults)", {}), PluginDir());
  auto cfg = config::ParseConfig(
      "[host]\nplugin_dirs = [\"/nonexistent\"]\n[[profile]]\nname = \"a\"\n[[profile]]\n"
      "name = \"b\"\n",
      "two.toml", {});
  auto rebuilt = set->Rebuild(cfg);
  EXPECT_EQ(rebuilt->plugin_dirs(), set->plugin_dirs());
  ASSERT_EQ(rebuilt->registry().Libraries().size(), set->registry().Libraries().size());
  for (size_t i = 0; i < set->registry().Libraries().size(); ++i) {
    EXPECT_EQ(rebuilt->registry().Libraries()[i], set->registry().Libraries()[i]);
  }
  ASSERT_NE(rebuilt->Find("a"), nullptr);
  ASSERT_NE(rebuilt->Find("b"), nullptr);
  EXPECT_EQ(rebuilt->Find("default-scheduler"), nullptr);
  const framework::Framework* before = set->Find("default-scheduler");
  const framework::Framework* after = rebuilt->Find("a");
  ASSERT_EQ(after->plugins(config::Point::kFilter).size(),
            before->plugins(config::Point::kFilter).size());
  for (size_t i = 0; i < before->plugins(config::Point::kFilter).size(); ++i) {
    EXPECT_NE(after->plugins(config::Point::kFilter)[i].plugin,
              before->plugins(config::Point::kFilter)[i].plugin);
  }
  // The first set may go: the rebuilt one holds the libraries.
  set.reset();
  EXPECT_EQ(rebuilt->Find("a")->QueueSortPluginName(), "PrioritySort");
}

TEST(ProfileSetTest, UnknownPluginNamesTheLocation) {
  auto cfg = config::ParseConfig(
      "[[profile]]\n[profile.plugins.filter]\nenabled = [{ name = \"Nope\" }]\n", "bad.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(cfg, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(
                  AllOf(HasSubstr("bad.toml:3"), HasSubstr("\"Nope\""))));
}

TEST(ProfileSetTest, PinnedLibraryWithWrongHashIsRefused) {
  auto cfg = config::ParseConfig("[host]\nlibraries = [{ path = \"" +
                                     (PluginDir() / "node_name.so").string() + "\", sha256 = \"" +
                                     std::string(64, '0') + "\" }]\nplugin_dirs = []\n",
                                 "pin.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(cfg, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(HasSubstr("but the config pins")));
}

// A directory or library that is not there is reported at the config line that names it.
TEST(ProfileSetTest, MissingDirectoryAndLibraryNameTheirConfigLocation) {
  auto dirs = config::ParseConfig("[host]\nplugin_dirs = [\n  \"/nonexistent/plugins\",\n]\n",
                                  "dirs.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(dirs, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(
                  StartsWith("dirs.toml:3:3: /nonexistent/plugins: not a directory")));
  auto libs = config::ParseConfig(
      "[host]\nplugin_dirs = []\nlibraries = [{ path = \"/nonexistent/libx.so\" }]\n", "libs.toml",
      {});
  EXPECT_THAT([&] { ProfileSet::Build(libs, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(
                  StartsWith("libs.toml:3:14: /nonexistent/libx.so: cannot read")));
}

// A refused config names every error of the file: each profile's, each plugin's, and the
// plugin_config of a loaded plugin no profile enables (checked by creating an instance with it).
TEST(ProfileSetTest, EveryErrorOfEveryProfileIsReportedAtOnce) {
  const std::string toml = R"([[profile]]
name = "a"
[profile.plugin_config.DefaultPreemption]
min_candidate_nodes_percentage = 200
[profile.plugin_config.ImageLocality]
bogus = 1

[[profile]]
name = "b"
[profile.plugins.multi_point]
disabled = [{ name = "ImageLocality" }]
[profile.plugin_config.ImageLocality]
bogus = 2

[[profile]]
name = "c"
[profile.plugin_config.NodeAfinity]
x = 1
)";
  auto cfg = config::ParseConfig(toml, "all.toml", {});
  std::string what;
  try {
    ProfileSet::Build(cfg, PluginDir());
  } catch (const ProfileSetError& e) {
    what = e.what();
  }
  EXPECT_THAT(what, HasSubstr("all.toml:4:1: plugin_config.DefaultPreemption."
                              "min_candidate_nodes_percentage"));
  EXPECT_THAT(what, HasSubstr("all.toml:6:1: plugin_config.ImageLocality.bogus"));
  EXPECT_THAT(what, HasSubstr("profile \"b\": plugin \"ImageLocality\" (configured in "
                              "plugin_config, not enabled) could not be created"));
  EXPECT_THAT(what, HasSubstr("all.toml:13:1: plugin_config.ImageLocality.bogus"));
  EXPECT_THAT(what, HasSubstr("plugin_config.NodeAfinity configures an unknown plugin"));
  EXPECT_THAT(what, HasSubstr("did you mean \"NodeAffinity\"?"));
  EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 3) << what;  // four errors

  // Valid arguments for a plugin no profile enables pass.
  auto fine = config::ParseConfig(
      "[[profile]]\n[profile.plugins.multi_point]\ndisabled = [{ name = \"DefaultPreemption\" }]\n"
      "[profile.plugin_config.DefaultPreemption]\nmin_candidate_nodes_percentage = 20\n",
      "fine.toml", {});
  EXPECT_NO_THROW(ProfileSet::Build(fine, PluginDir()));
}

}  // namespace
}  // namespace schedhost::scheduler
