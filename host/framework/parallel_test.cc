#include "host/framework/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace schedhost::framework {
namespace {

TEST(ParallelizerTest, VisitsEveryIndexExactlyOnce) {
  for (int workers : {1, 2, 4, 16}) {
    Parallelizer p(workers);
    for (size_t n : {0u, 1u, 7u, 1000u, 5000u}) {
      std::vector<std::atomic<int>> hits(n);
      p.Until(n, [&](size_t i) { hits[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << workers << " workers, n=" << n;
    }
  }
}

TEST(ParallelizerTest, UntilChunksCoversEveryIndexOnceInDisjointRanges) {
  for (int workers : {1, 2, 4}) {
    Parallelizer p(workers);
    for (size_t n : {1u, 7u, 1000u, 5000u}) {
      std::vector<std::atomic<int>> hits(n);
      p.UntilChunks(n, [&](size_t begin, size_t end) {
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << workers << " workers, n=" << n;
    }
  }
}

TEST(ParallelizerTest, UntilChunksStopsHandingOutChunks) {
  for (int workers : {1, 2}) {
    Parallelizer p(workers);
    std::atomic<bool> stop{false};
    std::atomic<size_t> done{0};
    p.UntilChunks(
        100000,
        [&](size_t begin, size_t end) {
          stop.store(true);
          done.fetch_add(end - begin);
        },
        &stop);
    EXPECT_LT(done.load(), 100000u) << workers << " workers";
  }
}

TEST(ParallelizerTest, ThreadsNeverExceedTheHardware) {
  Parallelizer p(1000);
  EXPECT_EQ(p.parallelism(), 1000);
  EXPECT_GE(p.threads(), 1);
  const auto hardware = static_cast<int>(std::thread::hardware_concurrency());
  if (hardware > 0) {
    EXPECT_LE(p.threads(), hardware);
  }
}

TEST(ParallelizerTest, StopSkipsRemainingWork) {
  Parallelizer p(4);
  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  p.Until(
      100000,
      [&](size_t i) {
        if (i == 10) stop.store(true);
        done.fetch_add(1);
      },
      &stop);
  EXPECT_LT(done.load(), 100000);
  // The pool is reusable after a stopped loop.
  std::atomic<int> all{0};
  p.Until(1000, [&](size_t) { all.fetch_add(1); });
  EXPECT_EQ(all.load(), 1000);
}

TEST(ParallelizerTest, ConcurrentCallersAreSerialised) {
  Parallelizer p(3);
  std::atomic<long> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int k = 0; k < 20; ++k)
        p.Until(500, [&](size_t i) { sum.fetch_add(static_cast<long>(i)); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(sum.load(), 4L * 20 * (499L * 500 / 2));
}

// Many tiny loops back to back: helpers the pool starts after a loop has ended (the caller does
// not wait for them) must never run a later loop's body for an earlier one, nor touch a loop
// whose caller has returned (the sanitizer presets catch the latter).
TEST(ParallelizerTest, LateHelpersNeverRunAFinishedLoop) {
  Parallelizer p(4);
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 2 + static_cast<size_t>(round % 7);
    std::atomic<bool> open{true};
    std::vector<std::atomic<int>> hits(n);
    p.UntilChunks(n, [&](size_t begin, size_t end) {
      ASSERT_TRUE(open.load());
      for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    });
    open.store(false);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "round " << round;
  }
}

// Every loop of more than one chunk gets its helper, whether the helper is still watching for
// the next loop or has parked: each loop's first chunk waits until a second thread runs the
// other one.
TEST(ParallelizerTest, AHelperJoinsEveryLoop) {
  Parallelizer p(2);
  if (p.threads() < 2) GTEST_SKIP() << "one hardware thread";
  for (int round = 0; round < 300; ++round) {
    std::atomic<int> entered{0};
    std::atomic<bool> alone{false};
    p.UntilChunks(2, [&](size_t, size_t) {
      entered.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (entered.load() < 2) {
        if (std::chrono::steady_clock::now() > deadline) {
          alone.store(true);
          return;
        }
        std::this_thread::yield();
      }
    });
    ASSERT_FALSE(alone.load()) << "round " << round << ": no helper came";
    // Now and then long enough for the helper to stop watching and park.
    if (round % 30 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace
}  // namespace schedhost::framework
