// Admin.Reload refusals end to end: a library built for another ABI major, a library that is
// not there, a plugin whose create fails, and a file with several errors each leave the running
// set serving (same generation, same profiles, pods still scheduled) and report the reasons
// (all of them), which Stats shows as the last reload's result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/framework/testing/fake_plugin.h"
#include "host/loader/loader.h"
#include "tests/integration/api_fixture.h"
#include "tests/integration/binding_counter.h"

namespace schedhost::api {
namespace {

using ::testing::HasSubstr;

class ReloadApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_.path() / "s.sock";
    file_ = dir_.path() / "schedhost.toml";
    api_ = "[api]\nlisten = \"unix://" + socket_.string() +
           "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
    failing_.name = "QuotaCheck";
    failing_.create = [](framework::testing::Reasons& r) {
      r.emplace_back("quota server unreachable");
      return SCHEDHOST_ERROR;
    };
    failing_.filter = [](const schedhost_cycle_state*, const schedhost_pod_view*,
                         const schedhost_node_info_view*,
                         framework::testing::Reasons&) { return SCHEDHOST_SUCCESS; };
    Write("");
    host_ = std::make_unique<ServiceHost>(config::LoadConfigFile(file_),
                                          framework::testing::PluginDir(), file_);
    host_->RegisterInProcess(failing_.descriptor());
    host_->Start();
    admin_ = v1::Admin::NewStub(
        grpc::CreateChannel("unix://" + socket_.string(), grpc::InsecureChannelCredentials()));
    cluster_ = v1::Cluster::NewStub(
        grpc::CreateChannel("unix://" + socket_.string(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { host_->Stop(); }

  // Write replaces the config file: the API settings, a state_dir in the test's directory (a
  // `[host]` table in `rest` joins it), then `rest`.
  void Write(const std::string& rest) {
    const std::string host = "[host]\nstate_dir = \"" + (dir_.path() / "state").string() + "\"\n";
    const bool has_host = rest.rfind("[host]\n", 0) == 0;
    std::ofstream(file_) << api_ << host << (has_host ? rest.substr(7) : rest);
  }

  v1::ReloadResponse Reload() {
    grpc::ClientContext context;
    v1::ReloadResponse r;
    EXPECT_TRUE(admin_->Reload(&context, v1::ReloadRequest(), &r).ok());
    return r;
  }
  v1::StatsResponse Stats() {
    grpc::ClientContext context;
    v1::StatsResponse r;
    EXPECT_TRUE(admin_->Stats(&context, v1::StatsRequest(), &r).ok());
    return r;
  }
  uint64_t Generation() {
    grpc::ClientContext context;
    v1::ListProfilesResponse r;
    EXPECT_TRUE(admin_->ListProfiles(&context, v1::ListProfilesRequest(), &r).ok());
    return r.generation();
  }
  // ApplyNode creates a node with the given capacity through the API.
  bool ApplyNode(const std::string& name, const std::string& cpu, const std::string& memory,
                 const std::string& pods) {
    grpc::ClientContext context;
    v1::ApplyRequest node;
    node.set_manifest("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" + name +
                      "\"},\"status\":{\"capacity\":{\"cpu\":\"" + cpu + "\",\"memory\":\"" +
                      memory + "\",\"pods\":\"" + pods + "\"}}}");
    v1::ApplyResponse applied;
    return cluster_->Apply(&context, node, &applied).ok();
  }
  // Schedules pod `name` through the API and waits for its binding.
  std::string ScheduleOne(const std::string& name) {
    grpc::ClientContext context;
    v1::ApplyRequest request;
    request.set_manifest("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" +
                         name +
                         "\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
    v1::ApplyResponse response;
    EXPECT_TRUE(cluster_->Apply(&context, request, &response).ok());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      auto pod = host_->store().Get<model::Pod>("default", name);
      if (pod && !pod->node_name().empty()) return std::string(pod->node_name());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
  }
  // ExpectRefused reloads and checks the refusal names `reason` and changed nothing.
  void ExpectRefused(const std::string& reason) {
    const uint64_t before = Generation();
    v1::ReloadResponse r = Reload();
    EXPECT_FALSE(r.ok());
    EXPECT_THAT(r.message(), HasSubstr(reason));
    EXPECT_THAT(r.message(), HasSubstr("reload refused; the running profiles are unchanged"));
    EXPECT_EQ(r.generation(), before);
    EXPECT_EQ(Generation(), before);
    v1::StatsResponse s = Stats();
    EXPECT_EQ(s.last_reload_result(), "failure");
    EXPECT_EQ(s.last_reload_message(), r.message());
    EXPECT_GT(s.last_reload_unix_seconds(), 0);
    EXPECT_EQ(s.config_generation(), before);
  }

  TempDir dir_;
  std::filesystem::path socket_;
  std::filesystem::path file_;
  std::string api_;
  framework::testing::FakePlugin failing_;
  std::unique_ptr<ServiceHost> host_;
  std::unique_ptr<v1::Admin::Stub> admin_;
  std::unique_ptr<v1::Cluster::Stub> cluster_;
};

TEST_F(ReloadApiTest, RefusedLibrariesAndPluginsLeaveTheRunningSetServing) {
  grpc::ClientContext context;
  v1::ApplyRequest node;
  node.set_manifest(
      "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":"
      "{\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"20\"}}}");
  v1::ApplyResponse applied;
  ASSERT_TRUE(cluster_->Apply(&context, node, &applied).ok());
  EXPECT_EQ(Stats().last_reload_result(), "") << "no reload yet";
  EXPECT_EQ(Generation(), 1u);

  // A library built for plugin ABI 2: the loader's reason.
  const std::string abi2 = std::string(SCHEDHOST_ABI_PLUGIN_DIR) + "/bad_abi2.so";
  Write("[host]\nlibraries = [{ path = \"" + abi2 + "\" }]\n");
  ExpectRefused("bad_abi2.so");
  EXPECT_THAT(Stats().last_reload_message(), HasSubstr("ABI 2"));
  EXPECT_EQ(ScheduleOne("after-abi"), "n1");

  // A library that is not there.
  Write("[host]\nlibraries = [{ path = \"" + (dir_.path() / "gone.so").string() + "\" }]\n");
  ExpectRefused((dir_.path() / "gone.so").string());
  EXPECT_EQ(ScheduleOne("after-missing"), "n1");

  // A plugin whose create fails: its message.
  Write(
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\n"
      "enabled = [{ name = \"QuotaCheck\" }]\n");
  ExpectRefused("quota server unreachable");
  EXPECT_EQ(ScheduleOne("after-create"), "n1");

  // Several errors in several profiles, one in the arguments of a plugin no profile enables:
  // the refusal names each of them.
  Write(
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\n"
      "enabled = [{ name = \"QuotaCheck\" }]\n"
      "[[profile]]\nname = \"batch\"\n[profile.plugins.multi_point]\n"
      "disabled = [{ name = \"ImageLocality\" }]\n"
      "[profile.plugin_config.ImageLocality]\nbogus = 1\n");
  ExpectRefused("quota server unreachable");
  EXPECT_THAT(Stats().last_reload_message(),
              HasSubstr("profile \"batch\": plugin \"ImageLocality\" (configured in "
                        "plugin_config, not enabled) could not be created"));
  EXPECT_THAT(Stats().last_reload_message(), HasSubstr("plugin_config.ImageLocality.bogus"));
  EXPECT_EQ(ScheduleOne("after-several"), "n1");

  // A good file again: swapped in, and Stats says so.
  Write("");
  v1::ReloadResponse r = Reload();
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.generation(), 2u);
  EXPECT_EQ(Stats().last_reload_result(), "success");
  EXPECT_EQ(ScheduleOne("after-good"), "n1");
}

TEST_F(ReloadApiTest, PodWithoutAProfileWaitsForTheReloadThatAddsIt) {
  for (const std::string manifest :
       {"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":"
        "{\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"20\"}}}",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"},\"spec\":"
        "{\"schedulerName\":\"batch\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}"}) {
    grpc::ClientContext context;
    v1::ApplyRequest request;
    request.set_manifest(manifest);
    v1::ApplyResponse applied;
    ASSERT_TRUE(cluster_->Apply(&context, request, &applied).ok()) << manifest;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // What `schedctl describe pod b` shows as its last failure.
  grpc::ClientContext explain_context;
  v1::ExplainRequest explain;
  explain.set_name("b");
  v1::ExplainResponse explained;
  ASSERT_TRUE(admin_->Explain(&explain_context, explain, &explained).ok());
  EXPECT_EQ(explained.message(),
            "no profile named \"batch\"; the pod stays pending until a reload adds one");
  EXPECT_EQ(host_->store().Get<model::Pod>("default", "b")->node_name(), "");

  Write("[[profile]]\nname = \"default-scheduler\"\n[[profile]]\nname = \"batch\"\n");
  ASSERT_TRUE(Reload().ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (host_->store().Get<model::Pod>("default", "b")->node_name().empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(host_->store().Get<model::Pod>("default", "b")->node_name(), "n1");
}

// Publish puts build `variant` of the swap probe at `path`: a new file renamed over the old.
void Publish(int variant, const std::filesystem::path& path) {
  const std::filesystem::path built = std::filesystem::path(SCHEDHOST_SWAP_PLUGIN_DIR) /
                                      ("swap_probe_v" + std::to_string(variant) + ".so");
  std::filesystem::copy_file(built, path.string() + ".new",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(path.string() + ".new", path);
}

TEST_F(ReloadApiTest, ANewBuildRenamedOverTheLibraryIsLoadedAndTheOldOneUnloaded) {
  for (const char* name : {"n1", "n2"}) ASSERT_TRUE(ApplyNode(name, "4", "8Gi", "20"));
  const std::filesystem::path lib = dir_.path() / "swap_probe.so";
  Publish(1, lib);
  Write("[host]\nlibraries = [{ path = \"" + lib.string() +
        "\" }]\n[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.filter]\n"
        "enabled = [{ name = \"SwapProbe\" }]\n");
  ASSERT_TRUE(Reload().ok());
  EXPECT_EQ(ScheduleOne("on-build-1"), "n1");
  auto list = [&] {
    grpc::ClientContext context;
    v1::ListPluginsResponse r;
    EXPECT_TRUE(admin_->ListPlugins(&context, v1::ListPluginsRequest(), &r).ok());
    return r;
  };
  auto versions_of = [&](const v1::ListPluginsResponse& r) {
    std::vector<const v1::LibraryVersion*> out;
    for (const auto& v : r.library_versions()) {
      if (v.path() == lib.string()) out.push_back(&v);
    }
    return out;
  };
  v1::ListPluginsResponse before = list();
  ASSERT_EQ(versions_of(before).size(), 1u);
  const v1::LibraryVersion old_version = *versions_of(before)[0];
  EXPECT_EQ(old_version.state(), "live");
  EXPECT_EQ(old_version.generation(), 2u);
  EXPECT_THAT(old_version.loaded_path(), HasSubstr((dir_.path() / "state" / "plugins").string()));

  // The operator publishes build 2 at the same path and reloads.
  Publish(2, lib);
  v1::ReloadResponse r = Reload();
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(ScheduleOne("on-build-2"), "n2") << "the new build's Filter runs";
  v1::ListPluginsResponse after = list();
  for (const auto& p : after.plugins()) {
    if (p.name() == "SwapProbe") {
      EXPECT_EQ(p.version(), "2.0.0");
      EXPECT_EQ(p.library_path(), lib.string());
    }
  }
  // The old version drains (the Explain record lets go of its set once a pod is scheduled on
  // the new one, as above) and is unloaded.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (versions_of(list()).size() != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  after = list();
  ASSERT_EQ(versions_of(after).size(), 1u);
  EXPECT_NE(versions_of(after)[0]->sha256(), old_version.sha256());
  EXPECT_EQ(versions_of(after)[0]->state(), "live");
  EXPECT_EQ(versions_of(after)[0]->generation(), 3u);
  EXPECT_FALSE(loader::PluginRegistry::IsLoaded(old_version.loaded_path()));
  EXPECT_FALSE(std::filesystem::exists(old_version.loaded_path()));
}

// The whole hot-swap promise under load, through the API: a client creates pods at a steady
// rate for over 20 s while 50 reloads alternate two configs (different enabled plugins, weights
// and args), every fifth publishing the other build of a library whose Filter sends pods to a
// different node. Every pod is bound exactly once (counted from the store's own watch), a pod
// created after each library swap is placed by the new build, and every replaced build ends up
// unloaded with its shadow copy deleted.
TEST_F(ReloadApiTest, FiftyReloadsAndTenLibrarySwapsUnderContinuousLoad) {
  using std::chrono::milliseconds;
  for (const char* name : {"n1", "n2"}) ASSERT_TRUE(ApplyNode(name, "64", "256Gi", "2000"));
  integration::BindingCounter bindings(host_->store());

  const std::filesystem::path lib = dir_.path() / "swap_probe.so";
  const std::string libraries = "[host]\nlibraries = [{ path = \"" + lib.string() + "\" }]\n";
  const std::string profile =
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.filter]\n"
      "enabled = [{ name = \"SwapProbe\" }]\n[profile.plugins.score]\n";
  const std::string config_a = libraries + profile +
                               "enabled = [{ name = \"NodeResourcesBalancedAllocation\", "
                               "weight = 5 }]\ndisabled = [{ name = \"ImageLocality\" }]\n";
  const std::string config_b = libraries + profile +
                               "disabled = [{ name = \"NodeResourcesBalancedAllocation\" }]\n"
                               "[profile.plugin_config.NodeResourcesFit.scoring_strategy]\n"
                               "type = \"MostAllocated\"\n";
  int variant = 1;
  Publish(variant, lib);
  Write(config_a);
  ASSERT_TRUE(Reload().ok());

  auto loaded_copies = [&] {
    grpc::ClientContext context;
    v1::ListPluginsResponse r;
    EXPECT_TRUE(admin_->ListPlugins(&context, v1::ListPluginsRequest(), &r).ok());
    std::vector<std::string> out;
    for (const auto& v : r.library_versions()) {
      if (v.path() == lib.string()) out.push_back(v.loaded_path());
    }
    return out;
  };
  std::set<std::string> copies;  // every version of the library the host loaded
  for (const std::string& c : loaded_copies()) copies.insert(c);

  // The client: one pod every 40 ms until the reloads are over.
  std::atomic<bool> done{false};
  std::atomic<int> created{0};
  const auto start = std::chrono::steady_clock::now();
  std::thread client([&] {
    auto next = std::chrono::steady_clock::now();
    for (int i = 0; !done.load(); ++i) {
      grpc::ClientContext context;
      v1::ApplyRequest request;
      request.set_manifest(
          "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"load-" +
          std::to_string(i) + "\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
      v1::ApplyResponse response;
      if (cluster_->Apply(&context, request, &response).ok()) {
        created.fetch_add(1);
      } else {
        ADD_FAILURE() << "creating load-" << i << " failed";
      }
      next += milliseconds(40);
      std::this_thread::sleep_until(next);
    }
  });

  int swaps = 0;
  for (int reload = 1; reload <= 50; ++reload) {
    std::this_thread::sleep_until(start + milliseconds(420) * reload);  // 50 reloads in 21 s
    const bool swap = reload % 5 == 0;
    if (swap) {
      variant = 3 - variant;
      Publish(variant, lib);
    }
    Write(reload % 2 == 0 ? config_a : config_b);
    v1::ReloadResponse r = Reload();
    ASSERT_TRUE(r.ok()) << "reload " << reload << ": " << r.message();
    if (!swap) continue;
    ++swaps;
    EXPECT_EQ(ScheduleOne("after-swap-" + std::to_string(swaps)), "n" + std::to_string(variant))
        << "a pod created after swap " << swaps << " runs the new build's Filter";
    for (const std::string& c : loaded_copies()) copies.insert(c);
  }
  done.store(true);
  client.join();
  const auto loaded_for = std::chrono::steady_clock::now() - start;
  EXPECT_GE(loaded_for, std::chrono::seconds(20));
  EXPECT_EQ(swaps, 10);
  EXPECT_EQ(Generation(), 52u);  // the start, the first reload, then 50
  EXPECT_EQ(copies.size(), 2u) << "two builds alternating: two content-addressed copies";

  // Every pod, the client's and the probes, bound exactly once.
  const size_t total = static_cast<size_t>(created.load()) + static_cast<size_t>(swaps);
  auto all_bound = [&] {
    for (const auto& p : host_->store().List<model::Pod>()) {
      if (p->node_name().empty()) return false;
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!all_bound() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(all_bound()) << "a pod was lost";
  EXPECT_EQ(host_->store().List<model::Pod>().size(), total);
  bindings.Stop();
  bindings.ExpectEachBoundOnce(total);

  // Only the live build is still loaded: every replaced one drained and was unloaded.
  std::vector<std::string> live = loaded_copies();
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (live.size() != 1 && std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    live = loaded_copies();
  }
  ASSERT_EQ(live.size(), 1u);
  for (const std::string& c : copies) {
    if (c == live[0]) continue;
    EXPECT_FALSE(loader::PluginRegistry::IsLoaded(c)) << c << " was not unloaded";
    EXPECT_FALSE(std::filesystem::exists(c)) << c;
  }
}

TEST_F(ReloadApiTest, RestartOnlySettingsAreNamedNotApplied) {
  std::ofstream(file_) << "[api]\nlisten = \"unix://" << (dir_.path() / "other.sock").string()
                       << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n[host]\npod_max_backoff = "
                          "\"20s\"\n";
  v1::ReloadResponse r = Reload();
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("only a restart applies: api.listen, "
                                     "host.pod_max_backoff"));
  EXPECT_EQ(Generation(), 2u);
}

// [host] watch_config: saving the file is the reload. A good file goes live, a bad one is
// refused and recorded like any refused reload, and the watch goes on after a refusal.
TEST_F(ReloadApiTest, WatchConfigReloadsWhenTheFileChanges) {
  host_->Stop();
  const std::string watch = "[host]\nwatch_config = true\n";
  Write(watch);
  host_ = std::make_unique<ServiceHost>(config::LoadConfigFile(file_),
                                        framework::testing::PluginDir(), file_);
  host_->Start();
  ASSERT_EQ(Generation(), 1u);
  auto wait_for = [&](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  };

  Write(watch + "[[profile]]\nname = \"default-scheduler\"\n[[profile]]\nname = \"batch\"\n");
  // The profile set goes live before the reload records its result: wait for both.
  ASSERT_TRUE(wait_for([&] { return Generation() == 2u; }));
  ASSERT_TRUE(wait_for([&] { return Stats().last_reload_result() == "success"; }))
      << Stats().last_reload_result();

  Write(watch + "[[profile]\n");  // not TOML
  ASSERT_TRUE(wait_for([&] { return Stats().last_reload_result() == "failure"; }));
  EXPECT_THAT(Stats().last_reload_message(), HasSubstr(file_.string() + ":"));
  EXPECT_THAT(Stats().last_reload_message(), HasSubstr("invalid TOML"));
  EXPECT_EQ(Generation(), 2u);

  Write(watch);  // fixed: back to the default profile only
  ASSERT_TRUE(wait_for([&] { return Generation() == 3u; }));
  grpc::ClientContext context;
  v1::ListProfilesResponse profiles;
  ASSERT_TRUE(admin_->ListProfiles(&context, v1::ListProfilesRequest(), &profiles).ok());
  ASSERT_EQ(profiles.profiles_size(), 1);
}

}  // namespace
}  // namespace schedhost::api
