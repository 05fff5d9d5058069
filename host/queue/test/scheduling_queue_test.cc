// SchedulingQueue basics: ordering, backoff timing, the leftover flush, Add / Update / Delete in
// every place, Pop / Done, refusals, counts and the nominator calls the queue makes.
#include "host/queue/scheduling_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "host/queue/test/queue_test_util.h"

namespace schedhost::queue {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using testing::MakePod;
using testing::TestPod;
using testing::With;

class QueueTest : public ::testing::Test {
 protected:
  QueueOptions Options() {
    QueueOptions o;
    o.clock = clock_.AsClock();
    return o;
  }
  // Pops the first pod of `q` and returns its name ("" when activeQ is empty).
  static std::string PopName(SchedulingQueue& q) {
    auto info = q.TryPop();
    return info ? info->pod->name() : "";
  }
  // Pops `name` (which must be first) and fails it with `plugins` as rejectors.
  static PodLocation PopAndFail(SchedulingQueue& q, const std::string& name,
                                PluginSet plugins = {"NodeResourcesFit"},
                                schedhost_code code = SCHEDHOST_UNSCHEDULABLE) {
    auto info = q.TryPop();
    EXPECT_TRUE(info.has_value());
    if (!info) return PodLocation::kNone;
    EXPECT_EQ(info->pod->name(), name);
    return q.AddUnschedulableIfNotPresent(*info, std::move(plugins), {}, code);
  }
  // Adds `pods` in order, one millisecond apart, so their QueueSort order is defined.
  void AddAll(SchedulingQueue& q, std::initializer_list<std::shared_ptr<const model::Pod>> pods) {
    for (const auto& p : pods) {
      q.Add(p);
      clock_.Advance(milliseconds(1));
    }
  }
  // A queue whose hints always answer Skip, so failed pods stay unschedulable.
  std::unique_ptr<SchedulingQueue> SkipQueue(QueueOptions o) {
    QueueCallbacks cb;
    cb.hint = [](std::string_view, const model::Pod&, const ClusterEvent&) { return false; };
    return std::make_unique<SchedulingQueue>(cb, std::move(o));
  }

