// Plugin library versions (docs/abi.md rules 11 and 12): a library whose file is replaced at the same
// path is loaded again from a content-addressed shadow copy beside the old version, the old one
// drains and is unloaded (RTLD_NOLOAD says it is gone), `pin` never unloads, a failed load
// changes nothing, and 1,000 load/unload cycles leave nothing mapped. The two builds of
// swap_probe/swap_probe.cc tell the versions apart: build N admits pods to node "nN" only.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "host/config/host_config.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/status.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "host/framework/waiting_pods.h"
#include "host/loader/library_store.h"
#include "host/loader/loader.h"
#include "host/model/decode.h"
#include "host/scheduler/scheduler.h"
#include "tests/integration/binding_counter.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

namespace fs = std::filesystem;
using framework::testing::TempDir;
using loader::LibraryStore;
using loader::LibraryVersion;
using loader::PluginRegistry;
using std::chrono::milliseconds;

fs::path Build(int variant) {
  return fs::path(SCHEDHOST_SWAP_PLUGIN_DIR) / ("swap_probe_v" + std::to_string(variant) + ".so");
}

// Publish puts build `variant` at `path` the way operators are told to: write a new file beside
// it, then rename it over the old one (never copy over a file that may be mapped).
void Publish(int variant, const fs::path& path) {
  const fs::path temp = path.string() + ".new";
  fs::copy_file(Build(variant), temp, fs::copy_options::overwrite_existing);
  fs::rename(temp, path);
}

std::string VersionOf(const loader::Library& lib) {
  const auto& d = *lib.descriptors().front();
  return {d.version.data, d.version.len};
}

size_t CountSo(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".so" ? 1 : 0;
  return n;
}

TEST(LibraryStoreTest, LoadsAShadowCopyAndReportsTheOperatorsPath) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  Publish(1, lib_path);
  auto store = std::make_shared<LibraryStore>(dir.path() / "state" / "plugins", false);
  PluginRegistry registry(store);
  auto lib = registry.LoadLibrary(lib_path, framework::HostApi());
  EXPECT_EQ(lib->path(), lib_path);
  EXPECT_EQ(lib->loaded_path().parent_path(), store->shadow_dir());
  EXPECT_EQ(lib->loaded_path().filename(), "swap_probe-" + lib->sha256() + ".so");
  EXPECT_TRUE(fs::exists(lib->loaded_path()));
  EXPECT_TRUE(PluginRegistry::IsLoaded(lib->loaded_path()));
  EXPECT_FALSE(PluginRegistry::IsLoaded(lib_path)) << "the operator's file itself is not mapped";
  EXPECT_EQ(VersionOf(*lib), "1.0.0");
  ASSERT_EQ(store->Versions().size(), 1u);
  EXPECT_EQ(store->Versions()[0].source_path, lib_path);
}

TEST(LibraryStoreTest, ReusesAnUnchangedVersionAndLoadsAChangedOneBeside) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  Publish(1, lib_path);
  auto store = std::make_shared<LibraryStore>(dir.path() / "plugins", false);
  auto old_registry = std::make_unique<PluginRegistry>(store);
  auto v1 = old_registry->LoadLibrary(lib_path, framework::HostApi());
  {
    PluginRegistry same(store);
    EXPECT_EQ(same.LoadLibrary(lib_path, framework::HostApi()), v1) << "same content, same Library";
  }
  EXPECT_EQ(CountSo(store->shadow_dir()), 1u);

  Publish(2, lib_path);
  PluginRegistry next(store);
  auto v2 = next.LoadLibrary(lib_path, framework::HostApi());
  EXPECT_NE(v2->sha256(), v1->sha256());
  EXPECT_EQ(VersionOf(*v2), "2.0.0");
  EXPECT_EQ(VersionOf(*v1), "1.0.0") << "the old version keeps running beside the new one";
  EXPECT_EQ(store->Versions().size(), 2u);

  // The old version drains: once its last holder lets go it is unmapped and its copy deleted.
  const fs::path old_copy = v1->loaded_path();
  old_registry.reset();
  EXPECT_TRUE(PluginRegistry::IsLoaded(old_copy)) << "still held by `v1`";
  v1.reset();
  EXPECT_FALSE(PluginRegistry::IsLoaded(old_copy));
  EXPECT_FALSE(fs::exists(old_copy));
  ASSERT_EQ(store->Versions().size(), 1u);
  EXPECT_EQ(store->Versions()[0].sha256, v2->sha256());
  EXPECT_EQ(store->Versions()[0].state, LibraryVersion::State::kInUse);
}

