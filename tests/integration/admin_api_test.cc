// schedhost.v1.Admin end to end: a ServiceHost on a temporary socket with the builtin plugins,
// called through the generated stubs — profiles, plugin libraries, stats, Explain and Reload.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <schedhost/plugin.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "host/framework/testing/command.h"
#include "host/metrics/scheduler_metrics.h"
#include "tests/integration/api_fixture.h"

namespace schedhost::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Node returns a Node manifest with `cpu` cpus.
std::string Node(const std::string& name, const std::string& cpu) {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" + name +
         "\"},\"status\":{\"capacity\":{\"cpu\":\"" + cpu +
         "\",\"memory\":\"8Gi\",\"pods\":\"20\"}}}";
}

// Pod returns a Pod manifest (namespace default) requesting `cpu`.
std::string Pod(const std::string& name, const std::string& cpu) {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" + name +
         "\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
         "\"resources\":{\"requests\":{\"cpu\":\"" +
         cpu + "\",\"memory\":\"256Mi\"}}}]}}";
}

// Sha256sum returns the lower-case hex digest of `path` as coreutils computes it.
std::string Sha256sum(const std::string& path) {
  const std::string out = framework::testing::RunCommand("sha256sum '" + path + "'").output;
  return out.substr(0, out.find(' '));
}

class AdminApiTest : public ApiTest {
 protected:
  v1::StatsResponse Stats() {
    grpc::ClientContext context;
    v1::StatsResponse out;
    EXPECT_TRUE(admin_->Stats(&context, v1::StatsRequest(), &out).ok());
    return out;
  }

