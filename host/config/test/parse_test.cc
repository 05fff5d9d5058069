#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/config/defaults.h"
#include "host/config/host_config.h"

namespace schedhost::config {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

HostConfig Parse(std::string_view text) { return ParseConfig(text, "schedhost.toml", "/etc/sh"); }

// "Name(weight)" of every entry of a list.
std::vector<std::string> Entries(const std::vector<PluginEntry>& entries) {
  std::vector<std::string> out;
  for (const PluginEntry& e : entries) out.push_back(e.name + "(" + std::to_string(e.weight) + ")");
  return out;
}

std::vector<std::string> DefaultEntries() {
  std::vector<std::string> out;
  for (const DefaultPlugin& p : DefaultMultiPointPlugins()) {
    out.push_back(std::string(p.name) + "(" + std::to_string(p.weight) + ")");
  }
  return out;
}

TEST(DefaultsTest, UpstreamDefaultProfileOrder) {
  // Upstream's default multi-point list without DynamicResources and NodeDeclaredFeatures.
  const std::vector<std::string> expected = {
      "SchedulingGates(0)",  "PrioritySort(0)",      "NodeUnschedulable(0)",
      "NodeName(0)",         "TaintToleration(3)",   "NodeAffinity(2)",
      "NodePorts(0)",        "NodeResourcesFit(1)",  "VolumeRestrictions(0)",
      "NodeVolumeLimits(0)", "VolumeBinding(0)",     "VolumeZone(0)",
      "PodTopologySpread(2)",
      "InterPodAffinity(2)", "DefaultPreemption(0)", "NodeResourcesBalancedAllocation(1)",
      "ImageLocality(1)",    "DefaultBinder(0)"};
  EXPECT_EQ(DefaultEntries(), expected);
}

TEST(ParseConfigTest, EmptyFileGetsDefaults) {
  for (std::string_view text : {"", "# only a comment\n", "[host]\n", "profile = []\n"}) {
    HostConfig config = Parse(text);
    const HostConfig defaults;
    EXPECT_EQ(config.source, "schedhost.toml");
    EXPECT_EQ(config.parallelism, 16);
    EXPECT_EQ(config.percentage_of_nodes_to_score, 0);
    EXPECT_EQ(config.pod_initial_backoff, seconds(1));
    EXPECT_EQ(config.pod_max_backoff, seconds(10));
    EXPECT_EQ(config.plugin_dirs, defaults.plugin_dirs);
    EXPECT_THAT(config.libraries, IsEmpty());
    EXPECT_EQ(config.state_dir, "/var/lib/schedhost");
    EXPECT_EQ(config.unload, UnloadPolicy::kUnload);
    EXPECT_FALSE(config.watch_config);
    EXPECT_EQ(config.api_listen, "unix:///run/schedhost/schedhost.sock");
    EXPECT_EQ(config.metrics_listen, "127.0.0.1:10259");
    EXPECT_EQ(config.log_level, "info");
    ASSERT_EQ(config.profiles.size(), 1u) << text;
    const Profile& profile = config.profiles[0];
    EXPECT_EQ(profile.name, "default-scheduler");
    EXPECT_FALSE(profile.percentage_of_nodes_to_score.has_value());
    EXPECT_EQ(Entries(profile.multi_point.enabled), DefaultEntries());
    for (const PluginSet& set : profile.points) {
      EXPECT_THAT(set.enabled, IsEmpty());
      EXPECT_THAT(set.disabled, IsEmpty());
    }
    EXPECT_THAT(profile.plugin_config, IsEmpty());
  }
}

TEST(ParseConfigTest, ReadsTheKubernetesTable) {
  EXPECT_FALSE(Parse("").kubernetes.has_value());
  HostConfig config = Parse(R"(
[kubernetes]
kubeconfig = "kube/a.conf:/etc/kube/b.conf"
context = "prod"
qps = 0
burst = 500
sync_timeout = "30s"
watch_idle_timeout = "90s"
)");
  ASSERT_TRUE(config.kubernetes.has_value());
  EXPECT_EQ(config.kubernetes->kubeconfig, "/etc/sh/kube/a.conf:/etc/kube/b.conf");
  EXPECT_EQ(config.kubernetes->context, "prod");
  EXPECT_FALSE(config.kubernetes->in_cluster);
  EXPECT_EQ(config.kubernetes->qps, 0);
  EXPECT_EQ(config.kubernetes->burst, 500);
  EXPECT_EQ(config.kubernetes->sync_timeout, std::chrono::seconds(30));
  EXPECT_EQ(config.kubernetes->watch_idle_timeout, std::chrono::seconds(90));
  config = Parse("[kubernetes]\nin_cluster = true\nqps = 12.5\n");
  EXPECT_TRUE(config.kubernetes->in_cluster);
  EXPECT_EQ(config.kubernetes->kubeconfig, "");
  EXPECT_EQ(config.kubernetes->qps, 12.5);
  EXPECT_EQ(config.kubernetes->burst, 100);
}

TEST(ParseConfigTest, LeaderElectionDefaultsToKubeSchedulersAndReadsItsTable) {
  HostConfig config = Parse("[kubernetes]\n");
  const LeaderElectionConfig& defaults = config.kubernetes->leader_election;
  EXPECT_TRUE(defaults.enabled);
  EXPECT_EQ(defaults.lease_namespace, "kube-system");
  EXPECT_EQ(defaults.lease_name, "schedhost");
  EXPECT_EQ(defaults.identity, "");
  EXPECT_EQ(defaults.lease_duration, std::chrono::seconds(15));
  EXPECT_EQ(defaults.renew_deadline, std::chrono::seconds(10));
  EXPECT_EQ(defaults.retry_period, std::chrono::seconds(2));
  EXPECT_FALSE(defaults.delay_cache_until_active);
  config = Parse(R"(
[kubernetes.leader_election]
enabled = false
lease_namespace = "sched"
lease_name = "blue.schedhost"
identity = "replica-a"
lease_duration = "4s"
renew_deadline = "3s"
retry_period = "500ms"
)");
  const LeaderElectionConfig& le = config.kubernetes->leader_election;
  EXPECT_FALSE(le.enabled);
  EXPECT_EQ(le.lease_namespace, "sched");
  EXPECT_EQ(le.lease_name, "blue.schedhost");
  EXPECT_EQ(le.identity, "replica-a");
  EXPECT_EQ(le.lease_duration, std::chrono::seconds(4));
  EXPECT_EQ(le.renew_deadline, std::chrono::seconds(3));
  EXPECT_EQ(le.retry_period, std::chrono::milliseconds(500));
}

TEST(ParseConfigTest, ReadsEveryHostSetting) {
  HostConfig config = Parse(R"(
[host]
parallelism = 4
percentage_of_nodes_to_score = 35
pod_initial_backoff = "500ms"
pod_max_backoff = "1m30s"
plugin_dirs = ["plugins", "/opt/p", "../shared/p"]
libraries = [{ path = "x/libfoo.so", sha256 = "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789" },
             { path = "/abs/libbar.so" }]
state_dir = "state"
unload = "pin"
watch_config = true
[api]
listen = "127.0.0.1:9000"
[api.tls]
cert = "tls/server.crt"
key = "/etc/keys/server.key"
client_ca = "tls/ca.crt"
[metrics]
listen = "[::1]:0"
)");
  EXPECT_EQ(config.parallelism, 4);
  EXPECT_EQ(config.percentage_of_nodes_to_score, 35);
  EXPECT_EQ(config.pod_initial_backoff, milliseconds(500));
  EXPECT_EQ(config.pod_max_backoff, seconds(90));
  EXPECT_THAT(config.plugin_dirs, ElementsAre("/etc/sh/plugins", "/opt/p", "/etc/shared/p"));
  ASSERT_EQ(config.libraries.size(), 2u);
  EXPECT_EQ(config.libraries[0].path, "/etc/sh/x/libfoo.so");
  EXPECT_EQ(config.libraries[0].sha256,
            "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
  EXPECT_EQ(config.libraries[0].location.ToString(), "schedhost.toml:8:14");
  EXPECT_EQ(config.libraries[1].path, "/abs/libbar.so");
  EXPECT_FALSE(config.libraries[1].sha256.has_value());
  EXPECT_EQ(config.state_dir, "/etc/sh/state");
  EXPECT_EQ(config.unload, UnloadPolicy::kPin);
  EXPECT_TRUE(config.watch_config);
  EXPECT_EQ(config.api_listen, "127.0.0.1:9000");
  ASSERT_TRUE(config.api_tls.has_value());
  EXPECT_EQ(config.api_tls->cert, "/etc/sh/tls/server.crt");
  EXPECT_EQ(config.api_tls->key, "/etc/keys/server.key");
  EXPECT_EQ(config.api_tls->client_ca, "/etc/sh/tls/ca.crt");
  EXPECT_EQ(config.metrics_listen, "[::1]:0");
}

TEST(ParseConfigTest, RelativePathsStayRelativeWithoutBaseDir) {
  HostConfig config = ParseConfig("[host]\nplugin_dirs = [\"p\"]\n", "x.toml", "");
  EXPECT_THAT(config.plugin_dirs, ElementsAre("p"));
}

TEST(ParseConfigTest, ListenersAcceptedForms) {
  for (std::string listen : {"unix:///run/x.sock", "localhost:1", ":8080", "[::]:65535"}) {
    EXPECT_EQ(Parse("[api]\nlisten = \"" + listen + "\"\n[api.tls]\ncert = \"c\"\nkey = \"k\"\n")
                  .api_listen,
              listen);
  }
  EXPECT_FALSE(Parse("[api]\nlisten = \"unix:///x.sock\"\n").api_tls.has_value());
  for (std::string listen : {"0.0.0.0:10259", ":0", "metrics.local:443"}) {
    EXPECT_EQ(Parse("[metrics]\nlisten = \"" + listen + "\"\n").metrics_listen, listen);
  }
  EXPECT_EQ(Parse("").ui_listen, "");  // no UI unless asked for
  for (std::string listen : {"127.0.0.1:0", "localhost:8080", "[::1]:9", "127.1.2.3:80"}) {
    EXPECT_EQ(Parse("[ui]\nlisten = \"" + listen + "\"\n").ui_listen, listen);
    EXPECT_TRUE(IsLoopbackListen(listen)) << listen;
  }
  for (std::string listen : {"0.0.0.0:1", ":1", "[::]:1", "10.0.0.1:1", "127.0.0:1", "127.a.b.c:1",
                             "localhost.example:1", "[::2]:1"}) {
    EXPECT_FALSE(IsLoopbackListen(listen)) << listen;
  }
}

// Beyond loopback the UI takes the API's TLS, so [api.tls] makes such an address valid, in
// whichever order the tables come.
TEST(ParseConfigTest, UiBeyondLoopbackWithApiTls) {
  const std::string api =
      "[api]\nlisten = \"unix:///x.sock\"\n[api.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n";
  for (std::string listen : {"0.0.0.0:10260", ":0", "[::]:443", "ui.example:8443"}) {
    const std::string ui = "[ui]\nlisten = \"" + listen + "\"\n";
    for (const std::string& text : {api + ui, ui + api}) {
      HostConfig config = Parse(text);
      EXPECT_EQ(config.ui_listen, listen) << text;
      ASSERT_TRUE(config.api_tls.has_value()) << text;
      EXPECT_EQ(config.api_tls->cert, "/etc/sh/c.pem");
    }
  }
}

TEST(ParseConfigTest, LogLevel) {
  for (std::string level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    EXPECT_EQ(Parse("[log]\nlevel = \"" + level + "\"\n").log_level, level);
  }
}

TEST(ParseConfigTest, ProfilesInFileOrderWithLocations) {
  HostConfig config = Parse(R"([[profile]]
name = "a"
percentage_of_nodes_to_score = 0

[[profile]]
name = "b"
percentage_of_nodes_to_score = 50
[[profile]]
)");
  ASSERT_EQ(config.profiles.size(), 3u);
  EXPECT_EQ(config.profiles[0].name, "a");
  EXPECT_EQ(config.profiles[0].percentage_of_nodes_to_score, 0);
  EXPECT_EQ(config.profiles[0].location.ToString(), "schedhost.toml:1:1");
  EXPECT_EQ(config.profiles[1].name, "b");
  EXPECT_EQ(config.profiles[1].percentage_of_nodes_to_score, 50);
  EXPECT_EQ(config.profiles[2].name, "default-scheduler");
  EXPECT_EQ(config.FindProfile("b"), &config.profiles[1]);
  EXPECT_EQ(config.FindProfile("c"), nullptr);
  // Default entries carry the location of the profile they were merged into.
  EXPECT_EQ(config.profiles[1].multi_point.enabled[0].location.ToString(), "schedhost.toml:5:1");
  EXPECT_TRUE(config.profiles[1].multi_point.enabled[0].from_defaults);
}

// Rule 1: a profile's multi_point is the defaults merged with the user's multi_point lists.
TEST(MergeTest, MultiPointMergesWithDefaults) {
  struct Case {
    std::string name;
    std::string multi_point;
    std::vector<std::string> expected;
  };
  std::vector<std::string> defaults = DefaultEntries();
  auto without = [&](std::vector<std::string> names) {
    std::vector<std::string> out;
    for (const std::string& d : defaults) {
      if (std::find(names.begin(), names.end(), d.substr(0, d.find('('))) == names.end()) {
        out.push_back(d);
      }
    }
    return out;
  };
  auto replaced = [&](const std::string& name, const std::string& by) {
    std::vector<std::string> out = defaults;
    for (std::string& d : out) {
      if (d.substr(0, d.find('(')) == name) d = by;
    }
    return out;
  };
  auto plus = [](std::vector<std::string> a, std::vector<std::string> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<Case> cases = {
      {"nothing", "", defaults},
      {"disable one", "disabled = [{ name = \"NodePorts\" }]", without({"NodePorts"})},
      {"disable two", "disabled = [{ name = \"NodeName\" }, { name = \"DefaultBinder\" }]",
       without({"NodeName", "DefaultBinder"})},
      {"disable unknown is harmless", "disabled = [{ name = \"Nope\" }]", defaults},
      {"disable all", "disabled = [{ name = \"*\" }]", {}},
      {"disable all, enable some",
       "disabled = [{ name = \"*\" }]\n"
       "enabled = [{ name = \"Foo\", weight = 4 }, { name = \"NodeName\" }]",
       {"Foo(4)", "NodeName(0)"}},
      {"replace in place keeps position, weight wins",
       "enabled = [{ name = \"TaintToleration\", weight = 7 }]",
       replaced("TaintToleration", "TaintToleration(7)")},
      {"replace without weight resets it", "enabled = [{ name = \"NodeAffinity\" }]",
       replaced("NodeAffinity", "NodeAffinity(0)")},
      {"append new plugins in order", "enabled = [{ name = \"B\" }, { name = \"A\", weight = 2 }]",
       plus(defaults, {"B(0)", "A(2)"})},
      {"disable then re-enable appends",
       "disabled = [{ name = \"PrioritySort\" }]\nenabled = [{ name = \"PrioritySort\" }]",
       plus(without({"PrioritySort"}), {"PrioritySort(0)"})},
  };
  for (const Case& c : cases) {
    HostConfig config =
        Parse("[[profile]]\n[profile.plugins.multi_point]\n" + c.multi_point + "\n");
    EXPECT_EQ(Entries(config.profiles[0].multi_point.enabled), c.expected) << c.name;
  }
}

// Rule 2: a specific point holds only the user's lists (no defaults at specific points).
TEST(MergeTest, SpecificPointsHoldUserListsOnly) {
  HostConfig config = Parse(R"([[profile]]
[profile.plugins.score]
enabled = [{ name = "NodeResourcesFit", weight = 5 }, { name = "Mine" }]
disabled = [{ name = "ImageLocality" }, { name = "*" }]
[profile.plugins.filter]
disabled = [{ name = "NodePorts" }]
)");
  const Profile& profile = config.profiles[0];
  const PluginSet& score = profile.points[PointIndex(Point::kScore)];
  EXPECT_THAT(Entries(score.enabled), ElementsAre("NodeResourcesFit(5)", "Mine(0)"));
  EXPECT_THAT(Entries(score.disabled), ElementsAre("ImageLocality(0)", "*(0)"));
  EXPECT_EQ(score.enabled[0].location.ToString(), "schedhost.toml:3:12");
  const PluginSet& filter = profile.points[PointIndex(Point::kFilter)];
  EXPECT_THAT(filter.enabled, IsEmpty());
  EXPECT_THAT(Entries(filter.disabled), ElementsAre("NodePorts(0)"));
  EXPECT_EQ(Entries(profile.multi_point.enabled), DefaultEntries());
  for (Point point : kAllPoints) {
    if (point == Point::kScore || point == Point::kFilter) continue;
    EXPECT_THAT(profile.points[PointIndex(point)].enabled, IsEmpty()) << PointName(point);
  }
}

TEST(ParseConfigTest, ArrayOfTablesEntriesWork) {
  HostConfig config = Parse(R"([[profile]]
[[profile.plugins.bind.enabled]]
name = "MyBinder"
[[profile.plugins.bind.enabled]]
name = "Other"
)");
  const PluginSet& bind = config.profiles[0].points[PointIndex(Point::kBind)];
  EXPECT_THAT(Entries(bind.enabled), ElementsAre("MyBinder(0)", "Other(0)"));
  EXPECT_EQ(bind.enabled[1].location.ToString(), "schedhost.toml:4:1");
}

TEST(ParseConfigTest, PluginConfigBecomesTrees) {
  HostConfig config = Parse(R"([[profile]]
[profile.plugin_config.NodeResourcesFit]
scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", weight = 1 }] }
[profile.plugin_config.Other]
)");
  const Profile& profile = config.profiles[0];
  ASSERT_EQ(profile.plugin_config.size(), 2u);
  const ConfigNode& fit = *profile.plugin_config.at("NodeResourcesFit");
  EXPECT_EQ(fit.kind, SCHEDHOST_CONFIG_TABLE);
  EXPECT_EQ(fit.location, "schedhost.toml:2:1");
  const ConfigNode* strategy = fit.Find("scoring_strategy");
  ASSERT_NE(strategy, nullptr);
  EXPECT_EQ(strategy->Find("type")->string_value, "MostAllocated");
  const ConfigNode* resources = strategy->Find("resources");
  ASSERT_EQ(resources->children.size(), 1u);
  EXPECT_EQ(resources->children[0].Find("weight")->int_value, 1);
  EXPECT_EQ(profile.plugin_config.at("Other")->children.size(), 0u);
}

}  // namespace
}  // namespace schedhost::config
