// SchedulingQueue ordering and timing: QueueSort order and its hot swap, backoff durations and
// expiry with an injected clock, and the unschedulable-leftover flush.
#include "host/queue/scheduling_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/queue/test/queue_fixture.h"

namespace schedhost::queue {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using testing::MakePod;
using testing::QueueTest;

TEST_F(QueueTest, OptionsAreValidated) {
  struct Case {
    const char* name;
    nanoseconds initial, max, leftover;
    const char* error;  // nullptr: valid.
  };
  const Case cases[] = {
      {"defaults", seconds(1), seconds(10), minutes(5), nullptr},
      {"equal initial and max", seconds(2), seconds(2), minutes(5), nullptr},
      {"zero initial", nanoseconds(0), seconds(10), minutes(5),
       "pod_initial_backoff must be positive"},
      {"negative initial", seconds(-1), seconds(10), minutes(5), "pod_initial_backoff"},
      {"max below initial", seconds(5), seconds(2), minutes(5),
       "must not be below pod_initial_backoff"},
      {"zero leftover", seconds(1), seconds(10), nanoseconds(0), "pod_max_in_unschedulable"},
  };
  for (const Case& c : cases) {
    QueueOptions o = Options();
    o.pod_initial_backoff = c.initial;
    o.pod_max_backoff = c.max;
    o.pod_max_in_unschedulable = c.leftover;
    if (c.error == nullptr) {
      EXPECT_NO_THROW(SchedulingQueue({}, o)) << c.name;
    } else {
      EXPECT_THAT([&] { SchedulingQueue q({}, o); },
                  ::testing::ThrowsMessage<QueueError>(HasSubstr(c.error)))
          << c.name;
    }
  }
}

TEST_F(QueueTest, PopsByPriorityThenArrival) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, int32_t>> adds;  // In arrival order.
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"fifo within a priority", {{"a", 0}, {"b", 0}, {"c", 0}}, {"a", "b", "c"}},
      {"higher priority first", {{"low", 1}, {"high", 10}, {"mid", 5}}, {"high", "mid", "low"}},
      {"mixed", {{"a", 1}, {"b", 2}, {"c", 1}, {"d", 2}, {"e", 0}}, {"b", "d", "a", "c", "e"}},
      {"negative priorities", {{"neg", -5}, {"zero", 0}}, {"zero", "neg"}},
  };
  for (const Case& c : cases) {
    SchedulingQueue q({}, Options());
    for (const auto& [name, prio] : c.adds) {
      EXPECT_EQ(q.Add(MakePod(name, prio)), PodLocation::kActive);
      clock_.Advance(milliseconds(1));
    }
    std::vector<std::string> got;
    while (auto info = q.TryPop()) got.emplace_back(info->pod->name());
    EXPECT_EQ(got, c.want) << c.name;
    EXPECT_EQ(q.CheckInvariants(), "") << c.name;
  }
}

TEST_F(QueueTest, InjectedLessAndHotSwapReorder) {
  QueueCallbacks cb;
  cb.less = [](const QueuedPodInfo& a, const QueuedPodInfo& b) {
    return a.pod->name() < b.pod->name();
  };
  SchedulingQueue q(cb, Options());
  for (const char* n : {"c", "a", "d", "b"}) q.Add(MakePod(n, n[0] == 'd' ? 100 : 0));
  EXPECT_EQ(PopName(q), "a");
  q.Reorder(
      [](const QueuedPodInfo& a, const QueuedPodInfo& b) { return a.pod->name() > b.pod->name(); });
  EXPECT_EQ(q.CheckInvariants(), "");
  EXPECT_EQ(PopName(q), "d");
  q.Add(MakePod("e"));
  EXPECT_EQ(PopName(q), "e");
  q.Reorder({});  // Back to the default: priority, then timestamp.
  q.Add(MakePod("z", 5));
  EXPECT_EQ(PopName(q), "z");
  EXPECT_EQ(PopName(q), "c");
  EXPECT_EQ(PopName(q), "b");
  EXPECT_EQ(PopName(q), "");
}

TEST_F(QueueTest, BackoffDurationDoublesUpToTheCap) {
  struct Case {
    nanoseconds initial, max;
    std::vector<nanoseconds> want;  // For attempts 0, 1, 2, ...
  };
  const Case cases[] = {
      {seconds(1),
       seconds(10),
       {seconds(0), seconds(1), seconds(2), seconds(4), seconds(8), seconds(10), seconds(10)}},
      {seconds(3), seconds(20), {seconds(0), seconds(3), seconds(6), seconds(12), seconds(20)}},
      {seconds(5), seconds(5), {seconds(0), seconds(5), seconds(5)}},
  };
  for (const Case& c : cases) {
    QueueOptions o;
    o.pod_initial_backoff = c.initial;
    o.pod_max_backoff = c.max;
    for (size_t attempts = 0; attempts < c.want.size(); ++attempts) {
      EXPECT_EQ(BackoffDuration(o, static_cast<int>(attempts)), c.want[attempts])
          << "initial " << c.initial.count() << " attempts " << attempts;
    }
  }
  QueueOptions o;
  EXPECT_EQ(BackoffDuration(o, 1000), seconds(10)) << "no overflow on many attempts";
}