  // WaitFor polls Stats until `done` holds (30 s at most) and returns the last answer.
  v1::StatsResponse WaitFor(const std::function<bool(const v1::StatsResponse&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    v1::StatsResponse s = Stats();
    while (!done(s) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      s = Stats();
    }
    return s;
  }

  grpc::Status Explain(const std::string& name, v1::ExplainResponse* out) {
    grpc::ClientContext context;
    v1::ExplainRequest request;
    request.set_name(name);
    return admin_->Explain(&context, request, out);
  }

  v1::ListProfilesResponse Profiles() {
    grpc::ClientContext context;
    v1::ListProfilesResponse out;
    EXPECT_TRUE(admin_->ListProfiles(&context, v1::ListProfilesRequest(), &out).ok());
    return out;
  }
};

// PointPlugins returns "name:weight" of each plugin at `point` of `profile`.
std::vector<std::string> PointPlugins(const v1::Profile& profile, const std::string& point) {
  std::vector<std::string> out;
  for (const auto& ep : profile.extension_points()) {
    if (ep.extension_point() != point) continue;
    for (const auto& p : ep.plugins()) out.push_back(p.name() + ":" + std::to_string(p.weight()));
  }
  return out;
}

TEST_F(AdminApiTest, ListProfilesShowsTheDefaultProfileInUpstreamOrder) {
  v1::ListProfilesResponse r = Profiles();
  ASSERT_EQ(r.profiles_size(), 1);
  const v1::Profile& p = r.profiles(0);
  EXPECT_EQ(p.scheduler_name(), "default-scheduler");
  EXPECT_EQ(p.percentage_of_nodes_to_score(), 0);  // upstream's adaptive default
  std::vector<std::string> points;
  for (const auto& ep : p.extension_points()) points.push_back(ep.extension_point());
  EXPECT_THAT(points,
              ElementsAre("PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter",
                          "PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"));
  EXPECT_THAT(PointPlugins(p, "Score"),
              ElementsAre("TaintToleration:3", "NodeAffinity:2", "NodeResourcesFit:1",
                          "VolumeBinding:1", "PodTopologySpread:2", "InterPodAffinity:2",
                          "NodeResourcesBalancedAllocation:1", "ImageLocality:1"));
  EXPECT_THAT(PointPlugins(p, "Filter"),
              ElementsAre("NodeUnschedulable:0", "NodeName:0", "TaintToleration:0",
                          "NodeAffinity:0", "NodePorts:0", "NodeResourcesFit:0",
                          "VolumeRestrictions:0", "NodeVolumeLimits:0", "VolumeBinding:0",
                          "VolumeZone:0", "PodTopologySpread:0", "InterPodAffinity:0"));
  EXPECT_THAT(PointPlugins(p, "PreEnqueue"), ElementsAre("SchedulingGates:0"));
  EXPECT_THAT(PointPlugins(p, "QueueSort"), ElementsAre("PrioritySort:0"));
  EXPECT_THAT(PointPlugins(p, "PostFilter"), ElementsAre("DefaultPreemption:0"));
  EXPECT_THAT(PointPlugins(p, "Bind"), ElementsAre("DefaultBinder:0"));
  EXPECT_EQ(p.plugin_args_size(), 0);  // the defaults carry no plugin_config
}

TEST_F(AdminApiTest, ListPluginsNamesLibrariesWithTheirDigestAbiAndProfiles) {
  grpc::ClientContext context;
  v1::ListPluginsResponse r;
  ASSERT_TRUE(admin_->ListPlugins(&context, v1::ListPluginsRequest(), &r).ok());
  std::vector<std::string> names;
  for (const auto& p : r.plugins()) names.push_back(p.name());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  auto binder = std::find(names.begin(), names.end(), "DefaultBinder");
  ASSERT_NE(binder, names.end());
  const v1::Plugin& p = r.plugins(static_cast<int>(binder - names.begin()));
  EXPECT_TRUE(std::regex_match(p.sha256(), std::regex("[0-9a-f]{64}"))) << p.sha256();
  ASSERT_TRUE(std::filesystem::exists(p.library_path())) << p.library_path();
  EXPECT_EQ(p.sha256(), Sha256sum(p.library_path()));
  EXPECT_EQ(p.abi_version(), "1." + std::to_string(SCHEDHOST_ABI_MINOR));
  EXPECT_FALSE(p.version().empty());
  EXPECT_THAT(p.extension_points(), ElementsAre("Bind"));
  EXPECT_THAT(p.profiles(), ElementsAre("default-scheduler"));
}

TEST_F(AdminApiTest, StatsCountAttemptsBindingsAndTheQueue) {
  MustApply(Node("n1", "2"));
  MustApply(Node("n2", "4"));
  constexpr int kPods = 3;
  for (int i = 0; i < kPods; ++i) MustApply(Pod("small-" + std::to_string(i), "100m"));
  v1::StatsResponse s = WaitFor([](const auto& r) { return r.bound_pods() == kPods; });
  EXPECT_EQ(s.bound_pods(), kPods);
  EXPECT_EQ(s.attempts_scheduled(), kPods);
  EXPECT_GT(s.pods_per_second(), 0.0);

  MustApply(Pod("huge", "16"));  // fits nowhere
  s = WaitFor([](const auto& r) { return r.unschedulable_pods() == 1; });
  EXPECT_EQ(s.attempts_unschedulable(), 1u);
  EXPECT_EQ(s.unschedulable_pods(), 1u);
  EXPECT_EQ(s.active_pods() + s.backoff_pods() + s.in_flight_pods() + s.gated_pods(), 0u);
  EXPECT_EQ(s.attempts_scheduled(), kPods);
  EXPECT_EQ(s.attempts_error(), 0u);
  EXPECT_EQ(s.resource_version(), host_->store().resource_version());
}

TEST_F(AdminApiTest, ExplainShowsTheFailingFilterPluginPerNode) {
  MustApply(Node("n1", "2"));
  MustApply(Node("n2", "4"));
  MustApply(Pod("huge", "16"));
  WaitFor([](const auto& r) { return r.attempts_unschedulable() >= 1; });
  v1::ExplainResponse r;
  ASSERT_TRUE(Explain("huge", &r).ok());
  EXPECT_EQ(r.profile(), "default-scheduler");
  EXPECT_GE(r.attempts(), 1);
  EXPECT_EQ(r.node(), "");
  EXPECT_THAT(r.message(), HasSubstr("0/2 nodes are available: 2 Insufficient cpu."));
  EXPECT_EQ(r.nodes_not_evaluated(), 0);
  ASSERT_EQ(r.nodes_size(), 2);
  EXPECT_EQ(r.nodes(0).node(), "n1");  // infeasible nodes by name
  for (const auto& node : r.nodes()) {
    EXPECT_FALSE(node.feasible()) << node.node();
    EXPECT_EQ(node.reason(), "");
    std::map<std::string, std::pair<std::string, std::string>> filter;
    for (const auto& v : node.plugins()) filter[v.plugin()] = {v.filter_code(), v.filter_reason()};
    // More cpu than the node has at all: no preemption could help (upstream's Unresolvable).
    EXPECT_THAT(filter["NodeResourcesFit"],
                Pair("UnschedulableAndUnresolvable", "Insufficient cpu"));
    EXPECT_THAT(filter["NodeUnschedulable"], Pair("Success", ""));
    EXPECT_THAT(filter["TaintToleration"], Pair("Success", ""));
    // Filter stops at the first rejection: the plugins after NodeResourcesFit did not run.
    EXPECT_THAT(filter["PodTopologySpread"], Pair("", ""));
    EXPECT_THAT(filter["InterPodAffinity"], Pair("", ""));
    // Score-only plugins come after the Filter plugins and have no Filter verdict.
    EXPECT_EQ(node.plugins(node.plugins_size() - 1).plugin(), "ImageLocality");
    EXPECT_THAT(filter["ImageLocality"], Pair("", ""));
  }

  v1::ExplainResponse missing;
  grpc::Status s = Explain("nope", &missing);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("default/nope"));
  s = Explain("", &missing);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("name: required"));
}

