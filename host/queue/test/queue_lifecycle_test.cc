// SchedulingQueue bookkeeping: Add / Update / Delete in every place, Pop / Done, refusals that
// change nothing, counts and the nominator calls the queue makes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <thread>

#include "host/queue/pod_heap.h"
#include "host/queue/scheduling_queue.h"
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
using testing::TestPod;
using testing::With;

TEST(PluginSetTest, NamesOrderByTextAndCompareByName) {
  // Interned in the opposite order of their text: the set still iterates alphabetically.
  const PluginName late("plugin-set-test-zz");
  const PluginName early("plugin-set-test-aa");
  PluginSet set = {late, std::string("plugin-set-test-mm"), early, "plugin-set-test-zz"};
  ASSERT_EQ(set.size(), 3u);
  std::vector<std::string> names;
  for (const PluginName p : set) names.emplace_back(p.view());
  EXPECT_EQ(names, (std::vector<std::string>{"plugin-set-test-aa", "plugin-set-test-mm",
                                             "plugin-set-test-zz"}));
  EXPECT_EQ(set.count(std::string("plugin-set-test-mm")), 1u);
  EXPECT_EQ(set.count("plugin-set-test-absent"), 0u);
  EXPECT_TRUE(PluginName("NodeResourcesFit") == PluginName(std::string_view("NodeResourcesFit")));
  EXPECT_EQ(std::string_view(early), "plugin-set-test-aa");
}

TEST(PluginSetTest, CopiesMovesAndSwapsInPlaceAndGrownSets) {
  const PluginSet small = {"plugin-set-test-b", "plugin-set-test-a"};
  PluginSet grown = {"plugin-set-test-e", "plugin-set-test-d", "plugin-set-test-c",
                     "plugin-set-test-b", "plugin-set-test-a"};
  EXPECT_FALSE(grown.insert("plugin-set-test-c"));
  EXPECT_TRUE(grown.insert("plugin-set-test-0"));
  ASSERT_EQ(grown.size(), 6u);
  EXPECT_EQ(grown.begin()->view(), "plugin-set-test-0");
  EXPECT_TRUE(grown.contains("plugin-set-test-e"));

  PluginSet copy = grown;  // a heap block of its own
  EXPECT_EQ(copy, grown);
  copy.insert("plugin-set-test-f");
  EXPECT_EQ(grown.size(), 6u);
  copy = small;  // grown to in place
  EXPECT_EQ(copy, small);
  EXPECT_FALSE(copy == grown);
  copy = grown;  // in place to grown
  EXPECT_EQ(copy, grown);

  PluginSet moved = std::move(copy);
  EXPECT_EQ(moved, grown);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from set is empty
  PluginSet other = small;
  other.swap(moved);
  EXPECT_EQ(other, grown);
  EXPECT_EQ(moved, small);
  other.clear();
  EXPECT_TRUE(other.empty());
  EXPECT_TRUE(other.insert("plugin-set-test-z"));
  EXPECT_EQ(other.size(), 1u);
}

TEST(PodHeapTest, ADrainedHeapGivesBackItsArrayAndStaysOrdered) {
  // Priority order; pods pushed in a scrambled order and removed from the top and the middle.
  internal::PodHeap heap([](const internal::Entry& a, const internal::Entry& b) {
    return a.info.pod->priority() > b.info.pod->priority();
  });
  constexpr int kPods = 10000;
  for (int i = 0; i < kPods; ++i) {
    auto e = std::make_unique<internal::Entry>();
    const int p = (i * 7919) % kPods;
    e->info.pod = MakePod(TestPod{.name = "p" + std::to_string(p), .priority = p});
    heap.Push(std::move(e));
  }
  const size_t peak = heap.capacity();
  ASSERT_GE(peak, static_cast<size_t>(kPods));
  for (int p = 0; p < 1000; p += 2) ASSERT_NE(heap.Remove("uid-p" + std::to_string(p)), nullptr);
  int last = kPods;
  while (heap.size() > 100) {
    auto e = heap.Pop();
    ASSERT_LE(e->info.pod->priority(), last);
    last = e->info.pod->priority();
  }
  EXPECT_LT(heap.capacity(), peak / 4);
  EXPECT_EQ(heap.Check("heap"), "");
  while (!heap.empty()) {
    auto e = heap.Pop();
    ASSERT_LE(e->info.pod->priority(), last);
    last = e->info.pod->priority();
  }
  EXPECT_EQ(heap.Get("uid-p1"), nullptr);
}