TEST_F(QueueTest, BackoffTimingWithInjectedClock) {
  SchedulingQueue q({}, Options());
  q.Add(MakePod("p"));
  const nanoseconds want[] = {seconds(1), seconds(2),  seconds(4),
                              seconds(8), seconds(10), seconds(10)};
  for (int attempt = 1; attempt <= 6; ++attempt) {
    auto info = q.TryPop();
    ASSERT_TRUE(info);
    EXPECT_EQ(info->attempts, attempt);
    clock_.Advance(milliseconds(123));  // The backoff counts from the failure, not the pop.
    ASSERT_EQ(q.AddUnschedulableIfNotPresent(*info, {}, {}, SCHEDHOST_ERROR),
              PodLocation::kBackoff);
    const nanoseconds d = want[attempt - 1];
    clock_.Advance(d - nanoseconds(1));
    q.FlushBackoffQCompleted();
    EXPECT_EQ(q.Where("uid-p"), PodLocation::kBackoff) << "attempt " << attempt;
    clock_.Advance(nanoseconds(1));
    q.FlushBackoffQCompleted();
    EXPECT_EQ(q.Where("uid-p"), PodLocation::kActive) << "attempt " << attempt;
    EXPECT_EQ(q.CheckInvariants(), "");
  }
}

TEST_F(QueueTest, BackoffQueueReleasesOnlyExpiredPods) {
  SchedulingQueue q({}, Options());
  AddAll(q, {MakePod("a"), MakePod("b"), MakePod("c")});
  const TimePoint start = clock_.Now();
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_EQ(PopAndFail(q, name, {}, SCHEDHOST_ERROR), PodLocation::kBackoff);
    clock_.Advance(milliseconds(100));  // a expires at start+1s, b at +1.1s, c at +1.2s.
  }
  clock_.Advance(start + milliseconds(1100) - clock_.Now());
  q.FlushBackoffQCompleted();
  EXPECT_EQ(q.Where("uid-a"), PodLocation::kActive);
  EXPECT_EQ(q.Where("uid-b"), PodLocation::kActive);
  EXPECT_EQ(q.Where("uid-c"), PodLocation::kBackoff);
  EXPECT_EQ(PopName(q), "a") << "the earlier failure sorts first";
  EXPECT_EQ(PopName(q), "b");
  EXPECT_EQ(q.CheckInvariants(), "");
}

TEST_F(QueueTest, LeftoverFlushAfterFiveMinutes) {
  auto q = SkipQueue(Options());
  q->Add(MakePod("old"));
  ASSERT_EQ(PopAndFail(*q, "old"), PodLocation::kUnschedulable);
  clock_.Advance(minutes(4));
  q->Add(MakePod("young"));
  ASSERT_EQ(PopAndFail(*q, "young"), PodLocation::kUnschedulable);
  clock_.Advance(minutes(1));
  q->FlushUnschedulablePodsLeftover();  // Exactly 5 minutes: not yet.
  EXPECT_EQ(q->Where("uid-old"), PodLocation::kUnschedulable);
  clock_.Advance(nanoseconds(1));
  q->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(q->Where("uid-old"), PodLocation::kActive) << "backoff expired long ago";
  EXPECT_EQ(q->Where("uid-young"), PodLocation::kUnschedulable);
  EXPECT_EQ(q->CheckInvariants(), "");
}

TEST_F(QueueTest, LeftoverFlushRespectsBackoff) {
  QueueOptions o = Options();
  o.pod_max_in_unschedulable = seconds(2);
  o.pod_initial_backoff = seconds(10);
  o.pod_max_backoff = seconds(10);
  auto q = SkipQueue(o);
  q->Add(MakePod("p"));
  ASSERT_EQ(PopAndFail(*q, "p"), PodLocation::kUnschedulable);
  clock_.Advance(seconds(3));
  q->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(q->Where("uid-p"), PodLocation::kBackoff);
  clock_.Advance(seconds(7));
  q->FlushBackoffQCompleted();
  EXPECT_EQ(q->Where("uid-p"), PodLocation::kActive);
}

}  // namespace
}  // namespace schedhost::queue
