// PairCounts, InterPodAffinity's open-addressing table of topology-pair counts, against a
// std::map under random adds and removals: pairs from a small pool so probe runs collide,
// wrap around the table's end and are shifted back when an entry in their middle goes.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

#include "inter_pod_affinity.h"

namespace schedhost::plugins {
namespace {

void ExpectSame(const PairCounts& got, const std::map<uint64_t, int64_t>& want,
                const std::vector<uint64_t>& pool) {
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.empty(), want.empty());
  for (uint64_t p : pool) {
    auto it = want.find(p);
    ASSERT_EQ(got.Get(p), it == want.end() ? 0 : it->second) << "pair " << p;
  }
  std::map<Id, uint32_t> keys;
  for (const auto& [pair, count] : want) ++keys[static_cast<Id>(pair >> 32U)];
  ASSERT_EQ(got.keys().size(), keys.size());
  for (const auto& [key, n] : got.keys()) EXPECT_EQ(keys[key], n) << "key " << key;
}

TEST(PairCountsTest, AgreesWithAMapUnderRandomAddsAndRemovals) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> pool;
  for (Id key : {1U, 2U, 7U}) {
    for (Id value = 1; value <= 60; ++value) pool.push_back(TopologyPair(key, value * 977U));
  }
  PairCounts counts;
  std::map<uint64_t, int64_t> want;
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  std::uniform_int_distribution<int> delta(-2, 3);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t pair = pool[pick(rng)];
    // Mostly take back what is there, so tables grow, drain and refill.
    int64_t d = delta(rng);
    if (step % 5000 > 3000 && want.count(pair)) d = -want[pair];
    counts.Add(pair, d);
    if ((want[pair] += d) == 0) want.erase(pair);
    if (step % 97 == 0) ExpectSame(counts, want, pool);
  }
  ExpectSame(counts, want, pool);
  // A copy is independent.
  PairCounts copy = counts;
  copy.Add(pool[0], 5);
  EXPECT_EQ(copy.Get(pool[0]), counts.Get(pool[0]) + 5);
}

TEST(PairCountsTest, ZeroDeltaAddsNothingAndDrainingEmpties) {
  PairCounts counts;
  counts.Add(TopologyPair(1, 2), 0);
  EXPECT_TRUE(counts.empty());
  counts.Add(TopologyPair(1, 2), 2);
  counts.Add(TopologyPair(3, 4), -1);  // negative counts are kept (RemovePod before AddPod)
  EXPECT_EQ(counts.Get(TopologyPair(3, 4)), -1);
  EXPECT_EQ(counts.size(), 2U);
  counts.Add(TopologyPair(1, 2), -2);
  counts.Add(TopologyPair(3, 4), 1);
  EXPECT_TRUE(counts.empty());
  EXPECT_TRUE(counts.keys().empty());
  EXPECT_EQ(counts.Get(TopologyPair(1, 2)), 0);
}

}  // namespace
}  // namespace schedhost::plugins