TEST_F(AdminApiTest, ExplainOfABoundPodShowsWeightedScoresAndTotals) {
  MustApply(Node("n1", "2"));
  MustApply(Node("n2", "4"));
  MustApply(Pod("web", "500m"));
  WaitFor([](const auto& r) { return r.bound_pods() == 1; });
  std::map<std::string, int> weights;
  const v1::ListProfilesResponse profiles = Profiles();
  ASSERT_EQ(profiles.profiles_size(), 1);
  for (const auto& ep : profiles.profiles(0).extension_points()) {
    if (ep.extension_point() != "Score") continue;
    for (const auto& p : ep.plugins()) weights[p.name()] = p.weight();
  }
  v1::ExplainResponse r;
  ASSERT_TRUE(Explain("web", &r).ok());
  ASSERT_FALSE(r.node().empty());
  EXPECT_EQ(r.message(), "");
  EXPECT_EQ(r.attempts(), 1);
  ASSERT_EQ(r.nodes_size(), 2);
  int64_t best = -1;
  for (const auto& node : r.nodes()) {
    EXPECT_TRUE(node.feasible()) << node.node();
    int64_t sum = 0;
    for (const auto& v : node.plugins()) {
      if (weights.count(v.plugin()) == 0) {
        EXPECT_EQ(v.weighted_score(), 0) << v.plugin();
        continue;
      }
      EXPECT_EQ(v.weighted_score(), v.normalized_score() * weights[v.plugin()]) << v.plugin();
      EXPECT_GE(v.normalized_score(), 0);
      EXPECT_LE(v.normalized_score(), 100);
      sum += v.weighted_score();
      if (v.plugin() != "ImageLocality" && v.plugin() != "NodeResourcesBalancedAllocation") {
        // A Filter plugin on a feasible node passed (or was skipped by its PreFilter).
        EXPECT_THAT(v.filter_code(), ::testing::AnyOf("Success", "Skip")) << v.plugin();
      }
    }
    EXPECT_EQ(node.total_score(), sum) << node.node();
    best = std::max(best, node.total_score());
  }
  EXPECT_GT(best, 0);
  // Feasible nodes come best first, and the pod went to a best node.
  EXPECT_EQ(r.nodes(0).total_score(), best);
  const auto chosen = std::find_if(r.nodes().begin(), r.nodes().end(),
                                   [&](const auto& n) { return n.node() == r.node(); });
  ASSERT_NE(chosen, r.nodes().end());
  EXPECT_EQ(chosen->total_score(), best);
  // LeastAllocated NodeResourcesFit prefers the emptier node: n2 has twice the cpus.
  EXPECT_EQ(r.node(), "n2");
}

