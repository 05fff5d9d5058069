#include "host/config/expand.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/config/defaults.h"
#include "host/config/test/config_test_util.h"

namespace schedhost::config {
namespace {

using test::FakeRegistry;
using test::Names;
using test::NamesAndWeights;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

HostConfig Parse(std::string_view text) { return ParseConfig(text, "schedhost.toml", ""); }

// A registry with three multi_point-style plugins and one filter-only plugin.
FakeRegistry TestRegistry() {
  FakeRegistry registry;
  registry.Add("A", {Point::kFilter, Point::kScore})
      .Add("B", {Point::kFilter})
      .Add("C", {Point::kFilter, Point::kScore, Point::kPreScore})
      .Add("X", {Point::kFilter, Point::kScore})
      .Add("Y", {Point::kFilter});
  return registry;
}

TEST(ExpandTest, DefaultProfileMatchesUpstream) {
  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  ExpandedProfile e = ExpandProfile(Parse("").profiles[0], registry.Lookup());
  EXPECT_EQ(e.name, "default-scheduler");
  EXPECT_THAT(Names(e.PluginsAt(Point::kPreEnqueue)), ElementsAre("SchedulingGates"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kQueueSort)), ElementsAre("PrioritySort"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kBind)), ElementsAre("DefaultBinder"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kPreFilter)),
              ElementsAre("NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
                          "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                          "InterPodAffinity"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kFilter)),
              ElementsAre("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                          "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
                          "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                          "InterPodAffinity"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kPostFilter)), ElementsAre("DefaultPreemption"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kPreScore)),
              ElementsAre("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                          "PodTopologySpread", "InterPodAffinity",
                          "NodeResourcesBalancedAllocation"));
  EXPECT_THAT(NamesAndWeights(e.PluginsAt(Point::kScore)),
              ElementsAre("TaintToleration(3)", "NodeAffinity(2)", "NodeResourcesFit(1)",
                          "VolumeBinding(1)", "PodTopologySpread(2)", "InterPodAffinity(2)",
                          "NodeResourcesBalancedAllocation(1)", "ImageLocality(1)"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kReserve)), ElementsAre("VolumeBinding"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kPreBind)), ElementsAre("VolumeBinding"));
  for (Point point : {Point::kPermit, Point::kPostBind}) {
    EXPECT_THAT(e.PluginsAt(point), IsEmpty()) << PointName(point);
  }
  // Weights only mean something at score.
  EXPECT_EQ(e.PluginsAt(Point::kFilter)[2].weight, 0);
}