  testing::FakeClock clock_;
};

TEST_F(QueueTest, OptionsAreValidated) {
  struct Case {
    const char* name;
    nanoseconds initial, max, leftover;
    const char* error;  // nullptr: valid.
  };
  const Case cases[] = {
      {"defaults", seconds(1), seconds(10), minutes(5), nullptr},
      {"equal initial and max", seconds(2), seconds(2), minutes(5), nullptr},
      {"zero initial", nanoseconds(0), seconds(10), minutes(5), "pod_initial_backoff must be positive"},
      {"negative initial", seconds(-1), seconds(10), minutes(5), "pod_initial_backoff"},
      {"max below initial", seconds(5), seconds(2), minutes(5), "must not be below pod_initial_backoff"},
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
    while (auto info = q.TryPop()) got.push_back(info->pod->name());
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
  q.Reorder([](const QueuedPodInfo& a, const QueuedPodInfo& b) {
    return a.pod->name() > b.pod->name();
  });
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
      {seconds(1), seconds(10),
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
  const nanoseconds want[] = {seconds(1), seconds(2), seconds(4), seconds(8), seconds(10),
                              seconds(10)};
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

TEST_F(QueueTest, AddRefusesBadPodsAndChangesNothing) {
  SchedulingQueue q({}, Options());
  AddAll(q, {MakePod("queued"), MakePod("flying")});
  ASSERT_TRUE(q.TryPop());  // "queued" is in flight now (it came first).
  auto bound = With(MakePod("bound"), [](model::PodData& d) { d.spec.node_name = "n1"; });
  struct Case {
    const char* name;
    std::shared_ptr<const model::Pod> pod;
    const char* error;
  };
  const Case cases[] = {
      {"null", nullptr, "the pod is null"},
      {"bound", bound, "is bound to node n1"},
      {"already in activeQ", MakePod("flying"), "already queued (active)"},
      {"already in flight", MakePod("queued"), "already queued (in_flight)"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT([&] { q.Add(c.pod); }, ::testing::ThrowsMessage<QueueError>(HasSubstr(c.error)))
        << c.name;
  }
  QueueCounts counts = q.Counts();
  EXPECT_EQ(counts.active, 1u);
  EXPECT_EQ(counts.in_flight, 1u);
  EXPECT_EQ(q.CheckInvariants(), "");
}

TEST_F(QueueTest, DeleteFromEveryPlace) {
  QueueCallbacks cb;
  cb.pre_enqueue = [](const model::Pod& p) {
    return p.data().spec.scheduling_gates.empty() ? PreEnqueueResult{}
                                                  : PreEnqueueResult{false, "Gates", "gated"};
  };
  cb.hint = [](std::string_view, const model::Pod&, const ClusterEvent&) { return false; };
  SchedulingQueue q(cb, Options());
  AddAll(q, {MakePod("flight"), MakePod("unsched"), MakePod("backoff"), MakePod("active"),
             MakePod(TestPod{.name = "gated", .gates = {"g"}})});
  auto flight = q.TryPop();
  ASSERT_EQ(PopAndFail(q, "unsched"), PodLocation::kUnschedulable);
  ASSERT_EQ(PopAndFail(q, "backoff", {}, SCHEDHOST_ERROR), PodLocation::kBackoff);
  const std::pair<const char*, PodLocation> cases[] = {
      {"active", PodLocation::kActive},
      {"backoff", PodLocation::kBackoff},
      {"unsched", PodLocation::kUnschedulable},
      {"gated", PodLocation::kGated},
      {"flight", PodLocation::kInFlight},
      {"unknown", PodLocation::kNone},
  };
  for (const auto& [name, where] : cases) {
    EXPECT_EQ(q.Delete(*MakePod(name)), where) << name;
    EXPECT_EQ(q.CheckInvariants(), "") << name;
  }
  // A pod deleted in flight finishes its cycle but is not requeued.
  EXPECT_EQ(q.Where("uid-flight"), PodLocation::kInFlight);
  EXPECT_EQ(q.AddUnschedulableIfNotPresent(*flight, {"X"}, {}, SCHEDHOST_UNSCHEDULABLE),
            PodLocation::kNone);
  EXPECT_EQ(q.Where("uid-flight"), PodLocation::kNone);
  QueueCounts c = q.Counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated + c.in_flight, 0u);
  EXPECT_EQ(q.CheckInvariants(), "");
}

TEST_F(QueueTest, PopBlocksUntilAddAndCloseWakesIt) {
  SchedulingQueue q({}, Options());
  auto popped = std::async(std::launch::async, [&] { return q.Pop(); });
  EXPECT_EQ(popped.wait_for(milliseconds(50)), std::future_status::timeout);
  q.Add(MakePod("p"));
  auto info = popped.get();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->pod->name(), "p");
  EXPECT_EQ(info->attempts, 1);

  auto waiting = std::async(std::launch::async, [&] { return q.Pop(); });
  EXPECT_EQ(waiting.wait_for(milliseconds(50)), std::future_status::timeout);
  q.Close();
  EXPECT_FALSE(waiting.get().has_value());
  q.Add(MakePod("late"));
  EXPECT_FALSE(q.Pop().has_value()) << "a closed queue pops nothing";
  EXPECT_FALSE(q.TryPop().has_value());
}

TEST_F(QueueTest, PopAndDoneTrackTheFlight) {
  SchedulingQueue q({}, Options());
  q.Add(MakePod("p"));
  EXPECT_FALSE(SchedulingQueue({}, Options()).TryPop().has_value());
  const TimePoint added = clock_.Now();
  clock_.Advance(seconds(3));
  auto info = q.TryPop();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->attempts, 1);
  EXPECT_EQ(info->timestamp, added);
  EXPECT_EQ(info->initial_attempt_timestamp, added);
  EXPECT_EQ(q.Where("uid-p"), PodLocation::kInFlight);
  EXPECT_EQ(q.Counts().in_flight, 1u);
  q.Done("uid-p");  // Bound.
  EXPECT_EQ(q.Where("uid-p"), PodLocation::kNone);
  q.Done("uid-p");  // Idempotent.
  EXPECT_THAT([&] { q.AddUnschedulableIfNotPresent(*info, {"X"}, {}, SCHEDHOST_UNSCHEDULABLE); },
              ::testing::ThrowsMessage<QueueError>(HasSubstr("is not in flight")));
  EXPECT_EQ(q.CheckInvariants(), "");
}

TEST_F(QueueTest, FailureRefreshesTimestampAndKeepsInitialAttempt) {
  auto q = SkipQueue(Options());
  q->Add(MakePod("p"));
  const TimePoint added = clock_.Now();
  auto info = q->TryPop();
  clock_.Advance(seconds(7));
  q->AddUnschedulableIfNotPresent(*info, {"A", "B"}, {}, SCHEDHOST_UNSCHEDULABLE);
  clock_.Advance(minutes(6));
  q->FlushUnschedulablePodsLeftover();
  auto again = q->TryPop();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->attempts, 2);
  EXPECT_EQ(again->timestamp, added + seconds(7));
  EXPECT_EQ(again->initial_attempt_timestamp, added);
  EXPECT_EQ(again->unschedulable_plugins, (PluginSet{"A", "B"}));
}

TEST_F(QueueTest, AddUnschedulableRefusals) {
  SchedulingQueue q({}, Options());
  AddAll(q, {MakePod("a"), MakePod("b")});
  auto a = q.TryPop();
  for (schedhost_code code : {SCHEDHOST_SUCCESS, SCHEDHOST_WAIT, SCHEDHOST_SKIP}) {
    EXPECT_THAT([&] { q.AddUnschedulableIfNotPresent(*a, {"X"}, {}, code); },
                ::testing::ThrowsMessage<QueueError>(HasSubstr("is not a scheduling failure")))
        << code;
  }
  EXPECT_EQ(q.Where("uid-a"), PodLocation::kInFlight) << "refusals change nothing";
  QueuedPodInfo b;
  b.pod = MakePod("b");
  EXPECT_THAT([&] { q.AddUnschedulableIfNotPresent(b, {"X"}, {}, SCHEDHOST_UNSCHEDULABLE); },
              ::testing::ThrowsMessage<QueueError>(HasSubstr("not in flight but already active")));
  EXPECT_THAT([&] { q.AddUnschedulableIfNotPresent({}, {}, {}, SCHEDHOST_ERROR); },
              ::testing::ThrowsMessage<QueueError>(HasSubstr("null")));
  EXPECT_EQ(q.CheckInvariants(), "");
}

TEST_F(QueueTest, UpdateInPlaceReordersActiveQ) {
  SchedulingQueue q({}, Options());
  auto a = MakePod("a", 1);
  q.Add(a);
  q.Add(MakePod("b", 2));
  EXPECT_EQ(q.Update(a, With(a, [](model::PodData& d) { d.spec.priority = 3; })),
            PodLocation::kActive);
  EXPECT_EQ(q.CheckInvariants(), "");
  auto first = q.TryPop();
  EXPECT_EQ(first->pod->name(), "a");
  EXPECT_EQ(first->pod->priority(), 3) << "the updated object is queued";
}

TEST_F(QueueTest, UpdateOfUnschedulablePod) {
  struct Case {
    const char* name;
    std::function<void(model::PodData&)> edit;
    nanoseconds wait;  // After the failure.
    PodLocation want;
  };
  const Case cases[] = {
      {"status only stays", [](model::PodData& d) { d.status.nominated_node_name = "n"; },
       seconds(5), PodLocation::kUnschedulable},
      {"spec change while backing off", [](model::PodData& d) { d.metadata.labels = {{"a", "b"}}; },
       milliseconds(500), PodLocation::kBackoff},
      {"spec change after backoff", [](model::PodData& d) { d.metadata.labels = {{"a", "b"}}; },
       seconds(1), PodLocation::kActive},
  };
  for (const Case& c : cases) {
    auto q = SkipQueue(Options());
    auto pod = MakePod("p");
    q->Add(pod);
    ASSERT_EQ(PopAndFail(*q, "p"), PodLocation::kUnschedulable);
    clock_.Advance(c.wait);
    auto updated = With(pod, c.edit);
    EXPECT_EQ(q->Update(pod, updated), c.want) << c.name;
    EXPECT_EQ(q->Where("uid-p"), c.want) << c.name;
    auto pending = q->PendingPods();
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].pod, updated) << c.name;
    EXPECT_EQ(q->CheckInvariants(), "") << c.name;
  }
}

