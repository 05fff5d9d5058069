// Hot swap in real time (label `concurrent`, run under TSan): a writer creates pods through the
// store at a steady rate while profile sets alternating two configs (different enabled plugins,
// weights and args) are swapped in; afterwards every pod was bound exactly once (counted from the
// store's own watch) and the scheduler's invariants hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/model/decode.h"
#include "host/scheduler/scheduler.h"
#include "tests/integration/binding_counter.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kConfigA =
    "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.score]\n"
    "enabled = [{ name = \"NodeResourcesBalancedAllocation\", weight = 5 }]\n"
    "disabled = [{ name = \"ImageLocality\" }]\n";
constexpr std::string_view kConfigB =
    "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.score]\n"
    "disabled = [{ name = \"NodeResourcesBalancedAllocation\" }]\n"
    "[profile.plugin_config.NodeResourcesFit.scoring_strategy]\ntype = \"MostAllocated\"\n";

std::shared_ptr<const scheduler::ProfileSet> SetOf(std::string_view toml) {
  config::HostConfig cfg =
      config::ParseConfig("[host]\nparallelism = 4\n" + std::string(toml), "swap.toml", {});
  return scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir());
}

// SwapUnderLoad runs the writer while sets alternating `first` and `second` are swapped in,
// and checks that every pod was bound exactly once.
void SwapUnderLoad(std::string_view first, std::string_view second) {
  store::Store store;
  // Every binding the store records: unbound -> bound transitions per uid.
  BindingCounter bindings(store);
  scheduler::SchedulerOptions options;
  options.binding_threads = 3;
  options.pod_initial_backoff = milliseconds(20);
  options.pod_max_backoff = milliseconds(100);
  options.backoff_flush_interval = milliseconds(10);
  auto sched = std::make_unique<scheduler::Scheduler>(store, SetOf(first), options);
  sched->Start();
  auto apply = [&](const std::string& yaml) {
    for (const auto& obj : model::DecodeManifests(yaml, "test.yaml")) store.CreateObject(obj);
  };
  apply(NodeYaml("n1", "64") + NodeYaml("n2", "64") + NodeYaml("n3", "64") + NodeYaml("n4", "64"));

  std::atomic<bool> done{false};
  std::atomic<int> created{0};
  std::thread writer([&] {
    // One pod every 10 ms for four seconds (fewer than the 4 x 110 pods the nodes take): a
    // steady rate, not a burst.
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; std::chrono::steady_clock::now() - start < std::chrono::seconds(4); ++i) {
      apply(PodYaml("p" + std::to_string(i), "100m"));
      created.fetch_add(1);
      std::this_thread::sleep_until(start + milliseconds(10) * (i + 1));
    }
    done.store(true);
  });
  // Build off the loop, swap, alternate: as many reloads as fit in the writer's run, and at
  // least four (a slow build — ASan, a loaded machine — may finish after the writer; the pods
  // it created are still being scheduled then).
  int reloads = 0;
  std::chrono::nanoseconds build_time{0};
  std::chrono::nanoseconds swap_time{0};
  while (!done.load() || reloads < 4) {
    const auto t0 = std::chrono::steady_clock::now();
    auto set = SetOf(reloads % 2 == 0 ? second : first);
    const auto t1 = std::chrono::steady_clock::now();
    sched->ReplaceProfiles(std::move(set));
    swap_time += std::chrono::steady_clock::now() - t1;
    build_time += t1 - t0;
    ++reloads;
    std::this_thread::sleep_for(milliseconds(20));
  }
  writer.join();
  std::cout << reloads << " reloads; building a set took "
            << build_time.count() / 1'000'000 / std::max(reloads, 1)
            << " ms on average, swapping it in " << swap_time.count() / 1'000 / std::max(reloads, 1)
            << " us\n";
  EXPECT_GE(reloads, 4);
  EXPECT_EQ(sched->generation(), static_cast<uint64_t>(reloads) + 1);

  const int total = created.load();
  auto all_bound = [&] {
    for (const auto& p : store.List<model::Pod>()) {
      if (p->node_name().empty()) return false;
    }
    const auto c = sched->queue().Counts();
    return c.active == 0 && c.backoff == 0 && c.in_flight == 0;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!all_bound() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  if (!all_bound()) {
    for (const auto& p : store.List<model::Pod>()) {
      if (!p->node_name().empty()) continue;
      auto d = sched->Diagnostics(p->uid());
      ADD_FAILURE() << p->name() << " pending in "
                    << queue::LocationName(sched->queue().Where(p->uid())) << ": "
                    << (d ? d->message : "<no diagnostics>");
    }
    FAIL() << "some pod was lost or never bound";
  }
  sched->Stop();
  EXPECT_EQ(sched->CheckInvariants(), "");
  // The record behind Admin.Explain keeps the set of the last pod it described; every other
  // replaced set was released once its cycles ended.
  EXPECT_LE(sched->DrainingSets(), 1u);
  bindings.Stop();
  bindings.ExpectEachBoundOnce(static_cast<size_t>(total));
  EXPECT_EQ(sched->cache().PodCount(), static_cast<size_t>(total));
}

TEST(ConcurrentSwapTest, ReloadsUnderLoadLoseNoPodAndBindNoneTwice) {
  SwapUnderLoad(kConfigA, kConfigB);
}

// Each swap promotes the shadow: B shadows A, then B is live and A shadows it, and so on, with
// the shadow thread comparing cycles all along.
TEST(ConcurrentSwapTest, PromotingShadowsUnderLoadLosesNoPodAndBindsNoneTwice) {
  const auto shadowed = [](std::string_view live, std::string_view shadow) {
    std::string s(shadow);
    s.replace(s.find("name = \"default-scheduler\""), 26,
              "name = \"next\"\nshadow_of = \"default-scheduler\"");
    return "[shadow]\ncpu_budget_percent = 100\n" + std::string(live) + s;
  };
  metrics::Counter& compared = metrics::Metrics().shadow_pods.With({"next", "compared"});
  const uint64_t before = compared.Value();
  SwapUnderLoad(shadowed(kConfigA, kConfigB), shadowed(kConfigB, kConfigA));
  EXPECT_GT(compared.Value(), before) << "the shadows compared no pod while the swaps ran";
}

}  // namespace
}  // namespace schedhost::integration