// Rule 3: part 1 (point plugins also in multi_point, point order and weight), part 2 (other
// multi_point plugins implementing the point), part 3 (the rest of the point's plugins).
TEST(ExpandTest, OrderingPartsOneTwoThree) {
  struct Case {
    std::string name;
    std::string plugins;
    Point point;
    std::vector<std::string> expected;
  };
  const std::string multi_point =
      "[profile.plugins.multi_point]\ndisabled = [{ name = \"*\" }]\n"
      "enabled = [{ name = \"A\", weight = 2 }, { name = \"B\" }, { name = \"C\", weight = 3 }]\n";
  const std::vector<Case> cases = {
      {"multi_point only", "", Point::kFilter, {"A(0)", "B(0)", "C(0)"}},
      {"only implementers, with weights", "", Point::kScore, {"A(2)", "C(3)"}},
      {"only implementers", "", Point::kPreScore, {"C(0)"}},
      {"parts 1, 2, 3",
       "[profile.plugins.filter]\nenabled = [{ name = \"Y\" }, { name = \"C\" }, { name = \"A\" "
       "}]\n",
       Point::kFilter,
       {"C(0)", "A(0)", "B(0)", "Y(0)"}},
      {"disabled at point",
       "[profile.plugins.filter]\nenabled = [{ name = \"Y\" }, { name = \"C\" }]\n"
       "disabled = [{ name = \"B\" }]\n",
       Point::kFilter,
       {"C(0)", "A(0)", "Y(0)"}},
      {"disabled and enabled at point goes to part 3",
       "[profile.plugins.filter]\nenabled = [{ name = \"A\" }, { name = \"Y\" }]\n"
       "disabled = [{ name = \"A\" }]\n",
       Point::kFilter,
       {"B(0)", "C(0)", "A(0)", "Y(0)"}},
      {"star keeps multi_point out",
       "[profile.plugins.filter]\nenabled = [{ name = \"Y\" }, { name = \"C\" }]\n"
       "disabled = [{ name = \"*\" }]\n",
       Point::kFilter,
       {"Y(0)", "C(0)"}},
      {"star with nothing enabled empties the point",
       "[profile.plugins.score]\ndisabled = [{ name = \"*\" }]\n",
       Point::kScore,
       {}},
      {"specific weight wins and keeps point order",
       "[profile.plugins.score]\nenabled = [{ name = \"X\", weight = 9 }, { name = \"C\", weight = "
       "7 }]\n",
       Point::kScore,
       {"C(7)", "A(2)", "X(9)"}},
      {"weight 0 means 1",
       "[profile.plugins.score]\nenabled = [{ name = \"A\" }, { name = \"X\", weight = 0 }]\n",
       Point::kScore,
       {"A(1)", "C(3)", "X(1)"}},
      {"other points untouched",
       "[profile.plugins.filter]\ndisabled = [{ name = \"*\" }]\n",
       Point::kScore,
       {"A(2)", "C(3)"}},
  };
  FakeRegistry registry = TestRegistry();
  for (const Case& c : cases) {
    HostConfig config = Parse("[[profile]]\n" + multi_point + c.plugins);
    ExpandedProfile e = ExpandProfile(config.profiles[0], registry.Lookup());
    EXPECT_EQ(NamesAndWeights(e.PluginsAt(c.point)), c.expected) << c.name;
  }
}

