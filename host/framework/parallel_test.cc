#include "host/framework/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
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

TEST(ParallelizerTest, ChunkSizeIsTheChunkUntilChunksHandsOut) {
  for (int workers : {1, 2, 4}) {
    Parallelizer p(workers);
    for (size_t n : {1u, 7u, 1000u, 50000u}) {
      const size_t chunk = p.ChunkSize(n);
      std::atomic<size_t> bad{0};
      p.UntilChunks(n, [&](size_t begin, size_t end) {
        if (begin % chunk != 0 || (end != n && end - begin != chunk)) bad.fetch_add(1);
      });
      EXPECT_EQ(bad.load(), 0u) << workers << " workers, n=" << n << ", chunk " << chunk;
    }
  }
}

TEST(ParallelizerTest, WorkersAreNumberedFromTheCaller) {
  Parallelizer p(4);
  EXPECT_EQ(Parallelizer::Worker(), 0);
  std::mutex mu;
  std::set<int> seen;
  p.Until(20000, [&](size_t) {
    std::lock_guard lock(mu);
    seen.insert(Parallelizer::Worker());
  });
  ASSERT_FALSE(seen.empty());
  EXPECT_GE(*seen.begin(), 0);
  EXPECT_LT(*seen.rbegin(), p.threads());
}

TEST(ParallelizerTest, UntilRangesRunsEachRangeOnceAndAThreadsOwnFirst) {
  for (int workers : {1, 2, 4}) {
    Parallelizer p(workers);
    // 40 ranges over 2,000 indices, marked for workers 0..3 and for 9, which no pool has.
    std::vector<Parallelizer::Range> ranges;
    for (size_t k = 0; k < 40; ++k) {
      ranges.push_back({k * 50, k * 50 + 50, k % 5 == 4 ? 9 : static_cast<int>(k % 4)});
    }
    std::vector<std::atomic<int>> hits(2000);
    std::mutex mu;
    std::map<int, std::vector<size_t>> order;  // per thread, the ranges it ran in order
    p.UntilRanges(ranges, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      std::lock_guard lock(mu);
      order[Parallelizer::Worker()].push_back(begin / 50);
    });
    for (size_t i = 0; i < 2000; ++i) ASSERT_EQ(hits[i].load(), 1) << workers << " workers, " << i;
    for (const auto& [worker, ran] : order) {
      if (p.threads() == 1) break;  // one thread alone runs them in order (below)
      // Once a thread runs a range that is not its own, it runs none of its own after it.
      bool others = false;
      for (size_t k : ran) {
        const bool own = ranges[k].worker == worker;
        EXPECT_FALSE(others && own) << workers << " workers: worker " << worker << ", range " << k;
        others = others || !own;
      }
    }
    if (p.threads() == 1) {
      ASSERT_EQ(order.size(), 1u);
      EXPECT_EQ(order.begin()->second.size(), 40u);
      EXPECT_TRUE(std::is_sorted(order.begin()->second.begin(), order.begin()->second.end()));
    }
  }
}

TEST(ParallelizerTest, UntilRangesStopsHandingOutRanges) {
  for (int workers : {1, 2}) {
    Parallelizer p(workers);
    std::vector<Parallelizer::Range> ranges;
    for (size_t k = 0; k < 1000; ++k) ranges.push_back({k, k + 1, static_cast<int>(k % 2)});
    std::atomic<bool> stop{false};
    std::atomic<size_t> done{0};
    p.UntilRanges(
        ranges,
        [&](size_t begin, size_t end) {
          stop.store(true);
          done.fetch_add(end - begin);
        },
        &stop);
    EXPECT_LT(done.load(), 1000u) << workers << " workers";
    EXPECT_GE(done.load(), 1u) << workers << " workers";
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