TEST(LibraryStoreTest, AVersionThatStaysMappedIsReportedNotUnloadable) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "stuck.so";
  fs::copy_file(fs::path(SCHEDHOST_SWAP_PLUGIN_DIR) / "swap_probe_nodelete.so", lib_path);
  auto store = std::make_shared<LibraryStore>(dir.path() / "plugins", false);
  fs::path copy;
  {
    PluginRegistry registry(store);
    copy = registry.LoadLibrary(lib_path, framework::HostApi())->loaded_path();
  }
  EXPECT_TRUE(PluginRegistry::IsLoaded(copy)) << "linked -z nodelete";
  ASSERT_EQ(store->Versions().size(), 1u);
  EXPECT_EQ(store->Versions()[0].state, LibraryVersion::State::kNotUnloadable);
  EXPECT_EQ(store->Versions()[0].library, nullptr);
  EXPECT_TRUE(fs::exists(copy)) << "a mapped copy is not deleted";
}

TEST(LibraryStoreTest, PinNeverUnloads) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  auto store = std::make_shared<LibraryStore>(dir.path() / "plugins", /*pin=*/true);
  std::vector<fs::path> copies;
  for (int variant : {1, 2, 1}) {
    Publish(variant, lib_path);
    PluginRegistry registry(store);
    copies.push_back(registry.LoadLibrary(lib_path, framework::HostApi())->loaded_path());
  }
  EXPECT_EQ(copies[0], copies[2]) << "variant 1 again: the pinned version is reused";
  for (const fs::path& copy : copies) {
    EXPECT_TRUE(PluginRegistry::IsLoaded(copy)) << copy;
    EXPECT_TRUE(fs::exists(copy)) << copy;
  }
  EXPECT_EQ(store->Versions().size(), 2u);
}

TEST(LibraryStoreTest, AFailedLoadLeavesTheOldVersionServingAndNoCopyBehind) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  Publish(1, lib_path);
  auto store = std::make_shared<LibraryStore>(dir.path() / "plugins", false);
  PluginRegistry live(store);
  auto v1 = live.LoadLibrary(lib_path, framework::HostApi());
  // A truncated build renamed into place.
  std::ofstream(lib_path.string() + ".new") << "\x7f"
                                               "ELF not really";
  fs::rename(lib_path.string() + ".new", lib_path);
  PluginRegistry next(store);
  try {
    next.LoadLibrary(lib_path, framework::HostApi());
    FAIL() << "a broken library loaded";
  } catch (const loader::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find(lib_path.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(next.Libraries().empty());
  EXPECT_EQ(CountSo(store->shadow_dir()), 1u) << "the refused file's copy is removed";
  EXPECT_EQ(store->Versions().size(), 1u);
  EXPECT_TRUE(PluginRegistry::IsLoaded(v1->loaded_path()));
  EXPECT_EQ(VersionOf(*v1), "1.0.0");
}

TEST(LibraryStoreTest, AnUnwritableStateDirIsRefusedByName) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  TempDir dir;
  const fs::path locked = dir.path() / "locked";
  fs::create_directory(locked);
  ::chmod(locked.c_str(), 0500);
  try {
    LibraryStore store(locked / "plugins", false);
    FAIL() << "an unwritable directory was accepted";
  } catch (const loader::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find((locked / "plugins").string()), std::string::npos)
        << e.what();
  }
  ::chmod(locked.c_str(), 0700);
}

TEST(LibraryStoreTest, OneStorePerDirectory) {
  TempDir dir;
  auto first = std::make_unique<LibraryStore>(dir.path() / "plugins", false);
  try {
    LibraryStore second(dir.path() / "plugins", false);
    FAIL() << "two stores shared one directory";
  } catch (const loader::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("own [host] state_dir"), std::string::npos) << e.what();
  }
  first.reset();
  LibraryStore third(dir.path() / "plugins", false);  // free again
}

TEST(LibraryStoreTest, RemovesCopiesAnEarlierProcessLeft) {
  TempDir dir;
  fs::create_directories(dir.path() / "plugins");
  std::ofstream(dir.path() / "plugins" / "old-0000.so") << "stale";
  std::ofstream(dir.path() / "plugins" / "README") << "not ours";
  LibraryStore store(dir.path() / "plugins", false);
  EXPECT_FALSE(fs::exists(dir.path() / "plugins" / "old-0000.so"));
  EXPECT_TRUE(fs::exists(dir.path() / "plugins" / "README"));
}