TEST(ExpandTest, CustomDefaultsWeightChange) {
  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  HostConfig config = Parse(R"([[profile]]
[profile.plugins.multi_point]
enabled = [{ name = "NodeAffinity", weight = 10 }]
disabled = [{ name = "NodePorts" }]
[profile.plugins.score]
enabled = [{ name = "NodeResourcesFit", weight = 5 }, { name = "ImageLocality", weight = 2 }]
disabled = [{ name = "TaintToleration" }]
)");
  ExpandedProfile e = ExpandProfile(config.profiles[0], registry.Lookup());
  // Part 1: the score list's plugins that are also multi-point (both defaults), in its order and
  // with its weights; part 2: the other multi-point scorers, NodeAffinity with its new weight.
  EXPECT_THAT(NamesAndWeights(e.PluginsAt(Point::kScore)),
              ElementsAre("NodeResourcesFit(5)", "ImageLocality(2)", "NodeAffinity(10)",
                          "VolumeBinding(1)", "PodTopologySpread(2)", "InterPodAffinity(2)",
                          "NodeResourcesBalancedAllocation(1)"));
  EXPECT_THAT(Names(e.PluginsAt(Point::kPreFilter)),
              ElementsAre("NodeAffinity", "NodeResourcesFit", "VolumeRestrictions",
                          "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                          "InterPodAffinity"));
  // Disabling a plugin at score leaves its other points alone.
  EXPECT_THAT(Names(e.PluginsAt(Point::kPreScore)),
              ElementsAre("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                          "PodTopologySpread", "InterPodAffinity",
                          "NodeResourcesBalancedAllocation"));
  // Locations: the score entry, not multi_point, for the overridden plugin.
  EXPECT_EQ(e.PluginsAt(Point::kScore)[0].location.ToString(), "schedhost.toml:6:12");
  EXPECT_EQ(e.PluginsAt(Point::kScore)[1].location.ToString(), "schedhost.toml:6:55");
  EXPECT_EQ(e.PluginsAt(Point::kScore)[2].location.ToString(), "schedhost.toml:3:12");
}

TEST(ExpandTest, PluginConfigAndPercentageCarryOver) {
  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  HostConfig config = Parse(R"([[profile]]
name = "p"
percentage_of_nodes_to_score = 30
[profile.plugin_config.NodeResourcesFit]
a = 1
)");
  ExpandedProfile e = ExpandProfile(config.profiles[0], registry.Lookup());
  EXPECT_EQ(e.name, "p");
  EXPECT_EQ(e.percentage_of_nodes_to_score, 30);
  ASSERT_EQ(e.plugin_config.count("NodeResourcesFit"), 1u);
  EXPECT_EQ(e.plugin_config.at("NodeResourcesFit"),
            config.profiles[0].plugin_config.at("NodeResourcesFit"));
}

struct ExpandErrorCase {
  std::string name;
  std::string toml;
  std::string location;
  std::string message;
};

TEST(ExpandTest, ErrorsNameLocationProfilePointAndFix) {
  const std::string no_defaults = "[profile.plugins.multi_point]\ndisabled = [{ name = \"*\" }]\n";
  const std::vector<ExpandErrorCase> cases = {
      {"unknown at a point",
       "[[profile]]\n" + no_defaults + "[profile.plugins.filter]\nenabled = [{ name = \"Foo\" }]\n",
       "schedhost.toml:5:12",
       "profile \"default-scheduler\", point filter: plugin \"Foo\" is not known; loaded "
       "plugins are: A, B, C, X, Y (check plugin_dirs and libraries)"},
      {"unknown with suggestion",
       "[[profile]]\nname = \"s\"\n" + no_defaults +
           "[profile.plugins.score]\nenabled = [{ name = \"x\" }]\n",
       "schedhost.toml:6:12",
       "profile \"s\", point score: plugin \"x\" is not known (did you mean \"X\"?); loaded "
       "plugins are: A, B, C, X, Y (check plugin_dirs and libraries)"},
      {"unknown in multi_point",
       "[[profile]]\n[profile.plugins.multi_point]\ndisabled = [{ name = \"*\" }]\n"
       "enabled = [{ name = \"A\" }, { name = \"Nope\" }]\n",
       "schedhost.toml:4:28",
       "profile \"default-scheduler\", point multi_point: plugin \"Nope\" is not known; loaded "
       "plugins are: A, B, C, X, Y (check plugin_dirs and libraries)"},
      {"unknown default", "\n[[profile]]\nname = \"d\"\n", "schedhost.toml:2:1",
       "profile \"d\", point multi_point: plugin \"SchedulingGates\" is not known; loaded "
       "plugins are: A, B, C, X, Y (check plugin_dirs and libraries); it is a default plugin: "
       "if it is not wanted, add { name = \"SchedulingGates\" } to "
       "plugins.multi_point.disabled"},
      {"not implemented at the point",
       "[[profile]]\n" + no_defaults + "[profile.plugins.score]\nenabled = [{ name = \"B\" }]\n",
       "schedhost.toml:5:12",
       "profile \"default-scheduler\", point score: plugin \"B\" does not implement score (it "
       "implements filter); remove it from plugins.score.enabled, or list it under "
       "plugins.multi_point to enable it at every point it implements"},
      {"plugin_config for an unknown plugin",
       "[[profile]]\n" + no_defaults + "[profile.plugin_config.Ax]\nk = 1\n", "schedhost.toml:4:1",
       "profile \"default-scheduler\": plugin_config.Ax configures an unknown plugin: plugin "
       "\"Ax\" is not known (did you mean \"A\"?); loaded plugins are: A, B, C, X, Y (check "
       "plugin_dirs and libraries)"},
  };
  FakeRegistry registry = TestRegistry();
  for (const ExpandErrorCase& c : cases) {
    HostConfig config = Parse(c.toml);
    try {
      ExpandProfile(config.profiles[0], registry.Lookup(), registry.Names());
      ADD_FAILURE() << c.name << ": expected ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), c.location + ": " + c.message) << c.name;
    }
  }
}

TEST(ExpandTest, UnknownPluginWithoutNamesSaysNothingIsLoaded) {
  HostConfig config = Parse(
      "[[profile]]\n[profile.plugins.multi_point]\n"
      "disabled = [{ name = \"*\" }]\nenabled = [{ name = \"Q\" }]\n");
  try {
    ExpandProfile(config.profiles[0], FakeRegistry().Lookup());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 4);
    EXPECT_EQ(e.column, 12);
    EXPECT_THAT(e.message, HasSubstr("plugin \"Q\" is not known; no loaded library provides it"));
  }
}

TEST(ExpandTest, ImplicitDefaultProfileErrorHasFileOnly) {
  try {
    ExpandProfile(Parse("").profiles[0], FakeRegistry().Lookup());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 0);
    EXPECT_THAT(e.what(), HasSubstr("schedhost.toml: profile \"default-scheduler\", point "
                                    "multi_point: plugin \"SchedulingGates\" is not known"));
  }
}

