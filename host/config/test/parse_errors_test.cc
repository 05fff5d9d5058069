// Every validation error of ParseConfig, with the exact location and message it reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/config/host_config.h"

namespace schedhost::config {
namespace {

using ::testing::HasSubstr;

struct ErrorCase {
  std::string name;
  std::string toml;
  int line;
  int column;
  std::string message;  // the full message after "file:line:col: "
};

void ExpectError(const ErrorCase& c) {
  try {
    ParseConfig(c.toml, "schedhost.toml", "/etc/sh");
    ADD_FAILURE() << c.name << ": expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, "schedhost.toml") << c.name;
    EXPECT_EQ(e.line, c.line) << c.name << ": " << e.what();
    EXPECT_EQ(e.column, c.column) << c.name << ": " << e.what();
    EXPECT_EQ(e.message, c.message) << c.name;
    EXPECT_EQ(std::string(e.what()), "schedhost.toml:" + std::to_string(c.line) + ":" +
                                         std::to_string(c.column) + ": " + c.message)
        << c.name;
  }
}

TEST(ParseErrorsTest, HostSection) {
  const std::vector<ErrorCase> cases = {
      {"unknown top-level key", "[hots]\n", 1, 2,
       "unknown key \"hots\" in the top level; did you mean \"host\"?"},
      {"unknown host key with suggestion", "[host]\nparallelism = 2\nparalelism = 4\n", 3, 1,
       "unknown key \"paralelism\" in [host]; did you mean \"parallelism\"?"},
      {"unknown host key without suggestion", "[host]\nfoo = 1\n", 2, 1,
       "unknown key \"foo\" in [host]; known keys are: parallelism, "
       "percentage_of_nodes_to_score, pod_initial_backoff, pod_max_backoff, plugin_dirs, "
       "libraries, state_dir, unload, watch_config, batch_plugin_calls"},
      {"host not a table", "host = 3\n", 1, 8, "[host] must be a table, not an integer"},
      {"parallelism zero", "[host]\nparallelism = 0\n", 2, 15,
       "host.parallelism must be between 1 and 4096, not 0"},
      {"parallelism string", "[host]\nparallelism = \"16\"\n", 2, 15,
       "host.parallelism must be an integer, not a string"},
      {"parallelism float", "[host]\nparallelism = 1.5\n", 2, 15,
       "host.parallelism must be an integer, not a float"},
      {"percentage above 100", "[host]\npercentage_of_nodes_to_score = 101\n", 2, 32,
       "host.percentage_of_nodes_to_score must be between 0 and 100, not 101"},
      {"duration unknown unit", "[host]\npod_initial_backoff = \"1x\"\n", 2, 23,
       "host.pod_initial_backoff: invalid duration \"1x\": unknown unit \"x\" (use ns, us, "
       "ms, s, m or h)"},
      {"duration missing unit", "[host]\npod_max_backoff = \"10\"\n", 2, 19,
       "host.pod_max_backoff: invalid duration \"10\": missing unit (use ns, us, ms, s, m or "
       "h, e.g. \"1s\")"},
      {"duration as integer", "[host]\npod_initial_backoff = 1\n", 2, 23,
       "host.pod_initial_backoff must be a duration string like \"1s\" or \"500ms\", not an "
       "integer"},
      {"duration zero", "[host]\npod_initial_backoff = \"0s\"\n", 2, 23,
       "host.pod_initial_backoff must be positive, not \"0s\""},
      {"duration negative", "[host]\npod_max_backoff = \"-1s\"\n", 2, 19,
       "host.pod_max_backoff must be positive, not \"-1s\""},
      {"max below initial", "[host]\npod_initial_backoff = \"5s\"\npod_max_backoff = \"2s\"\n", 3,
       19, "host.pod_max_backoff (2s) must not be shorter than host.pod_initial_backoff (5s)"},
      {"initial above default max", "[host]\npod_initial_backoff = \"1m\"\n", 2, 23,
       "host.pod_max_backoff (10s) must not be shorter than host.pod_initial_backoff (1m0s)"},
      {"plugin_dirs not array", "[host]\nplugin_dirs = \"/x\"\n", 2, 15,
       "host.plugin_dirs must be an array, not a string"},
      {"plugin_dirs entry not string", "[host]\nplugin_dirs = [\"/x\", 3]\n", 2, 22,
       "host.plugin_dirs[1] must be a string, not an integer"},
      {"plugin_dirs empty entry", "[host]\nplugin_dirs = [\"\"]\n", 2, 16,
       "host.plugin_dirs[0] must not be empty"},
      {"plugin_dirs duplicate", "[host]\nplugin_dirs = [\"a\", \"./a\"]\n", 2, 21,
       "plugin directory /etc/sh/a is listed twice"},
      {"library not a table", "[host]\nlibraries = [\"x.so\"]\n", 2, 14,
       "host.libraries[0] must be a table like { path = \"x/libfoo.so\", sha256 = \"<64 hex "
       "digits>\" }, not a string"},
      {"library without path", "[host]\nlibraries = [{ sha256 = \"00\" }]\n", 2, 14,
       "host.libraries[0] needs a path"},
      {"library unknown key", "[host]\nlibraries = [{ path = \"a.so\", sha = \"00\" }]\n", 2, 31,
       "unknown key \"sha\" in host.libraries[0]; did you mean \"sha256\"?"},
      {"library bad sha256", "[host]\nlibraries = [{ path = \"a.so\", sha256 = \"abc\" }]\n", 2, 40,
       "host.libraries[0].sha256 must be 64 hexadecimal digits, not \"abc\""},
      {"library listed twice",
       "[host]\nlibraries = [{ path = \"a.so\" }, { path = \"/etc/sh/a.so\" }]\n", 2, 42,
       "library /etc/sh/a.so is listed twice"},
      {"unload unknown", "[host]\nunload = \"keep\"\n", 2, 10,
       "host.unload must be \"unload\" or \"pin\", not \"keep\""},
      {"watch_config not boolean", "[host]\nwatch_config = \"yes\"\n", 2, 16,
       "host.watch_config must be true or false, not a string"},
      {"state_dir not string", "[host]\nstate_dir = false\n", 2, 13,
       "host.state_dir must be a string, not a boolean"},
  };
  for (const ErrorCase& c : cases) ExpectError(c);
}

TEST(ParseErrorsTest, Listeners) {
  auto not_loopback = [](const std::string& listen) {
    return "ui.listen \"" + listen +
           "\" is not a loopback address, which the web UI serves only over TLS with the API's "
           "certificate: add [api.tls] with cert and key (and client_ca for mutual TLS), or "
           "listen on 127.0.0.1, [::1] or localhost";
  };
  const std::vector<ErrorCase> cases = {
      {"api scheme", "[api]\nlisten = \"tcp://x:1\"\n", 2, 10,
       "api.listen must be \"unix:///absolute/path.sock\" or \"host:port\" (port 0..65535), not "
       "\"tcp://x:1\""},
      {"api relative unix path", "[api]\nlisten = \"unix://rel.sock\"\n", 2, 10,
       "api.listen must be \"unix:///absolute/path.sock\" or \"host:port\" (port 0..65535), not "
       "\"unix://rel.sock\""},
      {"metrics no port", "[metrics]\nlisten = \"localhost\"\n", 2, 10,
       "metrics.listen must be \"host:port\" (port 0..65535), not \"localhost\""},
      {"metrics port too big", "[metrics]\nlisten = \"h:65536\"\n", 2, 10,
       "metrics.listen must be \"host:port\" (port 0..65535), not \"h:65536\""},
      {"metrics unix not allowed", "[metrics]\nlisten = \"unix:///x.sock\"\n", 2, 10,
       "metrics.listen must be \"host:port\" (port 0..65535), not \"unix:///x.sock\""},
      {"api tcp without tls", "[api]\nlisten = \"0.0.0.0:50051\"\n", 2, 10,
       "api.listen \"0.0.0.0:50051\" is a TCP address, which schedhost serves only over TLS: add "
       "[api.tls] with cert and key (and client_ca for mutual TLS), or listen on a Unix socket "
       "(\"unix:///run/schedhost/schedhost.sock\")"},
      {"api tls without key", "[api]\nlisten = \"h:1\"\n[api.tls]\ncert = \"c.pem\"\n", 3, 1,
       "api.tls.key is required: the PEM file of the server's private key"},
      {"api tls unknown key",
       "[api]\nlisten = \"h:1\"\n[api.tls]\ncert = \"c\"\nkey = \"k\"\nca = \"x\"\n", 6, 1,
       "unknown key \"ca\" in [api.tls]; known keys are: cert, key, client_ca"},
      {"metrics unknown key", "[metrics]\nlistn = \"h:1\"\n", 2, 1,
       "unknown key \"listn\" in [metrics]; did you mean \"listen\"?"},
      {"ui not loopback", "[ui]\nlisten = \"0.0.0.0:8080\"\n", 2, 10, not_loopback("0.0.0.0:8080")},
      {"ui every address", "[ui]\nlisten = \":8080\"\n", 2, 10, not_loopback(":8080")},
      // [api] without tls, before or after [ui]: still refused, at ui.listen.
      {"ui not loopback, api after it without tls",
       "[ui]\nlisten = \"[::]:1\"\n[api]\nlisten = \"unix:///x.sock\"\n", 2, 10,
       not_loopback("[::]:1")},
      {"ui not loopback, api before it without tls",
       "[api]\nlisten = \"unix:///x.sock\"\n\n[ui]\nlisten = \"ui.example:443\"\n", 5, 10,
       not_loopback("ui.example:443")},
      {"ui no port", "[ui]\nlisten = \"127.0.0.1\"\n", 2, 10,
       "ui.listen must be \"host:port\" (port 0..65535), not \"127.0.0.1\""},
      {"ui unknown key", "[ui]\nport = 8080\n", 2, 1,
       "unknown key \"port\" in [ui]; known keys are: listen"},
      {"log level unknown", "[log]\nlevel = \"verbose\"\n", 2, 9,
       "log.level \"verbose\" is not a level: use trace, debug, info, warn, error, critical or "
       "off"},
      {"log level not a string", "[log]\nlevel = 3\n", 2, 9,
       "log.level must be a string, not an integer"},
      {"log unknown key", "[log]\nlevl = \"info\"\n", 2, 1,
       "unknown key \"levl\" in [log]; did you mean \"level\"?"},
  };
  for (const ErrorCase& c : cases) ExpectError(c);
}

TEST(ParseErrorsTest, Profiles) {
  const std::vector<ErrorCase> cases = {
      {"profile as a single table", "[profile]\nname = \"x\"\n", 1, 1,
       "profile must be an array of tables: write each profile as [[profile]], not a table"},
      {"profile array of strings", "profile = [\"x\"]\n", 1, 12,
       "profile[0] must be a table (write [[profile]]), not a string"},
      {"duplicate profile names", "[[profile]]\nname = \"a\"\n[[profile]]\nname = \"a\"\n", 4, 8,
       "profile \"a\" is defined twice (first at schedhost.toml:1:1); profile names must be "
       "unique"},
      {"duplicate default names", "[[profile]]\n[[profile]]\n", 2, 1,
       "profile \"default-scheduler\" is defined twice (first at schedhost.toml:1:1); profile "
       "names must be unique"},
      {"empty profile name", "[[profile]]\nname = \"\"\n", 2, 8,
       "profile[0].name must not be empty"},
      {"unknown profile key", "[[profile]]\nplugin = {}\n", 2, 1,
       "unknown key \"plugin\" in [[profile]]; did you mean \"plugins\"?"},
      {"profile percentage", "[[profile]]\npercentage_of_nodes_to_score = -1\n", 2, 32,
       "profile \"default-scheduler\": percentage_of_nodes_to_score must be between 0 and 100, "
       "not -1"},
      {"unknown point", "[[profile]]\n[profile.plugins.scroe]\n", 2, 18,
       "unknown key \"scroe\" in profile \"default-scheduler\": plugins; did you mean \"score\"?"},
      {"point not a table", "[[profile]]\nplugins = { filter = 1 }\n", 2, 22,
       "profile \"default-scheduler\", point filter must be a table, not an integer"},
      {"unknown list key", "[[profile]]\n[profile.plugins.filter]\nenable = []\n", 3, 1,
       "unknown key \"enable\" in profile \"default-scheduler\", point filter; did you mean "
       "\"enabled\"?"},
      {"enabled not array", "[[profile]]\n[profile.plugins.filter]\nenabled = \"Foo\"\n", 3, 11,
       "profile \"default-scheduler\", point filter: enabled must be an array, not a string"},
      {"entry not a table", "[[profile]]\n[profile.plugins.filter]\nenabled = [\"Foo\"]\n", 3, 12,
       "profile \"default-scheduler\", point filter: enabled[0] must be a table like { name = "
       "\"PluginName\" }, not a string"},
      {"entry without name", "[[profile]]\n[profile.plugins.score]\nenabled = [{ weight = 2 }]\n",
       3, 12,
       "profile \"default-scheduler\", point score: enabled[0] needs a name, e.g. { name = "
       "\"Foo\" }"},
      {"entry empty name", "[[profile]]\n[profile.plugins.filter]\nenabled = [{ name = \"\" }]\n",
       3, 21, "profile \"default-scheduler\", point filter: enabled[0].name must not be empty"},
      {"entry unknown key",
       "[[profile]]\n[profile.plugins.score]\nenabled = [{ name = \"A\", wieght = 2 }]\n", 3, 26,
       "unknown key \"wieght\" in profile \"default-scheduler\", point score, enabled[0]; did you "
       "mean \"weight\"?"},
      {"weight on filter",
       "[[profile]]\nname = \"p\"\n[profile.plugins.filter]\nenabled = [{ name = \"Foo\", weight = "
       "2 }]\n",
       4, 37,
       "profile \"p\", point filter: plugin \"Foo\": weight applies to score only; set it under "
       "plugins.score or plugins.multi_point"},
      {"weight too large",
       "[[profile]]\n[profile.plugins.score]\nenabled = [{ name = \"Foo\", weight = 100001 }]\n", 3,
       37,
       "profile \"default-scheduler\", point score: plugin \"Foo\": weight must be between 0 and "
       "100000, not 100001"},
      {"weight negative",
       "[[profile]]\n[profile.plugins.multi_point]\nenabled = [{ name = \"Foo\", weight = -1 }]\n",
       3, 37,
       "profile \"default-scheduler\", point multi_point: plugin \"Foo\": weight must be between "
       "0 and 100000, not -1"},
      {"weight not integer",
       "[[profile]]\n[profile.plugins.score]\nenabled = [{ name = \"Foo\", weight = \"2\" }]\n", 3,
       37,
       "profile \"default-scheduler\", point score: plugin \"Foo\": weight must be an integer, not "
       "a string"},
      {"weight in disabled",
       "[[profile]]\n[profile.plugins.score]\ndisabled = [{ name = \"Foo\", weight = 2 }]\n", 3, 38,
       "profile \"default-scheduler\", point score: disabled[0]: weight has no meaning in a "
       "disabled list; remove it"},
      {"wildcard enabled", "[[profile]]\n[profile.plugins.filter]\nenabled = [{ name = \"*\" }]\n",
       3, 21,
       "profile \"default-scheduler\", point filter: enabled[0]: \"*\" stands for every plugin and "
       "is only allowed in disabled lists"},
      {"enabled twice",
       "[[profile]]\n[profile.plugins.filter]\nenabled = [{ name = \"A\" }, { name = \"B\" },\n  { "
       "name = \"A\" }]\n",
       4, 3,
       "profile \"default-scheduler\", point filter: plugin \"A\" is enabled twice (first at "
       "schedhost.toml:3:12); remove one of the entries"},
      {"enabled twice in multi_point",
       "[[profile]]\nname = \"m\"\n[profile.plugins.multi_point]\nenabled = [{ name = "
       "\"TaintToleration\" }, { name = \"TaintToleration\", weight = 1 }]\n",
       4, 42,
       "profile \"m\", point multi_point: plugin \"TaintToleration\" is enabled twice (first at "
       "schedhost.toml:4:12); remove one of the entries"},
      {"plugin_config not table", "[[profile]]\nplugin_config = 3\n", 2, 17,
       "profile \"default-scheduler\": plugin_config must be a table, not an integer"},
      {"plugin_config entry not table", "[[profile]]\nplugin_config = { Foo = 1 }\n", 2, 25,
       "profile \"default-scheduler\": plugin_config.Foo must be a table of the plugin's "
       "arguments, not an integer"},
      {"plugin_config wildcard", "[[profile]]\n[profile.plugin_config.\"*\"]\n", 2, 24,
       "profile \"default-scheduler\": plugin_config needs a plugin name as key, not \"*\""},
      {"plugin_config date",
       "[[profile]]\n[profile.plugin_config.Foo]\nwhen = 2024-01-01T00:00:00Z\n", 3, 8,
       "plugin arguments cannot hold a date-time; write it as a string"},
  };
  for (const ErrorCase& c : cases) ExpectError(c);
}

TEST(ParseErrorsTest, KubernetesSection) {
  const std::vector<ErrorCase> cases = {
      {"kubernetes not a table", "kubernetes = 1\n", 1, 14,
       "[kubernetes] must be a table, not an integer"},
      {"kubernetes unknown key", "[kubernetes]\nkubeconfg = \"k\"\n", 2, 1,
       "unknown key \"kubeconfg\" in [kubernetes]; did you mean \"kubeconfig\"?"},
      {"in cluster with a kubeconfig", "[kubernetes]\nkubeconfig = \"k\"\nin_cluster = true\n", 3,
       14,
       "kubernetes.in_cluster = true uses the pod's service account: leave kubeconfig and "
       "context unset"},
      {"negative qps", "[kubernetes]\nqps = -1\n", 2, 7,
       "kubernetes.qps must be a number from 0 (no limit) to 1000000"},
      {"burst zero", "[kubernetes]\nburst = 0\n", 2, 9,
       "kubernetes.burst must be between 1 and 1000000, not 0"},
      {"empty kubeconfig", "[kubernetes]\nkubeconfig = \"\"\n", 2, 14,
       "kubernetes.kubeconfig must not be empty"},
      {"sync timeout", "[kubernetes]\nsync_timeout = \"soon\"\n", 2, 16,
       "kubernetes.sync_timeout: invalid duration \"soon\": expected a number at \"soon\""},
      {"election unknown key", "[kubernetes.leader_election]\nlease_duraton = \"3s\"\n", 2, 1,
       "unknown key \"lease_duraton\" in [kubernetes.leader_election]; did you mean "
       "\"lease_duration\"?"},
      {"election bad lease name", "[kubernetes.leader_election]\nlease_name = \"Sched_Host\"\n",
       2, 14,
       "kubernetes.leader_election.lease_name \"Sched_Host\" is not a valid object name "
       "(lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at "
       "most 253)"},
      {"election fractional lease", "[kubernetes.leader_election]\nlease_duration = \"15.5s\"\n",
       2, 18,
       "kubernetes.leader_election.lease_duration must be whole seconds: the Lease stores "
       "leaseDurationSeconds"},
      {"election deadline past lease",
       "[kubernetes.leader_election]\nlease_duration = \"10s\"\nrenew_deadline = \"10s\"\n", 3, 18,
       "kubernetes.leader_election.renew_deadline must be shorter than lease_duration (10s >= "
       "10s): a standby could take over while the leader still schedules"},
      {"election retry too long", "[kubernetes.leader_election]\nretry_period = \"9s\"\n", 2, 16,
       "kubernetes.leader_election.renew_deadline must be longer than 1.2 × retry_period (10s <= "
       "1.2 × 9s): the leader needs room for more than one renewal attempt"},
  };
  for (const ErrorCase& c : cases) ExpectError(c);
}

TEST(ParseErrorsTest, InvalidTomlNamesThePosition) {
  try {
    ParseConfig("[host]\nparallelism = = 3\n", "bad.toml", "");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, "bad.toml");
    EXPECT_EQ(e.line, 2);
    EXPECT_GT(e.column, 0);
    EXPECT_THAT(e.what(), HasSubstr("bad.toml:2:"));
    EXPECT_THAT(e.message, HasSubstr("invalid TOML: "));
  }
  try {
    ParseConfig("[host]\nparallelism = 1\nparallelism = 2\n", "dup.toml", "");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 3);
    EXPECT_THAT(e.message, HasSubstr("invalid TOML: "));
  }
}

TEST(LoadConfigFileTest, MissingFileIsAConfigError) {
  try {
    LoadConfigFile("/nonexistent/dir/schedhost.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, "/nonexistent/dir/schedhost.toml");
    EXPECT_EQ(e.line, 0);
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/dir/schedhost.toml: cannot read config file"));
  }
}

}  // namespace
}  // namespace schedhost::config