TEST_F(AdminApiTest, ReloadWithoutAConfigFileIsAFailedPrecondition) {
  grpc::ClientContext context;
  v1::ReloadResponse r;
  grpc::Status s = admin_->Reload(&context, v1::ReloadRequest(), &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("without a config file"));
}

// ReloadsCounted reads schedhost_config_reloads_total{result} from the process-wide registry.
double ReloadsCounted(const std::string& result) {
  const std::string text = metrics::DefaultRegistry().Render();
  const std::string series = "schedhost_config_reloads_total{result=\"" + result + "\"} ";
  const size_t at = text.find(series);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size()));
}

TEST(AdminProfilesTest, ListProfilesShowsPluginArgsAsJsonInFileOrder) {
  TempDir dir;
  const std::filesystem::path socket = dir.path() / "s.sock";
  const std::string toml =
      "[host]\nstate_dir = \"" + (dir.path() / "state").string() + "\"\n[api]\nlisten = \"unix://" +
      socket.string() +
      "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n"
      "[[profile]]\nname = \"default-scheduler\"\n"
      "[profile.plugin_config.NodeResourcesFit]\n"
      "scoring_strategy = { type = \"MostAllocated\", resources = [{ name = \"cpu\", weight = 2 }] "
      "}\n";
  ServiceHost host(config::ParseConfig(toml, "test.toml", {}), framework::testing::PluginDir());
  host.Start();
  auto admin = v1::Admin::NewStub(
      grpc::CreateChannel("unix://" + socket.string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::ListProfilesResponse r;
  ASSERT_TRUE(admin->ListProfiles(&context, v1::ListProfilesRequest(), &r).ok());
  ASSERT_EQ(r.profiles_size(), 1);
  ASSERT_EQ(r.profiles(0).plugin_args_size(), 1);
  EXPECT_EQ(r.profiles(0).plugin_args(0).name(), "NodeResourcesFit");
  EXPECT_EQ(r.profiles(0).plugin_args(0).args_json(),
            R"({"scoring_strategy":{"type":"MostAllocated","resources":[{"name":"cpu","weight":2}]}})");
  host.Stop();
}

TEST(AdminReloadTest, SwapsInAValidConfigAndRefusesABrokenOne) {
  TempDir dir;
  const std::filesystem::path socket = dir.path() / "s.sock";
  const std::filesystem::path file = dir.path() / "schedhost.toml";
  // A state_dir beside the file, never the machine's /var/lib/schedhost.
  const std::string api = "[host]\nstate_dir = \"state\"\n[api]\nlisten = \"unix://" +
                          socket.string() + "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
  std::ofstream(file) << api;
  ServiceHost host(config::LoadConfigFile(file), framework::testing::PluginDir(), file);
  host.Start();
  auto admin = v1::Admin::NewStub(
      grpc::CreateChannel("unix://" + socket.string(), grpc::InsecureChannelCredentials()));
  auto reload = [&] {
    grpc::ClientContext context;
    v1::ReloadResponse r;
    grpc::Status s = admin->Reload(&context, v1::ReloadRequest(), &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  };
  auto profiles = [&] {
    grpc::ClientContext context;
    v1::ListProfilesResponse r;
    EXPECT_TRUE(admin->ListProfiles(&context, v1::ListProfilesRequest(), &r).ok());
    std::vector<std::string> names;
    for (const auto& p : r.profiles()) names.push_back(p.scheduler_name());
    return names;
  };

  const double successes = ReloadsCounted("success");
  const double failures = ReloadsCounted("failure");
  v1::ReloadResponse r = reload();
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("generation 2 is live"));
  EXPECT_EQ(r.generation(), 2u);

  // A second, valid profile: swapped in.
  std::ofstream(file) << api << "[[profile]]\nname = \"default-scheduler\"\n"
                      << "[[profile]]\nname = \"batch\"\n";
  r = reload();
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("default-scheduler, batch"));
  EXPECT_EQ(r.generation(), 3u);
  EXPECT_THAT(profiles(), ElementsAre("default-scheduler", "batch"));

  // An unknown plugin on line 10: refused, naming file:line.
  std::ofstream(file) << api << "[[profile]]\nname = \"default-scheduler\"\n"
                      << "[profile.plugins.score]\n"
                      << "enabled = [{ name = \"NoSuchPlugin\", weight = 2 }]\n";
  r = reload();
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.message(), HasSubstr(file.string() + ":10:"));
  EXPECT_THAT(r.message(), HasSubstr("NoSuchPlugin"));
  EXPECT_EQ(r.generation(), 3u);
  EXPECT_THAT(profiles(), ElementsAre("default-scheduler", "batch"));

  // Broken TOML: refused with the parser's position.
  std::ofstream(file) << api << "[[profile]\n";
  r = reload();
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.message(), HasSubstr(file.string() + ":7:"));
  EXPECT_THAT(profiles(), ElementsAre("default-scheduler", "batch"));
  // schedhost_config_reloads_total counted two accepted and two refused reloads.
  EXPECT_EQ(ReloadsCounted("success") - successes, 2);
  EXPECT_EQ(ReloadsCounted("failure") - failures, 2);
  host.Stop();
}