// 1,000 cycles of: load from a fresh shadow copy, create and destroy an instance, unload. Under
// the asan preset this finds leaks and use-after-unload; everywhere it checks the unload.
TEST(LibraryStoreTest, ThousandLoadUnloadCycles) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  auto store = std::make_shared<LibraryStore>(dir.path() / "plugins", false);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    if (i % 100 == 0) Publish(1 + (i / 100) % 2, lib_path);
    fs::path copy;
    {
      PluginRegistry registry(store);
      auto lib = registry.LoadLibrary(lib_path, framework::HostApi());
      copy = lib->loaded_path();
      const schedhost_plugin_descriptor* d = lib->descriptors().front();
      schedhost_host handle;
      framework::StatusSink sink;
      void* instance = nullptr;
      ASSERT_EQ(d->create(framework::HostApi(), &handle, nullptr, &instance, sink.abi()),
                SCHEDHOST_SUCCESS);
      ASSERT_NE(instance, nullptr);
      d->destroy(instance);
    }
    ASSERT_FALSE(PluginRegistry::IsLoaded(copy)) << "cycle " << i;
    ASSERT_FALSE(fs::exists(copy)) << "cycle " << i;
  }
  EXPECT_TRUE(store->Versions().empty());
  std::cout
      << "1000 load/create/destroy/unload cycles took "
      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count()
      << " ms\n";
}

// VersionsOf lists the store's versions of the library at `path` (the builtin plugins load
// through the same store).
std::vector<LibraryVersion> VersionsOf(const LibraryStore& store, const fs::path& path) {
  std::vector<LibraryVersion> out;
  for (LibraryVersion& v : store.Versions()) {
    if (v.source_path == path) out.push_back(std::move(v));
  }
  return out;
}

// --- the scheduler: 50 reloads, 10 of them with a new build of the library -----------------

std::string SwapConfig(const fs::path& lib_path, const fs::path& state_dir, bool pin) {
  return "[host]\nparallelism = 4\nstate_dir = \"" + state_dir.string() + "\"\nunload = \"" +
         (pin ? "pin" : "unload") + "\"\nlibraries = [{ path = \"" + lib_path.string() +
         "\" }]\n[[profile]]\nname = \"default-scheduler\"\n"
         "[profile.plugins.filter]\nenabled = [{ name = \"SwapProbe\" }]\n";
}

void ReloadsWithLibrarySwaps(bool pin) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  Publish(1, lib_path);
  const config::HostConfig cfg =
      config::ParseConfig(SwapConfig(lib_path, dir.path() / "state", pin), "swap.toml", {});
  auto store = scheduler::OpenLibraryStore(cfg);
  ASSERT_NE(store, nullptr);
  auto build = [&] {
    return scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir(), {}, store);
  };

  store::Store cluster;
  BindingCounter bindings(cluster);
  scheduler::SchedulerOptions options;
  options.binding_threads = 3;
  options.pod_initial_backoff = milliseconds(20);
  options.pod_max_backoff = milliseconds(100);
  options.backoff_flush_interval = milliseconds(10);
  auto sched = std::make_unique<scheduler::Scheduler>(cluster, build(), options);
  sched->Start();
  auto apply = [&](const std::string& yaml) {
    for (const auto& obj : model::DecodeManifests(yaml, "test.yaml")) cluster.CreateObject(obj);
  };
  apply(NodeYaml("n1", "64") + NodeYaml("n2", "64"));

  // Two pods per reload, created while the reloads run (each node takes 110 pods, and all of a
  // variant's pods go to one node).
  std::atomic<bool> done{false};
  std::atomic<int> created{0};
  std::atomic<int> reloads{0};
  std::thread writer([&] {
    for (int i = 0; i < 100 && !done.load(); ++i) {
      while (reloads.load() < i / 2 && !done.load()) std::this_thread::sleep_for(milliseconds(2));
      apply(PodYaml("p" + std::to_string(i), "100m"));
      created.fetch_add(1);
    }
  });
  std::set<fs::path> copies;  // every shadow copy a set was built from
  int variant = 1;
  for (int reload = 1; reload <= 50; ++reload) {
    if (reload % 5 == 0) {  // 10 library swaps, alternating the two builds
      variant = 3 - variant;
      Publish(variant, lib_path);
    }
    auto set = build();
    for (const auto& lib : set->registry().Libraries()) {
      if (lib->path() == lib_path) copies.insert(lib->loaded_path());
    }
    sched->ReplaceProfiles(std::move(set));
    reloads.store(reload);
    std::this_thread::sleep_for(milliseconds(5));
  }
  done.store(true);
  writer.join();
  EXPECT_EQ(sched->generation(), 51u);
  EXPECT_EQ(copies.size(), 2u) << "two builds, two shadow copies";

  // Pods created now run on the last build (variant 1 after ten swaps).
  apply(PodYaml("after-swaps", "100m"));
  const int total = created.load() + 1;
  auto all_bound = [&] {
    for (const auto& p : cluster.List<model::Pod>()) {
      if (p->node_name().empty()) return false;
    }
    const auto c = sched->queue().Counts();
    return c.active == 0 && c.backoff == 0 && c.in_flight == 0;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!all_bound() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(all_bound()) << "some pod was lost or never bound";
  EXPECT_EQ(cluster.Get<model::Pod>("default", "after-swaps")->node_name(),
            "n" + std::to_string(variant));

  // Every replaced set has drained once its last cycle ended: only the live version is still
  // loaded, unless pinned.
  std::shared_ptr<const loader::Library> live;
  for (const auto& lib : sched->profiles()->set().registry().Libraries()) {
    if (lib->path() == lib_path) live = lib;
  }
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(VersionOf(*live), std::to_string(variant) + ".0.0");
  auto drained = [&] {
    return sched->DrainingSets() == 0 && (pin || VersionsOf(*store, lib_path).size() == 1);
  };
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!drained() && std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  sched->Stop();
  for (const fs::path& copy : copies) {
    if (pin || copy == live->loaded_path()) {
      EXPECT_TRUE(PluginRegistry::IsLoaded(copy)) << copy;
    } else {
      EXPECT_FALSE(PluginRegistry::IsLoaded(copy)) << copy << " was not unloaded";
      EXPECT_FALSE(fs::exists(copy)) << copy;
    }
  }
  EXPECT_EQ(VersionsOf(*store, lib_path).size(), pin ? 2u : 1u);
  for (const LibraryVersion& v : store->Versions()) {
    EXPECT_EQ(v.state, LibraryVersion::State::kInUse) << v.loaded_path;
  }
  EXPECT_EQ(sched->CheckInvariants(), "");
  bindings.Stop();
  bindings.ExpectEachBoundOnce(static_cast<size_t>(total));
}

