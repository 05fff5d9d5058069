#include "host/scheduler/profile_set.h"

#include "host/framework/plugin_instance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace schedhost::scheduler {
namespace {

using ::testing::HasSubstr;

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
  for (const auto& r : fw->plugins(config::Point::kScore)) scores.push_back(r.plugin->name + "=" + std::to_string(r.weight));
  EXPECT_THAT(scores, ::testing::ElementsAre("TaintToleration=3", "NodeAffinity=2", "NodeResourcesFit=1"));
  std::string text = set->Describe();
  EXPECT_THAT(text, HasSubstr("node_resources_fit.so"));
  EXPECT_THAT(text, HasSubstr("NodeResourcesFit 1.0.0"));
  EXPECT_EQ(set->Find("nope"), nullptr);
}

TEST(ProfileSetTest, ProfilesMustAgreeOnQueueSort) {
  auto cfg = config::ParseConfig(
      "[[profile]]\nname = \"a\"\n[[profile]]\nname = \"b\"\n"
      "[profile.plugin_config.PrioritySort]\nmode = \"other\"\n",
      "two.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(cfg, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(HasSubstr("must agree on QueueSort")));
}

TEST(ProfileSetTest, UnknownPluginNamesTheLocation) {
  auto cfg = config::ParseConfig("[[profile]]\n[profile.plugins.filter]\nenabled = [{ name = \"Nope\" }]\n",
                                 "bad.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(cfg, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(AllOf(HasSubstr("bad.toml:3"), HasSubstr("\"Nope\""))));
}

TEST(ProfileSetTest, PinnedLibraryWithWrongHashIsRefused) {
  auto cfg = config::ParseConfig(
      "[host]\nlibraries = [{ path = \"" + (PluginDir() / "node_name.so").string() + "\", sha256 = \"" +
          std::string(64, '0') + "\" }]\nplugin_dirs = []\n",
      "pin.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(cfg, PluginDir()); },
              ::testing::ThrowsMessage<ProfileSetError>(HasSubstr("but the config pins")));
}

}  // namespace
}  // namespace schedhost::scheduler
