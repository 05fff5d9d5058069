#include "host/kube/elector.h"

#include <gtest/gtest.h>

#include "host/model/meta.h"

namespace schedhost::kube {
namespace {

constexpr char kNow[] = "2026-12-02T10:00:05.000000Z";

LeaseRecord Held(std::string holder, int64_t transitions = 3) {
  return {.holder = std::move(holder),
          .duration_seconds = 15,
          .acquire_time = "2026-12-02T09:00:00.000000Z",
          .renew_time = "2026-12-02T10:00:00.000000Z",
          .transitions = transitions};
}

TEST(DecideTest, NoLeaseIsCreatedHeldByThisReplica) {
  const Decision d = Decide(std::nullopt, false, "me", 15, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.record, (LeaseRecord{"me", 15, kNow, kNow, 0}));
}

TEST(DecideTest, AValidHolderIsLeftAlone) {
  EXPECT_FALSE(Decide(Held("other"), /*holder_valid=*/true, "me", 15, kNow).write);
}

TEST(DecideTest, AnExpiredHolderIsReplacedAsATransition) {
  const Decision d = Decide(Held("other"), /*holder_valid=*/false, "me", 15, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.record, (LeaseRecord{"me", 15, kNow, kNow, 4}));
}

TEST(DecideTest, AReleasedLeaseIsTakenAtOnce) {
  LeaseRecord released = Held("");
  released.duration_seconds = 1;
  const Decision d = Decide(released, /*holder_valid=*/true, "me", 15, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.record.holder, "me");
  EXPECT_EQ(d.record.transitions, 4);
  EXPECT_EQ(d.record.acquire_time, kNow);
}

TEST(DecideTest, TheHolderRenewsKeepingAcquireTimeAndTransitions) {
  for (const bool valid : {true, false}) {
    const Decision d = Decide(Held("me"), valid, "me", 15, kNow);
    ASSERT_TRUE(d.write);
    EXPECT_EQ(d.record, (LeaseRecord{"me", 15, "2026-12-02T09:00:00.000000Z", kNow, 3}));
  }
}

TEST(ElectorTest, LeaseTimesAreMicroTime) {
  EXPECT_EQ(model::FormatMicroTime(1'700'000'000'123'456'789), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(model::FormatMicroTime(1'700'000'000'000'000'000), "2023-11-14T22:13:20.000000Z");
}

TEST(ElectorTest, DefaultIdentityIsHostnameAndAUuid) {
  const std::string a = DefaultIdentity();
  const std::string b = DefaultIdentity();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.substr(0, a.rfind('_')), Hostname());
  EXPECT_EQ(a.size() - a.rfind('_') - 1, 36U);
}

}  // namespace
}  // namespace schedhost::kube