TEST_F(QueueTest, UpdateOfUnknownPodAddsIt) {
  SchedulingQueue q({}, Options());
  EXPECT_EQ(q.Update(nullptr, MakePod("p")), PodLocation::kActive);
  EXPECT_EQ(q.Update(nullptr, MakePod("p", 4)), PodLocation::kActive) << "then updates it";
  EXPECT_EQ(q.TryPop()->pod->priority(), 4);
}

TEST_F(QueueTest, UpdateRefusals) {
  SchedulingQueue q({}, Options());
  auto p = MakePod("p");
  q.Add(p);
  EXPECT_THAT([&] { q.Update(p, MakePod("other")); },
              ::testing::ThrowsMessage<QueueError>(HasSubstr("are different pods")));
  EXPECT_THAT([&] { q.Update(p, With(p, [](model::PodData& d) { d.spec.node_name = "n"; })); },
              ::testing::ThrowsMessage<QueueError>(HasSubstr("use Delete")));
  EXPECT_THAT([&] { q.Update(p, nullptr); },
              ::testing::ThrowsMessage<QueueError>(HasSubstr("null")));
  EXPECT_EQ(q.TryPop()->pod, p) << "refusals change nothing";
}

TEST_F(QueueTest, UpdateDuringFlightIsUsedOnRequeue) {
  struct Case {
    const char* name;
    std::function<void(model::PodData&)> edit;
    PodLocation want;
  };
  const Case cases[] = {
      {"spec change: retried after backoff",
       [](model::PodData& d) { d.metadata.labels = {{"a", "b"}}; }, PodLocation::kBackoff},
      {"status change: still unschedulable",
       [](model::PodData& d) { d.status.nominated_node_name = "n"; }, PodLocation::kUnschedulable},
  };
  for (const Case& c : cases) {
    auto q = SkipQueue(Options());
    auto pod = MakePod("p");
    q->Add(pod);
    auto info = q->TryPop();
    auto updated = With(pod, c.edit);
    EXPECT_EQ(q->Update(pod, updated), PodLocation::kInFlight) << c.name;
    EXPECT_EQ(q->AddUnschedulableIfNotPresent(*info, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE), c.want)
        << c.name;
    auto pending = q->PendingPods();
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].pod, updated) << c.name;
    EXPECT_EQ(pending[0].attempts, 1) << c.name;
  }
}