// ABI rule 11 with a pod in the middle: a pod waiting at the old build's Permit across the swap
// keeps that build loaded (draining) while new pods already run the new build; once the pod is
// allowed it binds where the old build put it, and only then is the old build unloaded.
TEST(LibrarySwapTest, APodWaitingAtPermitKeepsTheOldBuildLoadedUntilItBinds) {
  TempDir dir;
  const fs::path lib_path = dir.path() / "swap_probe.so";
  Publish(1, lib_path);
  const std::string toml = SwapConfig(lib_path, dir.path() / "state", /*pin=*/false) +
                           "[profile.plugins.permit]\nenabled = [{ name = \"SwapProbe\" }]\n";
  const config::HostConfig cfg = config::ParseConfig(toml, "swap.toml", {});
  auto store = scheduler::OpenLibraryStore(cfg);
  ASSERT_NE(store, nullptr);
  auto build = [&] {
    return scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir(), {}, store);
  };
  store::Store cluster;
  auto sched = std::make_unique<scheduler::Scheduler>(cluster, build());
  sched->Start();
  auto apply = [&](const std::string& yaml) {
    for (const auto& obj : model::DecodeManifests(yaml, "test.yaml")) cluster.CreateObject(obj);
  };
  // A copy: the view node_name() returns dies with the pod.
  auto node_of = [&](const std::string& name) -> std::string {
    auto pod = cluster.Get<model::Pod>("default", name);
    return pod ? std::string(pod->node_name()) : std::string("?");
  };
  auto eventually = [](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    return done();
  };
  apply(NodeYaml("n1") + NodeYaml("n2"));

  std::shared_ptr<const scheduler::ProfileRuntime> old = sched->profiles();
  framework::WaitingPods& old_waiting = old->Find("default-scheduler")->waiting_pods();
  apply(PodYaml("wait-1", "100m"));
  ASSERT_TRUE(eventually([&] { return old_waiting.size() == 1; }));
  const fs::path old_copy = VersionsOf(*store, lib_path).at(0).loaded_path;

  Publish(2, lib_path);
  sched->ReplaceProfiles(build());
  apply(PodYaml("fresh", "100m"));
  ASSERT_TRUE(eventually([&] { return node_of("fresh") == "n2"; })) << "the new build runs";
  EXPECT_EQ(node_of("wait-1"), "");
  EXPECT_EQ(sched->DrainingSets(), 1u);
  ASSERT_EQ(VersionsOf(*store, lib_path).size(), 2u);
  EXPECT_TRUE(PluginRegistry::IsLoaded(old_copy)) << "the old build stays while its pod waits";

  auto waiting = old_waiting.Get(cluster.Get<model::Pod>("default", "wait-1")->uid());
  ASSERT_NE(waiting, nullptr);
  ASSERT_TRUE(waiting->Allow("SwapProbe"));
  waiting.reset();
  old.reset();
  EXPECT_TRUE(eventually([&] { return node_of("wait-1") == "n1"; }))
      << "the pod finished on the old build's placement";
  apply(PodYaml("after", "100m"));  // lets the Explain record go of the old set
  ASSERT_TRUE(eventually([&] { return node_of("after") == "n2"; }));
  EXPECT_TRUE(eventually(
      [&] { return sched->DrainingSets() == 0 && VersionsOf(*store, lib_path).size() == 1; }));
  sched->Stop();
  EXPECT_FALSE(PluginRegistry::IsLoaded(old_copy)) << "the old build was not unloaded";
  EXPECT_FALSE(fs::exists(old_copy));
}

