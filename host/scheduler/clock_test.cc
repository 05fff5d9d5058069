// The scheduler's clocks and executors: VirtualClock fires timers in time order only when
// advanced (callbacks may arm and cancel timers), RealClock fires them on its thread in due
// order, and the executors run every posted task.
#include "host/scheduler/clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "host/scheduler/executor.h"

namespace schedhost::scheduler {
namespace {

using ::testing::ElementsAre;
using std::chrono::milliseconds;
using std::chrono::seconds;
using namespace std::chrono_literals;

TEST(VirtualClockTest, TimeMovesOnlyWhenAdvanced) {
  VirtualClock clock;
  const auto t0 = clock.Now();
  std::vector<std::string> fired;
  clock.AfterFunc(seconds(5), [&] { fired.push_back("5s"); });
  clock.AfterFunc(seconds(1), [&] { fired.push_back("1s"); });
  clock.AfterFunc(seconds(1), [&] { fired.push_back("1s-second"); });
  EXPECT_EQ(clock.Now(), t0);
  EXPECT_EQ(clock.armed(), 3u);
  ASSERT_EQ(clock.NextTimer(), t0 + seconds(1));
  EXPECT_TRUE(clock.AdvanceToNextTimer());
  EXPECT_EQ(clock.Now(), t0 + seconds(1));
  EXPECT_THAT(fired, ElementsAre("1s", "1s-second")) << "same instant: arming order";
  EXPECT_TRUE(clock.AdvanceToNextTimer());
  EXPECT_EQ(clock.Now(), t0 + seconds(5));
  EXPECT_FALSE(clock.AdvanceToNextTimer());
  EXPECT_FALSE(clock.NextTimer().has_value());
}

TEST(VirtualClockTest, CallbacksArmAndCancelTimers) {
  VirtualClock clock;
  const auto t0 = clock.Now();
  std::vector<std::pair<std::string, std::chrono::nanoseconds>> fired;
  Clock::TimerId doomed =
      clock.AfterFunc(seconds(3), [&] { fired.emplace_back("doomed", 0s); });
  std::function<void()> tick = [&] {
    fired.emplace_back("tick", clock.Now() - t0);
    if (fired.size() < 3) clock.AfterFunc(seconds(1), tick);
  };
  clock.AfterFunc(seconds(1), tick);
  clock.AfterFunc(seconds(2), [&] { EXPECT_TRUE(clock.Cancel(doomed)); });
  clock.AfterFunc(seconds(2), [&] {
    clock.AfterFunc(0s, [&] { fired.emplace_back("now", clock.Now() - t0); });
  });
  clock.Advance(seconds(10));
  EXPECT_EQ(clock.Now(), t0 + seconds(10));
  ASSERT_EQ(fired.size(), 4u);
  EXPECT_EQ(fired[0], std::make_pair(std::string("tick"), std::chrono::nanoseconds(seconds(1))));
  EXPECT_EQ(fired[1], std::make_pair(std::string("tick"), std::chrono::nanoseconds(seconds(2))));
  EXPECT_EQ(fired[2], std::make_pair(std::string("now"), std::chrono::nanoseconds(seconds(2))));
  EXPECT_EQ(fired[3], std::make_pair(std::string("tick"), std::chrono::nanoseconds(seconds(3))));
  EXPECT_FALSE(clock.Cancel(doomed));
}

TEST(RealClockTest, FiresInDueOrderAndCancels) {
  RealClock clock;
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> done;
  // Taken before the timer is armed: a timer never fires before its due time, however slow the
  // machine (a start taken after arming made this flaky under TSan).
  const auto start = clock.Now();
  clock.AfterFunc(milliseconds(30), [&] {
    std::lock_guard lock(mu);
    order.push_back(3);
    done.set_value();
  });
  clock.AfterFunc(milliseconds(10), [&] {
    std::lock_guard lock(mu);
    order.push_back(1);
  });
  Clock::TimerId cancelled = clock.AfterFunc(milliseconds(20), [&] {
    std::lock_guard lock(mu);
    order.push_back(2);
  });
  EXPECT_TRUE(clock.Cancel(cancelled));
  done.get_future().wait();
  EXPECT_GE(clock.Now() - start, milliseconds(30));
  std::lock_guard lock(mu);
  EXPECT_THAT(order, ElementsAre(1, 3));
}

TEST(RealClockTest, DestroyingDropsPendingTimers) {
  std::atomic<bool> ran{false};
  {
    RealClock clock;
    clock.AfterFunc(seconds(60), [&] { ran = true; });
  }
  EXPECT_FALSE(ran.load());
}

TEST(ExecutorTest, ThreadPoolRunsEveryTaskBeforeItGoes) {
  std::atomic<int> count{0};
  {
    ThreadPoolExecutor pool(3);
    for (int i = 0; i < 500; ++i) pool.Post([&] { count.fetch_add(1); });
  }
  EXPECT_EQ(count.load(), 500);
}

// Until waits (up to 10 s) for `done`; true when it came.
template <typename F>
bool Until(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

TEST(ExecutorTest, ThreadPoolRunsTasksPostedFromTasksBeforeItGoes) {
  std::atomic<int> count{0};
  {
    ThreadPoolExecutor pool(2);
    pool.Post([&] {
      count.fetch_add(1);
      pool.Post([&] { count.fetch_add(1); });
    });
  }
  EXPECT_EQ(count.load(), 2);
}

TEST(ExecutorTest, ATaskThatThrowsDoesNotStopTheWorker) {
  std::atomic<int> count{0};
  ThreadPoolExecutor pool(1);
  pool.Post([] { throw std::runtime_error("boom"); });
  pool.Post([&] { count.fetch_add(1); });
  EXPECT_TRUE(Until([&] { return count.load() == 1; }));
}

// A worker that just ran a task polls: tasks posted meanwhile wake nobody and still run.
TEST(ExecutorTest, APollingWorkerTakesTasksWithoutBeingWoken) {
  ThreadPoolExecutor pool(1, milliseconds(1), seconds(60));
  std::atomic<int> count{0};
  pool.Post([&] { count.fetch_add(1); });
  ASSERT_TRUE(Until([&] { return count.load() == 1 && pool.polling() == 1; }));
  const uint64_t before = pool.wakeups();
  for (int i = 0; i < 5; ++i) pool.Post([&] { count.fetch_add(1); });
  EXPECT_TRUE(Until([&] { return count.load() == 6; }));
  EXPECT_EQ(pool.wakeups(), before);
}

// More than kMaxQueued tasks waiting for a poller wake a second worker, which runs them long
// before the poller's (here 60 s) timeout.
TEST(ExecutorTest, ABacklogWakesAnotherWorker) {
  ThreadPoolExecutor pool(2, seconds(60), seconds(600));
  std::atomic<int> count{0};
  pool.Post([&] { count.fetch_add(1); });
  ASSERT_TRUE(Until([&] { return count.load() == 1 && pool.polling() == 1; }));
  const uint64_t before = pool.wakeups();
  const int backlog = static_cast<int>(ThreadPoolExecutor::kMaxQueued) + 1;
  for (int i = 0; i < backlog; ++i) pool.Post([&] { count.fetch_add(1); });
  EXPECT_EQ(pool.wakeups(), before + 1);
  EXPECT_TRUE(Until([&] { return count.load() == 1 + backlog; }));
}

// An idle pool stops polling once `linger` has passed since its last task, and the next task
// wakes a worker as the first one did.
TEST(ExecutorTest, AnIdlePoolStopsPolling) {
  ThreadPoolExecutor pool(2, milliseconds(1), milliseconds(5));
  std::atomic<int> count{0};
  pool.Post([&] { count.fetch_add(1); });
  ASSERT_TRUE(Until([&] { return count.load() == 1; }));
  EXPECT_TRUE(Until([&] { return pool.polling() == 0; }));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(pool.polling(), 0);
  const uint64_t before = pool.wakeups();
  pool.Post([&] { count.fetch_add(1); });
  EXPECT_EQ(pool.wakeups(), before + 1);
  EXPECT_TRUE(Until([&] { return count.load() == 2; }));
}

TEST(ExecutorTest, ManualRunsInOrderIncludingTasksPostedMeanwhile) {
  ManualExecutor ex;
  std::vector<int> order;
  ex.Post([&] {
    order.push_back(1);
    ex.Post([&] { order.push_back(3); });
  });
  ex.Post([&] { order.push_back(2); });
  EXPECT_EQ(ex.pending(), 2u);
  EXPECT_EQ(ex.RunAll(), 3u);
  EXPECT_THAT(order, ElementsAre(1, 2, 3));
  EXPECT_EQ(ex.pending(), 0u);
}

}  // namespace
}  // namespace schedhost::scheduler
