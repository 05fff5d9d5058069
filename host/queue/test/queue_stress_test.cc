// Stress tests (ctest label "concurrent"): a seeded randomized run of 100,000 mixed operations
// checked against a shadow model with CheckInvariants after every step, and a multi-threaded
// run where schedulers, an event source, flushers, a deleter and a checker share one queue.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <unordered_map>

#include "host/queue/scheduling_queue.h"
#include "host/queue/test/queue_test_util.h"

namespace schedhost::queue {
namespace {

using std::chrono::milliseconds;
using testing::MakePod;
using testing::TestPod;
using testing::With;

const char* const kPlugins[] = {"A", "B", "C", "P"};

// Everything the randomized run can do to one pod uid: its variants and what the model says.
struct Slot {
  std::vector<std::shared_ptr<const model::Pod>> variants;  // 0 base, 1 relabeled, 2 status,
                                                            // 3 gated.
  bool tracked = false;                                     // The queue should know the uid.
  bool deleted_in_flight = false;
  int attempts = 0;
};

TEST(QueueStressTest, RandomizedOperationsKeepInvariants) {
  constexpr int kSteps = 100'000;
  constexpr int kPods = 100;
  std::mt19937_64 rng(20240501);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };

  testing::FakeClock clock;
  std::atomic<uint64_t> salt{0};
  bool quota_full = false;
  QueueCallbacks cb;
  cb.pre_enqueue = [&](const model::Pod& pod) {
    if (!pod.data().spec.scheduling_gates.empty()) return PreEnqueueResult{false, "Gates", "g"};
    if (quota_full && pod.priority() % 2 == 0) return PreEnqueueResult{false, "Quota", "full"};
    return PreEnqueueResult{};
  };
  cb.hint = [&](std::string_view plugin, const model::Pod& pod, const ClusterEvent& ev) {
    const size_t h =
        std::hash<std::string>{}(std::string(plugin) + std::string(pod.uid()) + ev.label) ^
        static_cast<size_t>(salt.load());
    return h % 3 == 0;
  };
  QueueOptions opts;
  opts.clock = clock.AsClock();
  SchedulingQueue q(cb, opts);

  std::vector<Slot> slots(kPods);
  for (int i = 0; i < kPods; ++i) {
    auto base = MakePod(TestPod{.name = "s" + std::to_string(i), .priority = i % 7});
    slots[i].variants = {base,
                         With(base,
                              [&](model::PodData& d) {
                                d.metadata.labels = {{"v", "1"}};
                              }),
                         With(base, [](model::PodData& d) { d.status.nominated_node_name = "n1"; }),
                         With(base, [](model::PodData& d) { d.spec.scheduling_gates = {"gate"}; })};
  }
  std::unordered_map<std::string, int, internal::StringHash, std::equal_to<>> slot_of;
  for (int i = 0; i < kPods; ++i) slot_of.emplace(slots[i].variants[0]->uid(), i);
  std::vector<QueuedPodInfo> flying;