TEST(ExpandTest, DuplicatesInProgrammaticProfilesAreRejected) {
  FakeRegistry registry = TestRegistry();
  Profile profile;
  profile.name = "prog";
  PluginEntry a{"A", 0, SourceLocation{"mem", 1, 1}, false};
  PluginEntry a_again{"A", 0, SourceLocation{"mem", 2, 1}, false};
  profile.points[PointIndex(Point::kFilter)].enabled = {a, a_again};
  try {
    ExpandProfile(profile, registry.Lookup());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "mem:2:1: profile \"prog\", point filter: plugin \"A\" is enabled twice (first at "
              "mem:1:1); remove one of the entries");
  }
  profile.points[PointIndex(Point::kFilter)].enabled.clear();
  profile.multi_point.enabled = {a, a_again};
  EXPECT_THROW(ExpandProfile(profile, registry.Lookup()), ConfigError);
}

TEST(ExpandTest, MultiPointPluginsImplementingNothingAreFine) {
  FakeRegistry registry;
  registry.Add("Idle", {});
  HostConfig config = Parse(
      "[[profile]]\n[profile.plugins.multi_point]\n"
      "disabled = [{ name = \"*\" }]\nenabled = [{ name = \"Idle\" }]\n");
  ExpandedProfile e = ExpandProfile(config.profiles[0], registry.Lookup());
  for (Point point : kAllPoints) EXPECT_THAT(e.PluginsAt(point), IsEmpty());
}

TEST(ExpandTest, LookupIsAskedOncePerName) {
  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  std::map<std::string, int> calls;
  PointLookup counting = [&](std::string_view name) {
    ++calls[std::string(name)];
    return registry.Lookup()(name);
  };
  ExpandProfile(Parse("").profiles[0], counting);
  for (const auto& [name, count] : calls) EXPECT_EQ(count, 1) << name;
}

TEST(DescribeTest, ListsEveryPoint) {
  FakeRegistry registry = FakeRegistry().WithUpstreamDefaults();
  HostConfig config = Parse(R"([[profile]]
[profile.plugin_config.NodeResourcesFit]
a = 1
)");
  std::string text = Describe(ExpandProfile(config.profiles[0], registry.Lookup()));
  EXPECT_THAT(text, HasSubstr("profile \"default-scheduler\"\n"));
  EXPECT_THAT(text, HasSubstr("  percentage_of_nodes_to_score: host setting\n"));
  EXPECT_THAT(text, HasSubstr("  queue_sort:  PrioritySort\n"));
  EXPECT_THAT(text, HasSubstr("  post_filter: DefaultPreemption\n"));
  EXPECT_THAT(text, HasSubstr("  reserve:     VolumeBinding\n"));
  EXPECT_THAT(text, HasSubstr("  permit:      (none)\n"));
  EXPECT_THAT(text, HasSubstr("  score:       TaintToleration(3) NodeAffinity(2)"));
  EXPECT_THAT(text, HasSubstr("  bind:        DefaultBinder\n"));
  EXPECT_THAT(text, HasSubstr("  plugin_config: NodeResourcesFit (schedhost.toml:2:1)\n"));
}

}  // namespace
}  // namespace schedhost::config