TEST(ConcurrentLibrarySwapTest, FiftyReloadsTenLibrarySwapsBetweenTwoBuilds) {
  ReloadsWithLibrarySwaps(/*pin=*/false);
}

TEST(ConcurrentLibrarySwapTest, PinKeepsEveryVersionLoaded) {
  ReloadsWithLibrarySwaps(/*pin=*/true);
}

}  // namespace
}  // namespace schedhost::integration

namespace schedhost::integration {
namespace {

// --- a shadow profile trying a new build of a live plugin ----------------------------------

// The live profile runs build 1 of SwapProbe (pods to n1 only); its shadow names build 2 in its
// own libraries (pods to n2 only): every pod is a disagreement at Filter, named SwapProbe, and
// the live placements are build 1's. ListPlugins-style states: build 1 live, build 2 shadow.
TEST(ShadowLibraryTest, AShadowRunsItsOwnBuildOfALivePlugin) {
  TempDir dir;
  const fs::path live = dir.path() / "swap_probe.so";
  const fs::path next = dir.path() / "next" / "swap_probe.so";
  fs::create_directories(next.parent_path());
  Publish(1, live);
  Publish(2, next);
  const config::HostConfig cfg = config::ParseConfig(
      SwapConfig(live, dir.path() / "state", false) +
          "[[profile]]\nname = \"next\"\nshadow_of = \"default-scheduler\"\n"
          "libraries = [{ path = \"" + next.string() + "\" }]\n"
          "[profile.plugins.filter]\nenabled = [{ name = \"SwapProbe\" }]\n"
          "[shadow]\nevery_pod = true\n",
      "shadow.toml", {});
  auto store = scheduler::OpenLibraryStore(cfg);
  ASSERT_NE(store, nullptr);
  auto set = scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir(), {}, store);
  ASSERT_EQ(set->shadows().size(), 1u);
  ASSERT_NE(set->shadows()[0].registry, nullptr);
  EXPECT_EQ(VersionOf(*set->registry().Find("SwapProbe")->library), "1.0.0");
  EXPECT_EQ(VersionOf(*set->shadows()[0].registry->Find("SwapProbe")->library), "2.0.0");
  // The rest of the shadow's plugins are the set's own instances' libraries.
  EXPECT_EQ(set->shadows()[0].registry->Find("NodeResourcesFit")->library,
            set->registry().Find("NodeResourcesFit")->library);

  store::Store cluster;
  auto clock = std::make_shared<scheduler::VirtualClock>();
  scheduler::Scheduler sched(cluster, std::move(set), {.clock = clock, .seed = 1});
  for (const auto& obj : model::DecodeManifests(
           NodeYaml("n1") + NodeYaml("n2") + PodYaml("a") + PodYaml("b"), "test.yaml")) {
    cluster.CreateObject(obj);
  }
  sched.RunUntilIdle();
  sched.shadows().WaitIdle();
  for (const auto& p : cluster.List<model::Pod>()) EXPECT_EQ(p->node_name(), "n1") << p->name();
  const std::vector<scheduler::ShadowStatus> status = sched.shadows().Status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].compared, 2u);
  EXPECT_EQ(status[0].disagreements, 2u);
  for (const scheduler::ShadowDisagreement& d : status[0].recent) {
    EXPECT_EQ(d.point, "Filter") << d.detail;
    EXPECT_EQ(d.plugin, "SwapProbe");
    EXPECT_EQ(d.shadow_node, "n2");
    EXPECT_NE(d.detail.find("SwapProbe 2 says no"), std::string::npos) << d.detail;
  }
  sched.Stop();
}

}  // namespace
}  // namespace schedhost::integration
