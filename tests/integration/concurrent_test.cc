// The scheduler in real time (label `concurrent`, run under TSan): the loop thread, binding
// threads, the clock's thread and writers creating and deleting pods all at once. Every pod that
// fits is bound exactly once, no node is overcommitted, Permit timers fire in real time, and a
// graceful Stop leaves every pending pod queued.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "host/model/decode.h"
#include "host/scheduler/scheduler.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/integration/test_plugins.h"

namespace schedhost::integration {
namespace {

using std::chrono::milliseconds;

// RealTimeHost: a scheduler on a RealClock with its loop thread running.
class RealTimeHost {
 public:
  explicit RealTimeHost(const std::string& toml = "",
                        const std::vector<const schedhost_plugin_descriptor*>& in_process = {}) {
    config::HostConfig cfg =
        config::ParseConfig("[host]\nparallelism = 4\n" + toml, "test.toml", {});
    scheduler::SchedulerOptions options;
    options.binding_threads = 3;
    options.pod_initial_backoff = milliseconds(20);
    options.pod_max_backoff = milliseconds(100);
    options.backoff_flush_interval = milliseconds(10);
    sched = std::make_unique<scheduler::Scheduler>(
        store, scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir(), in_process),
        options);
    sched->Start();
  }
  ~RealTimeHost() {
    if (sched) sched->Stop();
  }

  void Apply(const std::string& yaml) {
    for (const auto& obj : model::DecodeManifests(yaml, "test.yaml")) store.CreateObject(obj);
  }
  // WaitFor polls `done` until it holds or `limit` passes.
  bool WaitFor(const std::function<bool()>& done, milliseconds limit = milliseconds(30000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return done();
  }
  size_t CountBound() const {
    size_t n = 0;
    for (const auto& p : store.List<model::Pod>()) n += p->node_name().empty() ? 0 : 1;
    return n;
  }
  // Idle: nothing active, backing off or in flight.
  bool Idle() const {
    auto c = sched->queue().Counts();
    return c.active == 0 && c.backoff == 0 && c.in_flight == 0;
  }

  store::Store store;
  std::unique_ptr<scheduler::Scheduler> sched;
};

TEST(ConcurrentSchedulerTest, WritersAndTheLoopRaceWithoutLosingOrOvercommitting) {
  RealTimeHost host;
  host.Apply(NodeYaml("n1", "8") + NodeYaml("n2", "8") + NodeYaml("n3", "8") + NodeYaml("n4", "8"));
  constexpr int kWriters = 3;
  constexpr int kPerWriter = 40;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&host, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        host.Apply(PodYaml("w" + std::to_string(w) + "-" + std::to_string(i), "250m"));
        if (i % 10 == 9) {
          // Delete one of our own pods, bound or not, while the scheduler works on the others.
          host.store.Delete<model::Pod>("default",
                                        "w" + std::to_string(w) + "-" + std::to_string(i - 5));
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  const size_t expected = kWriters * (kPerWriter - kPerWriter / 10);
  ASSERT_TRUE(host.WaitFor([&] { return host.CountBound() == expected && host.Idle(); }))
      << host.CountBound() << " of " << expected << " bound";
  host.sched->Stop();
  EXPECT_EQ(host.sched->CheckInvariants(), "");
  std::map<std::string, int64_t> used;
  for (const auto& p : host.store.List<model::Pod>()) used[std::string(p->node_name())] += 250;
  for (const auto& [node, milli] : used) EXPECT_LE(milli, 8000) << node;
  EXPECT_EQ(host.sched->cache().PodCount(), expected);
}

TEST(ConcurrentSchedulerTest, OverflowStaysPendingWithUpstreamsMessage) {
  RealTimeHost host;
  host.Apply(NodeYaml("n1", "2") + NodeYaml("n2", "2"));
  std::string yaml;
  for (int i = 0; i < 10; ++i) yaml += PodYaml("p" + std::to_string(i), "1");
  host.Apply(yaml);
  ASSERT_TRUE(host.WaitFor([&] { return host.CountBound() == 4 && host.Idle(); }));
  host.sched->Stop();
  EXPECT_EQ(host.sched->CheckInvariants(), "");
  for (const auto& p : host.store.List<model::Pod>()) {
    if (!p->node_name().empty()) continue;
    auto d = host.sched->Diagnostics(p->uid());
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->message,
              "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
              "2 No preemption victims found for incoming pod.")
        << p->name();
  }
}

TEST(ConcurrentSchedulerTest, PermitTimersFireInRealTime) {
  RealTimeHost host(
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\n"
      "enabled = [{ name = \"Gang\" }]\n[profile.plugin_config.Gang]\nquorum = 2\n"
      "timeout_ms = 150\n",
      {GangDescriptor()});
  host.Apply(NodeYaml("n1"));
  host.Apply(PodYaml("g-a"));
  host.Apply(PodYaml("g-b"));  // completes the gang of two
  ASSERT_TRUE(host.WaitFor([&] { return host.CountBound() == 2; }));
  const auto start = std::chrono::steady_clock::now();
  host.Apply(PodYaml("g-lonely"));
  auto lonely = [&] { return host.store.Get<model::Pod>("default", "g-lonely"); };
  ASSERT_TRUE(host.WaitFor([&] {
    auto d = host.sched->Diagnostics(lonely()->uid());
    return d && !d->message.empty();
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  EXPECT_EQ(host.sched->Diagnostics(lonely()->uid())->message,
            "0/1 nodes are available: 1 rejected due to timeout after waiting 150ms at plugin "
            "Gang.");
  EXPECT_EQ(lonely()->node_name(), "");
}

TEST(ConcurrentSchedulerTest, StopWithPodsWaitingAndQueuedKeepsEveryPodAccountedFor) {
  RealTimeHost host(
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\n"
      "enabled = [{ name = \"Gang\" }]\n[profile.plugin_config.Gang]\nquorum = 100\n"
      "timeout_ms = 60000\n",
      {GangDescriptor()});
  host.Apply(NodeYaml("n1", "100"));
  std::string yaml;
  for (int i = 0; i < 20; ++i) yaml += PodYaml("g" + std::to_string(i), "1");
  host.Apply(yaml);
  auto waiting = [&] {
    return host.sched->profiles()->Find("default-scheduler")->waiting_pods().size();
  };
  ASSERT_TRUE(host.WaitFor([&] { return waiting() == 20; }));
  host.sched->Stop();
  EXPECT_EQ(waiting(), 0u);
  EXPECT_EQ(host.sched->bindings_in_flight(), 0u);
  EXPECT_EQ(host.CountBound(), 0u);
  EXPECT_EQ(host.sched->CheckInvariants(), "");
  EXPECT_EQ(host.sched->cache().PodCount(), 0u) << "every assumed pod was forgotten";
}

}  // namespace
}  // namespace schedhost::integration