TEST_F(QueueTest, CountsAndPendingPods) {
  QueueCallbacks cb;
  cb.pre_enqueue = [](const model::Pod& p) {
    return PreEnqueueResult{p.data().spec.scheduling_gates.empty(), "Gates", ""};
  };
  cb.hint = [](std::string_view, const model::Pod&, const ClusterEvent&) { return false; };
  SchedulingQueue q(cb, Options());
  AddAll(q, {MakePod("f"), MakePod("u"), MakePod("b"), MakePod("a1"), MakePod("a2"),
             MakePod(TestPod{.name = "g", .gates = {"x"}})});
  q.TryPop();
  PopAndFail(q, "u");
  PopAndFail(q, "b", {}, SCHEDHOST_ERROR);
  QueueCounts c = q.Counts();
  EXPECT_EQ(c.active, 2u);
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.unschedulable, 1u);
  EXPECT_EQ(c.gated, 1u);
  EXPECT_EQ(c.in_flight, 1u);
  std::map<std::string, PodLocation> got;
  for (const PendingPod& p : q.PendingPods()) got[p.pod->name()] = p.where;
  EXPECT_EQ(got, (std::map<std::string, PodLocation>{{"f", PodLocation::kInFlight},
                                                     {"u", PodLocation::kUnschedulable},
                                                     {"b", PodLocation::kBackoff},
                                                     {"a1", PodLocation::kActive},
                                                     {"a2", PodLocation::kActive},
                                                     {"g", PodLocation::kGated}}));
  EXPECT_EQ(LocationName(PodLocation::kInFlight), "in_flight");
  EXPECT_EQ(LocationName(PodLocation::kGated), "gated");
}

TEST_F(QueueTest, QueueKeepsTheNominatorInStep) {
  auto q = SkipQueue(Options());
  Nominator& n = q->nominator();
  // Add records a nomination the pod already carries (e.g. after a resync).
  auto carried = MakePod(TestPod{.name = "carried", .nominated_node = "n1"});
  q->Add(carried);
  EXPECT_EQ(n.NominatedNodeFor("uid-carried"), "n1");
  // A failed attempt after a successful PostFilter nominates the pod.
  auto pre = MakePod("preemptor", 100);
  q->Add(pre);
  auto info = q->TryPop();
  ASSERT_EQ(info->pod, pre);
  q->AddUnschedulableIfNotPresent(*info, {"NodeResourcesFit"}, {}, SCHEDHOST_UNSCHEDULABLE, "n2");
  EXPECT_EQ(n.NominatedNodeFor("uid-preemptor"), "n2");
  // An update that carries no nomination keeps the scheduler's.
  auto relabeled = With(pre, [](model::PodData& d) { d.metadata.labels = {{"x", "y"}}; });
  q->Update(pre, relabeled);
  EXPECT_EQ(n.NominatedNodeFor("uid-preemptor"), "n2");
  ASSERT_EQ(n.NominatedPodsForNode("n2").size(), 1u);
  EXPECT_EQ(n.NominatedPodsForNode("n2")[0], relabeled);
  // An update that clears the field clears the nomination.
  auto with_status = With(relabeled, [](model::PodData& d) { d.status.nominated_node_name = "n2"; });
  q->Update(relabeled, with_status);
  q->Update(with_status, relabeled);
  EXPECT_EQ(n.NominatedNodeFor("uid-preemptor"), "");
  // Delete drops the nomination.
  q->Delete(*carried);
  EXPECT_EQ(n.Size(), 0u);
  EXPECT_EQ(q->CheckInvariants(), "");
}

}  // namespace
}  // namespace schedhost::queue
