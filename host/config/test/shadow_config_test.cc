// Shadow profiles in the config: `shadow_of` and `[shadow]`, their errors, and the text a
// promote writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/config/host_config.h"
#include "host/config/promote.h"

namespace schedhost::config {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kConfig = R"(# the host
[host]
parallelism = 4

[shadow]
cpu_budget_percent = 10
deadline = "250ms"

# the live profile
[[profile]]
name = "default-scheduler"
[profile.plugins.score]
enabled = [{ name = "TaintToleration", weight = 1 }]

# what we would like instead
[[profile]]
name = "next"  # the candidate
shadow_of = "default-scheduler"
[profile.plugins.score]
enabled = [{ name = "TaintToleration", weight = 3 }]
[profile.plugin_config.NodeResourcesFit]
scoringStrategy = { type = "MostAllocated" }

[[profile]]
name = "batch"
)";

TEST(ShadowConfigTest, ShadowOfAndTheShadowTableAreRead) {
  const HostConfig c = ParseConfig(kConfig, "c.toml", {});
  ASSERT_EQ(c.profiles.size(), 3u);
  EXPECT_EQ(c.profiles[0].shadow_of, "");
  EXPECT_EQ(c.profiles[1].shadow_of, "default-scheduler");
  EXPECT_EQ(c.shadow.cpu_budget_percent, 10);
  EXPECT_EQ(c.shadow.deadline, std::chrono::milliseconds(250));
  EXPECT_FALSE(c.shadow.every_pod);
  EXPECT_EQ(c.shadow.max_disagreements, 100);
}

TEST(ShadowConfigTest, AShadowMustFollowALiveProfileOfTheFile) {
  const auto error = [](const std::string& toml) {
    try {
      ParseConfig(toml, "c.toml", {});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("[[profile]]\nname = \"a\"\n[[profile]]\nname = \"b\"\nshadow_of = \"x\"\n"),
            "c.toml:3:1: profile \"b\": shadow_of \"x\" names no profile of this file (live "
            "profiles: \"a\")");
  EXPECT_THAT(error("[[profile]]\nname = \"a\"\nshadow_of = \"a\"\n"),
              HasSubstr("shadow_of \"a\" names the profile itself"));
  EXPECT_THAT(error("[[profile]]\nname = \"a\"\n[[profile]]\nname = \"b\"\nshadow_of = \"a\"\n"
                    "[[profile]]\nname = \"c\"\nshadow_of = \"b\"\n"),
              HasSubstr("shadow_of \"b\" names another shadow"));
  EXPECT_THAT(error("[shadow]\ncpu_budget_percent = 0\n"),
              HasSubstr("shadow.cpu_budget_percent"));
  EXPECT_THAT(error("[shadow]\ndeadline = \"soon\"\n"), HasSubstr("shadow.deadline"));
  EXPECT_THAT(error("[shadow]\nbudget = 3\n"), HasSubstr("budget"));
}

TEST(ShadowConfigTest, PromoteMovesTheShadowsBlockOverTheLiveOne) {
  const std::string out = PromoteShadowText(kConfig, "c.toml", "next");
  EXPECT_EQ(out, R"(# the host
[host]
parallelism = 4

[shadow]
cpu_budget_percent = 10
deadline = "250ms"

# the live profile
[[profile]]
name = "default-scheduler"
[profile.plugins.score]
enabled = [{ name = "TaintToleration", weight = 3 }]
[profile.plugin_config.NodeResourcesFit]
scoringStrategy = { type = "MostAllocated" }

# what we would like instead

[[profile]]
name = "batch"
)");
  const HostConfig c = ParseConfig(out, "c.toml", {});
  ASSERT_EQ(c.profiles.size(), 2u);
  EXPECT_EQ(c.profiles[0].name, "default-scheduler");
  EXPECT_EQ(c.profiles[0].shadow_of, "");
  EXPECT_EQ(c.profiles[0].plugin_config.count("NodeResourcesFit"), 1u);
}

TEST(ShadowConfigTest, PromoteRefusesWhatItCannotRewrite) {
  EXPECT_THAT(
      [] {
        try {
          PromoteShadowText(kConfig, "c.toml", "batch");
        } catch (const ConfigError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("no shadow profile named \"batch\" (shadows: next)"));
  EXPECT_THROW(PromoteShadowText("[[profile]]\nname = \"a\"\n"
                                 "[[profile]]\nname = \"b\"\nshadow_of = \"a\" # ok\n",
                                 "c.toml", "nope"),
               ConfigError);
  const std::string inline_profiles =
      "profile = [{ name = \"a\" }, { name = \"b\", shadow_of = \"a\" }]\n";
  EXPECT_THROW(PromoteShadowText(inline_profiles, "c.toml", "b"), ConfigError);
  EXPECT_THROW(PromoteShadowText("[[profile]]\nname = \"a\"\n[[profile]]\n\"name\" = \"b\"\n"
                                 "shadow_of = \"a\"\n",
                                 "c.toml", "b"),
               ConfigError);
}

}  // namespace
}  // namespace schedhost::config