TEST(PodHeapTest, FindsAnEntryByUidAfterItsPodWasReplacedAndTheOldOneFreed) {
  // The index keeps no key of its own: it reads the uid from the entry's current pod.
  internal::PodHeap heap([](const internal::Entry& a, const internal::Entry& b) {
    return a.info.pod->priority() > b.info.pod->priority();
  });
  for (int i = 0; i < 50; ++i) {
    auto e = std::make_unique<internal::Entry>();
    e->info.pod = MakePod(TestPod{.name = "p" + std::to_string(i), .priority = i});
    heap.Push(std::move(e));
  }
  internal::Entry* e = heap.Get("uid-p7");
  ASSERT_NE(e, nullptr);
  std::weak_ptr<const model::Pod> old = e->info.pod;
  e->info.pod = MakePod(TestPod{.name = "p7", .priority = 100});  // same uid, a new object
  ASSERT_TRUE(old.expired());
  heap.Fix("uid-p7");
  EXPECT_EQ(heap.Check("heap"), "");
  EXPECT_EQ(heap.Get("uid-p7"), e);
  EXPECT_EQ(heap.Top(), e);
  auto removed = heap.Remove("uid-p7");
  EXPECT_EQ(removed.get(), e);
  EXPECT_EQ(heap.Get("uid-p7"), nullptr);
  EXPECT_EQ(heap.size(), 49U);
  EXPECT_EQ(heap.Check("heap"), "");
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
      {"active", PodLocation::kActive},         {"backoff", PodLocation::kBackoff},
      {"unsched", PodLocation::kUnschedulable}, {"gated", PodLocation::kGated},
      {"flight", PodLocation::kInFlight},       {"unknown", PodLocation::kNone},
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
      {"spec change while backing off",
       [](model::PodData& d) {
         d.metadata.labels = {{"a", "b"}};
       },
       milliseconds(500), PodLocation::kBackoff},
      {"spec change after backoff",
       [](model::PodData& d) {
         d.metadata.labels = {{"a", "b"}};
       },
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

// The queue's uid indexes view the uid inside the queued object instead of copying it. An update
// that leaves the pod where it is replaces the object: the indexes must follow, since nothing
// keeps the old object alive (under ASan a stale key would be a use after free).
TEST_F(QueueTest, UpdatesInPlaceLetTheOldObjectGo) {
  const auto status_change = [](model::PodData& d) { d.status.nominated_node_name = "n"; };
  const auto spec_change = [](model::PodData& d) { d.metadata.labels = {{"a", "b"}}; };
  auto q = SkipQueue(Options());
  // Each step: the location the pod is in, then an update that keeps it there.
  // In flight, the update is also kept as an event for the flight's end, which holds the old
  // object until then.
  auto update_in_place = [&](PodLocation where, const char* step, bool old_released = true) {
    ASSERT_EQ(q->Where("uid-p"), where) << step;
    std::weak_ptr<const model::Pod> old;
    for (const PendingPod& p : q->PendingPods()) old = p.pod;
    ASSERT_FALSE(old.expired()) << step;
    auto newer = With(old.lock(), status_change);
    EXPECT_EQ(q->Update(nullptr, newer), where) << step;
    newer.reset();
    if (old_released) {
      EXPECT_TRUE(old.expired()) << step << ": the queue still holds the old object";
    }
    EXPECT_EQ(q->CheckInvariants(), "") << step;
    EXPECT_EQ(q->Where("uid-p"), where) << step;
  };
  q->Add(MakePod("p"));
  update_in_place(PodLocation::kActive, "active");
  std::optional<QueuedPodInfo> info = q->TryPop();
  info->pod.reset();  // the scheduler's copy of the popped object
  update_in_place(PodLocation::kInFlight, "in flight", false);
  info->pod = q->PendingPods().front().pod;
  ASSERT_EQ(q->AddUnschedulableIfNotPresent(*info, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE),
            PodLocation::kUnschedulable);
  info.reset();
  update_in_place(PodLocation::kUnschedulable, "unschedulable");
  // A spec change while backing off moves it to backoffQ; updates there are in place again.
  auto current = q->PendingPods().front().pod;
  EXPECT_EQ(q->Update(nullptr, With(current, spec_change)), PodLocation::kBackoff);
  current.reset();
  update_in_place(PodLocation::kBackoff, "backoff");
  current = q->PendingPods().front().pod;
  EXPECT_EQ(q->Delete(*current), PodLocation::kBackoff);
  EXPECT_EQ(q->Where("uid-p"), PodLocation::kNone);
  EXPECT_EQ(q->CheckInvariants(), "");
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
       [](model::PodData& d) {
         d.metadata.labels = {{"a", "b"}};
       },
       PodLocation::kBackoff},
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
  for (const PendingPod& p : q.PendingPods()) got[std::string(p.pod->name())] = p.where;
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
  auto with_status =
      With(relabeled, [](model::PodData& d) { d.status.nominated_node_name = "n2"; });
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
