// The view arenas: arrays are zeroed, aligned for their type, never overlap and stay put; an
// exact arena puts what fits into its reserved block and gives the rest blocks of their own.
#include "host/model/view_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace schedhost::model::internal {
namespace {

struct Wide {
  int64_t a;
  int64_t b;
};

struct alignas(16) Aligned16 {
  int64_t a;
  int64_t b;
};

bool Aligned(const void* p, size_t align) { return reinterpret_cast<uintptr_t>(p) % align == 0; }

bool Zero(const std::byte* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != std::byte{0}) return false;
  }
  return true;
}

// Fill asks `arena` for a mix of sizes and alignments, writes a distinct pattern into each
// array, then checks every pattern survived (no two arrays overlap) and each was zeroed.
void Fill(ViewArena& arena) {
  struct Got {
    std::byte* p;
    size_t n;
    uint8_t mark;
  };
  std::vector<Got> got;
  for (size_t i = 1; i <= 40; ++i) {
    if (i % 3 == 0) {
      Wide* w = arena.Array<Wide>(i);
      ASSERT_TRUE(Aligned(w, alignof(Wide)));
      got.push_back({reinterpret_cast<std::byte*>(w), i * sizeof(Wide), static_cast<uint8_t>(i)});
    } else {
      auto* c = arena.Array<uint8_t>(i);  // leaves the next array unaligned unless padded
      got.push_back({reinterpret_cast<std::byte*>(c), i, static_cast<uint8_t>(i)});
    }
    ASSERT_TRUE(Zero(got.back().p, got.back().n)) << i;
    std::fill(got.back().p, got.back().p + got.back().n, std::byte{got.back().mark});
  }
  for (const Got& g : got) {
    for (size_t k = 0; k < g.n; ++k) ASSERT_EQ(g.p[k], std::byte{g.mark});
  }
  EXPECT_EQ(arena.Array<Wide>(0), nullptr);
}

TEST(ViewArenaTest, InlineArenaArraysAreZeroedAlignedAndSeparate) {
  InlineViewArena arena;
  Fill(arena);
}

TEST(ViewArenaTest, ExactArenaArraysAreZeroedAlignedAndSeparate) {
  ExactViewBlocks blocks;
  ExactViewArena unreserved(blocks);
  Fill(unreserved);
  ExactViewArena reserved(blocks);  // a second arena adds to the same blocks
  reserved.Reserve(100);
  Fill(reserved);
}

TEST(ViewArenaTest, ExactArenaPacksWhatFitsIntoTheReservedBlock) {
  ExactViewBlocks blocks;
  ExactViewArena arena(blocks);
  arena.Reserve(4 * sizeof(uint64_t));
  auto* a = arena.Array<uint64_t>(1);
  auto* b = arena.Array<uint32_t>(1);
  auto* c = arena.Array<uint64_t>(1);  // after padding b up to 8 bytes
  const auto* base = reinterpret_cast<std::byte*>(a);
  EXPECT_TRUE(Aligned(a, alignof(uint64_t)));
  EXPECT_EQ(reinterpret_cast<std::byte*>(b), base + sizeof(uint64_t));
  EXPECT_EQ(reinterpret_cast<std::byte*>(c), base + 2 * sizeof(uint64_t));
  // 8 bytes are left: this one gets a block of its own, apart from the reserved one, and
  // aligned as its type asks though a block's header is 8 bytes.
  Aligned16* d = arena.Array<Aligned16>(2);
  const auto* block_end = base + 4 * sizeof(uint64_t);
  EXPECT_TRUE(reinterpret_cast<std::byte*>(d + 2) <= base ||
              reinterpret_cast<std::byte*>(d) >= block_end);
  EXPECT_TRUE(Aligned(d, 16));
  auto* e = arena.Array<uint64_t>(1);  // the reserved block's last 8 bytes
  EXPECT_EQ(reinterpret_cast<std::byte*>(e), base + 3 * sizeof(uint64_t));
  // The reserved block stays first: its first array is found from the blocks alone.
  arena.Array<uint64_t>(3);
  EXPECT_EQ(blocks.first(), base);
}

}  // namespace
}  // namespace schedhost::model::internal