// ServiceHost::Reload is what schedhostd runs on SIGHUP (systemctl reload): Admin.Reload's verdict.
TEST(ServiceHostReloadTest, AnswersLikeAdminReload) {
  TempDir dir;
  const std::filesystem::path socket = dir.path() / "s.sock";
  const std::filesystem::path file = dir.path() / "schedhost.toml";
  const std::string api = "[host]\nstate_dir = \"state\"\n[api]\nlisten = \"unix://" +
                          socket.string() + "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
  std::ofstream(file) << api;
  ServiceHost host(config::LoadConfigFile(file), framework::testing::PluginDir(), file);
  ReloadResult before_start = host.Reload();
  EXPECT_FALSE(before_start.ok);
  EXPECT_THAT(before_start.message, HasSubstr("not running"));
  host.Start();

  ReloadResult r = host.Reload();
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_THAT(r.message, HasSubstr(file.string() + ": generation 2 is live"));

  std::ofstream(file) << api << "[[profile]\n";
  r = host.Reload();
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr(file.string() + ":7:"));
  EXPECT_THAT(r.message, HasSubstr("reload refused; the running profiles are unchanged"));
  host.Stop();

  // A host started without a config file has nothing to re-read.
  TempDir other;
  config::HostConfig config =
      config::ParseConfig("[host]\nstate_dir = \"" + (other.path() / "state").string() +
                              "\"\n[api]\nlisten = \"unix://" + (other.path() / "s.sock").string() +
                              "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n",
                          "inline", {});
  ServiceHost no_file(std::move(config), framework::testing::PluginDir());
  no_file.Start();
  r = no_file.Reload();
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr("without a config file"));
  no_file.Stop();
}

}  // namespace
}  // namespace schedhost::api
