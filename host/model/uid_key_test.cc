#include "host/model/uid_key.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "host/model/meta.h"

namespace schedhost::model {
namespace {

TEST(UidKeyTest, GeneratedUidsAreKeptAsBytesAndReadBack) {
  for (int i = 0; i < 100; ++i) {
    const std::string uid = GenerateUid();
    const UidKey::Probe probe(uid);
    EXPECT_TRUE(probe.canonical) << uid;
    EXPECT_EQ(UidKey(uid).str(), uid);
    EXPECT_EQ(UidKey(uid), probe);
  }
  const UidKey::Probe max("ffffffff-ffff-ffff-ffff-ffffffffffff");
  EXPECT_TRUE(max.canonical);
  EXPECT_EQ(max.hi, UINT64_MAX);
  EXPECT_EQ(max.lo, UINT64_MAX);
}

TEST(UidKeyTest, AnyOtherUidIsKeptAsText) {
  // Upper case, a misplaced dash, a non-hex letter, one character short or long, and free text.
  for (const std::string uid :
       {"0A6E4F2C-1B3D-4E5F-8A9B-0C1D2E3F4A5B", "0a6e4f2c1-b3d-4e5f-8a9b-0c1d2e3f4a5b",
        "0a6e4f2c-1b3d-4e5f-8a9b-0c1d2e3f4a5g", "0a6e4f2c-1b3d-4e5f-8a9b-0c1d2e3f4a5",
        "0a6e4f2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b0", "pod-uid-1", ""}) {
    EXPECT_FALSE(UidKey::Probe(uid).canonical) << uid;
    EXPECT_EQ(UidKey(uid).str(), uid);
    EXPECT_EQ(UidKey(uid), UidKey::Probe(uid));
  }
}

TEST(UidKeyTest, DistinctUidsAreDistinctKeysInAMap) {
  // A canonical uid and its upper-case spelling are two uids, as the store sees them.
  const std::string lower = "0a6e4f2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b";
  const std::string upper = "0A6E4F2C-1B3D-4E5F-8A9B-0C1D2E3F4A5B";
  const std::string next = "0a6e4f2c-1b3d-4e5f-8a9b-0c1d2e3f4a5c";
  std::map<UidKey, int, std::less<>> m;
  m.emplace(UidKey(lower), 1);
  m.emplace(UidKey(upper), 2);
  m.emplace(UidKey(next), 3);
  m.emplace(UidKey("b"), 4);
  m.emplace(UidKey("a"), 5);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m.find(UidKey::Probe(lower))->second, 1);
  EXPECT_EQ(m.find(UidKey::Probe(upper))->second, 2);
  EXPECT_EQ(m.find(UidKey::Probe(next))->second, 3);
  EXPECT_EQ(m.find(UidKey::Probe("a"))->second, 5);
  EXPECT_EQ(m.find(UidKey::Probe("0a6e4f2c-1b3d-4e5f-8a9b-0c1d2e3f4a5d")), m.end());
  EXPECT_EQ(m.find(UidKey::Probe("c")), m.end());
  // Canonical ones first, by value; then the others by text.
  std::string order;
  for (const auto& [key, v] : m) order += std::to_string(v);
  EXPECT_EQ(order, "13254");
}

}  // namespace
}  // namespace schedhost::model