  for (int step = 0; step < kSteps; ++step) {
    const int op = pick(100);
    const int i = pick(kPods);
    Slot& s = slots[i];
    const auto& pod = s.variants[pick(4)];
    std::string what;
    if (op < 14) {  // Add
      what = "add";
      if (s.tracked) {
        EXPECT_THROW(q.Add(pod), QueueError);
      } else {
        PodLocation w = q.Add(pod);
        EXPECT_TRUE(w == PodLocation::kActive || w == PodLocation::kGated);
        s.tracked = true;
        s.attempts = 0;
      }
    } else if (op < 26) {  // Update (adds unknown pods)
      what = "update";
      if (!s.tracked) s.attempts = 0;
      q.Update(pick(2) ? nullptr : s.variants[pick(4)], pod);
      s.tracked = true;
    } else if (op < 32) {  // Delete
      what = "delete";
      PodLocation w = q.Delete(*pod);
      EXPECT_EQ(w != PodLocation::kNone, s.tracked);
      if (w == PodLocation::kInFlight) {
        s.deleted_in_flight = true;
      } else {
        s.tracked = false;
      }
    } else if (op < 50) {  // Pop
      what = "pop";
      if (auto info = q.TryPop()) {
        Slot& popped = slots[slot_of.find(info->pod->uid())->second];
        EXPECT_EQ(info->attempts, ++popped.attempts);
        EXPECT_FALSE(info->gated);
        flying.push_back(std::move(*info));
      }
    } else if (op < 64 && !flying.empty()) {  // Fail
      what = "fail";
      const size_t k = static_cast<size_t>(pick(static_cast<int>(flying.size())));
      QueuedPodInfo info = flying[k];
      flying.erase(flying.begin() + static_cast<ptrdiff_t>(k));
      PluginSet rejectors, pending;
      for (const char* p : kPlugins) {
        if (pick(3) == 0) (pick(4) == 0 ? pending : rejectors).insert(p);
      }
      const schedhost_code codes[] = {SCHEDHOST_ERROR, SCHEDHOST_UNSCHEDULABLE,
                                      SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE, SCHEDHOST_PENDING};
      Slot& f = slots[slot_of.find(info.pod->uid())->second];
      PodLocation w = q.AddUnschedulableIfNotPresent(info, rejectors, pending, codes[pick(4)],
                                                     pick(5) == 0 ? "n2" : "");
      EXPECT_EQ(w == PodLocation::kNone, f.deleted_in_flight);
      EXPECT_NE(w, PodLocation::kInFlight);
      if (f.deleted_in_flight) f.tracked = false;
      f.deleted_in_flight = false;
    } else if (op < 72 && !flying.empty()) {  // Done (bound)
      what = "done";
      const size_t k = static_cast<size_t>(pick(static_cast<int>(flying.size())));
      Slot& f = slots[slot_of.find(flying[k].pod->uid())->second];
      q.Done(flying[k].pod->uid());
      q.nominator().Delete(*flying[k].pod);  // assume()
      flying.erase(flying.begin() + static_cast<ptrdiff_t>(k));
      f.tracked = false;
      f.deleted_in_flight = false;
    } else if (op < 84) {  // Cluster events
      what = "event";
      salt++;
      switch (pick(4)) {
        case 0:
          q.AssignedPodAdded(MakePod("bound"));
          break;
        case 1:
          q.AssignedPodDeleted(MakePod("bound"));
          break;
        case 2:
          q.MoveAllToActiveOrBackoffQueue(MakeNodeAddEvent(nullptr));
          break;
        default:
          if (pick(10) == 0) q.MoveAllToActiveOrBackoffQueue(MakeWildcardEvent("Force"));
      }
    } else if (op < 92) {  // Time passes
      what = "clock";
      clock.Advance(milliseconds(pick(3000)));
      if (pick(20) == 0) clock.Advance(std::chrono::minutes(pick(7)));
    } else if (op < 96) {
      what = "flush backoff";
      q.FlushBackoffQCompleted();
    } else if (op < 98) {
      what = "flush leftover";
      q.FlushUnschedulablePodsLeftover();
    } else if (op < 99) {
      what = "reorder";
      if (pick(2)) {
        q.Reorder([](const QueuedPodInfo& a, const QueuedPodInfo& b) {
          return a.pod->priority() < b.pod->priority();
        });
      } else {
        q.Reorder({});
      }
    } else {
      what = "quota";
      quota_full = !quota_full;
    }
    const std::string err = q.CheckInvariants();
    ASSERT_EQ(err, "") << "step " << step << " (" << what << ")";
    if (step % 16 == 0) {
      for (const Slot& sl : slots) {
        ASSERT_EQ(q.Where(sl.variants[0]->uid()) != PodLocation::kNone, sl.tracked)
            << "step " << step << " (" << what << ") pod " << sl.variants[0]->name();
      }
    }
  }
  QueueCounts c = q.Counts();
  EXPECT_EQ(c.in_flight, flying.size());
  // The run must have exercised every place, or it proves little.
  EXPECT_GT(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0u);
}

TEST(QueueStressTest, ConcurrentSchedulersEventsFlushesAndDeletes) {
  constexpr int kPods = 2000;
  QueueCallbacks cb;
  cb.hint = [](std::string_view plugin, const model::Pod& pod, const ClusterEvent&) {
    return (std::hash<std::string_view>{}(pod.uid()) + plugin.size()) % 2 == 0;
  };
  QueueOptions opts;
  opts.pod_initial_backoff = milliseconds(1);
  opts.pod_max_backoff = milliseconds(4);
  opts.pod_max_in_unschedulable = milliseconds(20);
  SchedulingQueue q(cb, opts);

  std::vector<std::shared_ptr<const model::Pod>> pods;
  for (int i = 0; i < kPods; ++i) pods.push_back(MakePod("c" + std::to_string(i), i % 5));
  std::unordered_map<std::string, int, internal::StringHash, std::equal_to<>> index;
  for (int i = 0; i < kPods; ++i) index.emplace(pods[i]->uid(), i);
  std::vector<std::atomic<bool>> added(kPods), finished(kPods);
  std::vector<std::atomic<int>> bound(kPods);
  std::atomic<int> finished_count{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> failed_check{false};
  std::string first_error;
  std::mutex error_mu;

  auto finish = [&](int i) {
    bool expected = false;
    if (finished[i].compare_exchange_strong(expected, true) && ++finished_count == kPods) {
      stop = true;
      q.Close();
    }
  };
  auto report = [&](const std::string& err) {
    std::lock_guard lock(error_mu);
    if (first_error.empty()) first_error = err;
    failed_check = true;
  };

  std::vector<std::thread> threads;
  threads.emplace_back([&] {  // Adder.
    for (int i = 0; i < kPods; ++i) {
      q.Add(pods[i]);
      added[i] = true;
      if (i % 100 == 0) std::this_thread::yield();
    }
  });
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {  // Schedulers.
      std::mt19937 rng(static_cast<unsigned>(t));
      while (auto info = q.Pop()) {
        const int i = index.find(info->pod->uid())->second;
        if (info->attempts < 3 && rng() % 2 == 0) {
          const schedhost_code code = rng() % 4 == 0 ? SCHEDHOST_ERROR : SCHEDHOST_UNSCHEDULABLE;
          PluginSet rejectors{kPlugins[rng() % 3]};
          PluginSet pending;
          if (rng() % 5 == 0) pending.insert("P");
          if (q.AddUnschedulableIfNotPresent(*info, rejectors, pending, code) ==
              PodLocation::kNone) {
            continue;  // Deleted in flight: the deleter finished it.
          }
        } else {
          q.Done(info->pod->uid());
          if (++bound[i] > 1) report("pod " + std::string(info->pod->name()) + " bound twice");
          finish(i);
        }
      }
    });
  }
  threads.emplace_back([&] {  // Cluster events.
    auto other = MakePod("bound-elsewhere");
    for (int n = 0; !stop; ++n) {
      if (n % 2) {
        q.AssignedPodDeleted(other);
      } else {
        q.MoveAllToActiveOrBackoffQueue(MakeNodeAddEvent(nullptr));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  threads.emplace_back([&] {  // Flushes, as the scheduler's timers would.
    for (int n = 0; !stop; ++n) {
      q.FlushBackoffQCompleted();
      if (n % 5 == 0) q.FlushUnschedulablePodsLeftover();
      std::this_thread::sleep_for(milliseconds(1));
    }
  });
  threads.emplace_back([&] {  // Deleter: removes every 17th pod once it was added.
    for (int i = 0; i < kPods && !stop; i += 17) {
      while (!added[i] && !stop) std::this_thread::yield();
      q.Delete(*pods[i]);
      finish(i);
    }
  });
  threads.emplace_back([&] {  // Checker.
    while (!stop) {
      if (std::string err = q.CheckInvariants(); !err.empty()) report(err);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  std::thread watchdog([&] {
    for (int n = 0; n < 600 && !stop; ++n) std::this_thread::sleep_for(milliseconds(50));
    if (!stop) {
      report("timed out with " + std::to_string(finished_count.load()) + " pods finished");
      stop = true;
      q.Close();
    }
  });
  for (auto& t : threads) t.join();
  watchdog.join();

  EXPECT_FALSE(failed_check) << first_error;
  EXPECT_EQ(finished_count.load(), kPods);
  EXPECT_EQ(q.CheckInvariants(), "");
  QueueCounts c = q.Counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0u)
      << "every pod was bound or deleted";
}

}  // namespace
}  // namespace schedhost::queue
