// Event-driven requeueing: queueing hints per rejecting plugin, Pending plugins skipping
// backoff, in-flight event replay, PreEnqueue gating and un-gating, and callbacks that call
// back into the queue (they run without its lock).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "host/queue/scheduling_queue.h"
#include "host/queue/test/queue_test_util.h"

namespace schedhost::queue {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::MakePod;
using testing::TestPod;
using testing::With;

// A queue whose hints come from a per-plugin table (plugins not in it answer Queue, like an
// unknown plugin) and whose PreEnqueue gates pods with scheduling gates, plus pods while
// `quota_full` is set (as plugin "Quota").
class EventsTest : public ::testing::Test {
 protected:
  EventsTest() {
    QueueCallbacks cb;
    cb.hint = [this](std::string_view plugin, const model::Pod& pod, const ClusterEvent& ev) {
      calls_.push_back(std::string(plugin) + "/" + std::string(pod.name()) + "/" + ev.label);
      auto it = hints_.find(std::string(plugin));
      return it == hints_.end() || it->second(ev);
    };
    cb.interest = [this](const ClusterEvent&) {
      ++interest_calls_;
      EventInterest i;
      if (!deaf_.empty()) i.deaf.emplace_back("default-scheduler", deaf_);
      return i;
    };
    cb.pre_enqueue = [this](const model::Pod& pod) {
      ++pre_enqueue_calls_;
      if (pre_enqueue_hook_) pre_enqueue_hook_();
      if (!pod.data().spec.scheduling_gates.empty()) {
        return PreEnqueueResult{false, "SchedulingGates", "waiting for gates"};
      }
      if (quota_full_) return PreEnqueueResult{false, "Quota", "quota exceeded"};
      return PreEnqueueResult{};
    };
    QueueOptions o;
    o.clock = clock_.AsClock();
    q_ = std::make_unique<SchedulingQueue>(cb, o);
  }

  // Sets plugin's hint to answer `queue` for every event.
  void Hint(const std::string& plugin, bool queue) {
    hints_[plugin] = [queue](const ClusterEvent&) { return queue; };
  }
  // Adds pod `name`, pops it and fails it with the given plugins.
  PodLocation AddPopFail(const std::string& name, PluginSet rejectors, PluginSet pending = {},
                         schedhost_code code = SCHEDHOST_UNSCHEDULABLE) {
    q_->Add(MakePod(name));
    clock_.Advance(milliseconds(1));
    auto info = q_->TryPop();
    EXPECT_TRUE(info && info->pod->name() == name);
    return q_->AddUnschedulableIfNotPresent(*info, std::move(rejectors), std::move(pending), code);
  }
  ClusterEvent NodeAdd() { return MakeNodeAddEvent(nullptr); }

  testing::FakeClock clock_;
  std::map<std::string, std::function<bool(const ClusterEvent&)>> hints_;
  std::vector<std::string> calls_;
  std::vector<std::string> deaf_;  // plugins cb.interest reports as registered for nothing
  int interest_calls_ = 0;
  int pre_enqueue_calls_ = 0;
  bool quota_full_ = false;
  std::function<void()> pre_enqueue_hook_;
  std::unique_ptr<SchedulingQueue> q_;
};

TEST_F(EventsTest, HintsDecideWhichUnschedulablePodsMove) {
  struct Case {
    const char* name;
    PluginSet rejectors;
    std::map<std::string, bool> hints;
    std::chrono::nanoseconds wait;  // Between the failure and the event.
    PodLocation want;
  };
  const Case cases[] = {
      {"queue, still backing off", {"A"}, {{"A", true}}, milliseconds(10), PodLocation::kBackoff},
      {"queue, backoff over", {"A"}, {{"A", true}}, seconds(1), PodLocation::kActive},
      {"skip", {"A"}, {{"A", false}}, seconds(2), PodLocation::kUnschedulable},
      {"any rejector may queue",
       {"A", "B"},
       {{"A", false}, {"B", true}},
       seconds(2),
       PodLocation::kActive},
      {"all rejectors skip",
       {"A", "B"},
       {{"A", false}, {"B", false}},
       seconds(2),
       PodLocation::kUnschedulable},
      {"unknown plugin queues", {"Unknown"}, {}, seconds(2), PodLocation::kActive},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    hints_.clear();
    for (const auto& [plugin, queue] : c.hints) Hint(plugin, queue);
    const std::string name = std::string("p-") + std::to_string(&c - cases);
    ASSERT_EQ(AddPopFail(name, c.rejectors), PodLocation::kUnschedulable);
    clock_.Advance(c.wait);
    q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
    EXPECT_EQ(q_->Where("uid-" + name), c.want);
    EXPECT_EQ(q_->CheckInvariants(), "");
    q_->Delete(*MakePod(name));
  }
}

TEST_F(EventsTest, PodsOnlyDeafPluginsRejectedAreNotAskedAbout) {
  deaf_ = {"Deaf"};
  Hint("Deaf", true);  // would queue if asked: being skipped is what keeps the pod parked
  ASSERT_EQ(AddPopFail("deaf-only", {"Deaf"}), PodLocation::kUnschedulable);
  ASSERT_EQ(AddPopFail("mixed", {"Deaf", "Other"}), PodLocation::kUnschedulable);
  ASSERT_EQ(AddPopFail("no-plugin", {}, {}, SCHEDHOST_ERROR), PodLocation::kBackoff);
  clock_.Advance(seconds(2));
  calls_.clear();
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(interest_calls_, 1);  // once per event, not per pod
  EXPECT_EQ(q_->Where("uid-deaf-only"), PodLocation::kUnschedulable);
  EXPECT_EQ(q_->Where("uid-mixed"), PodLocation::kActive);
  for (const std::string& call : calls_)
    EXPECT_EQ(call.find("/deaf-only/"), std::string::npos) << call;
  EXPECT_EQ(q_->CheckInvariants(), "");
  // A wildcard event (a flush) asks nobody about interest and moves every parked pod.
  q_->MoveAllToActiveOrBackoffQueue(MakeWildcardEvent("test"));
  EXPECT_EQ(interest_calls_, 1);
  EXPECT_NE(q_->Where("uid-deaf-only"), PodLocation::kUnschedulable);
}

TEST(EventInterestTest, MayMatterUnlessEveryRejectorIsDeafInThePodsProfile) {
  auto pod = MakePod("p");
  EventInterest interest;
  interest.deaf.emplace_back("default-scheduler", std::vector<std::string>{"A", "B"});
  interest.deaf.emplace_back("other-profile", std::vector<std::string>{"C"});
  QueuedPodInfo info;
  info.pod = pod;
  EXPECT_TRUE(interest.MayMatter(info));  // no plugin to go by: an error, retried
  info.unschedulable_plugins = {"A", "B"};
  EXPECT_FALSE(interest.MayMatter(info));
  info.unschedulable_plugins = {"A", "C"};  // C is deaf only in another profile
  EXPECT_TRUE(interest.MayMatter(info));
  info.unschedulable_plugins = {"A"};
  info.pending_plugins = {"D"};
  EXPECT_TRUE(interest.MayMatter(info));
  EXPECT_TRUE(EventInterest{}.MayMatter(info));  // the pod's profile not listed
}

TEST_F(EventsTest, PreCheckLeavesPodsOutOfTheMove) {
  ASSERT_EQ(AddPopFail("keep", {"A"}), PodLocation::kUnschedulable);
  ASSERT_EQ(AddPopFail("move", {"A"}), PodLocation::kUnschedulable);
  clock_.Advance(seconds(2));
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd(),
                                    [](const model::Pod& pod) { return pod.name() != "keep"; });
  EXPECT_EQ(q_->Where("uid-keep"), PodLocation::kUnschedulable);
  EXPECT_EQ(q_->Where("uid-move"), PodLocation::kActive);
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, HintSeesPluginPodAndEvent) {
  Hint("A", false);
  Hint("B", false);
  AddPopFail("p", {"A", "B"});
  calls_.clear();
  q_->AssignedPodAdded(MakePod("other"));
  q_->AssignedPodUpdated(MakePod("other"), MakePod("other"));
  q_->AssignedPodDeleted(MakePod("other"));
  EXPECT_THAT(calls_, ::testing::ElementsAre("A/p/AssignedPodAdd", "B/p/AssignedPodAdd",
                                             "A/p/AssignedPodUpdate", "B/p/AssignedPodUpdate",
                                             "A/p/AssignedPodDelete", "B/p/AssignedPodDelete"));
}

TEST_F(EventsTest, PendingPluginsSkipBackoff) {
  struct Case {
    const char* name;
    PluginSet rejectors, pending;
    schedhost_code code;
    std::map<std::string, bool> hints;
    PodLocation want;  // Right after the event, with the backoff still running.
  };
  const Case cases[] = {
      {"pending plugin queues: straight to activeQ",
       {},
       {"P"},
       SCHEDHOST_UNSCHEDULABLE,
       {{"P", true}},
       PodLocation::kActive},
      {"Pending code with the plugin as rejector",
       {"P"},
       {},
       SCHEDHOST_PENDING,
       {{"P", true}},
       PodLocation::kActive},
      {"pending plugin skips",
       {},
       {"P"},
       SCHEDHOST_UNSCHEDULABLE,
       {{"P", false}},
       PodLocation::kUnschedulable},
      {"only the unschedulable plugin queues",
       {"U"},
       {"P"},
       SCHEDHOST_UNSCHEDULABLE,
       {{"P", false}, {"U", true}},
       PodLocation::kBackoff},
      {"both queue: pending wins",
       {"U"},
       {"P"},
       SCHEDHOST_UNSCHEDULABLE,
       {{"P", true}, {"U", true}},
       PodLocation::kActive},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    hints_.clear();
    for (const auto& [plugin, queue] : c.hints) Hint(plugin, queue);
    const std::string name = std::string("p-") + std::to_string(&c - cases);
    ASSERT_EQ(AddPopFail(name, c.rejectors, c.pending, c.code), PodLocation::kUnschedulable);
    q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
    EXPECT_EQ(q_->Where("uid-" + name), c.want);
    q_->Delete(*MakePod(name));
  }
}

TEST_F(EventsTest, ErrorsGoToBackoffWhateverThePlugins) {
  Hint("A", false);
  EXPECT_EQ(AddPopFail("err", {"A"}, {}, SCHEDHOST_ERROR), PodLocation::kBackoff);
  EXPECT_EQ(AddPopFail("none", {}, {}, SCHEDHOST_UNSCHEDULABLE), PodLocation::kBackoff)
      << "a failure no plugin explains is retried";
}

TEST_F(EventsTest, EventsDuringFlightAreReplayedOnFailure) {
  struct Case {
    const char* name;
    bool event_before_pop;
    bool event_during_flight;
    PluginSet rejectors, pending;
    bool hint;
    PodLocation want;
  };
  const Case cases[] = {
      {"queue event in flight -> backoff", false, true, {"A"}, {}, true, PodLocation::kBackoff},
      {"skip event in flight -> unschedulable",
       false,
       true,
       {"A"},
       {},
       false,
       PodLocation::kUnschedulable},
      {"no event -> unschedulable", false, false, {"A"}, {}, true, PodLocation::kUnschedulable},
      {"event before the pop is not replayed",
       true,
       false,
       {"A"},
       {},
       true,
       PodLocation::kUnschedulable},
      {"pending plugin's queue in flight -> activeQ",
       false,
       true,
       {},
       {"A"},
       true,
       PodLocation::kActive},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Hint("A", c.hint);
    const std::string name = std::string("p-") + std::to_string(&c - cases);
    q_->Add(MakePod(name));
    if (c.event_before_pop) {
      q_->Add(MakePod("k0", 100));
      q_->TryPop();  // k0 in flight: the event below is recorded, but before `name`'s flight.
      q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
    }
    auto info = q_->TryPop();
    ASSERT_EQ(info->pod->name(), name);
    if (c.event_during_flight) q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
    EXPECT_EQ(
        q_->AddUnschedulableIfNotPresent(*info, c.rejectors, c.pending, SCHEDHOST_UNSCHEDULABLE),
        c.want);
    EXPECT_EQ(q_->CheckInvariants(), "");
    q_->Done("uid-k0");
    q_->Delete(*MakePod(name));
  }
}

TEST_F(EventsTest, EveryInFlightPodSeesTheEvent) {
  Hint("A", true);
  q_->Add(MakePod("x", 2));
  q_->Add(MakePod("y", 1));
  auto x = q_->TryPop();
  auto y = q_->TryPop();
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->AddUnschedulableIfNotPresent(*x, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE),
            PodLocation::kBackoff);
  EXPECT_EQ(q_->AddUnschedulableIfNotPresent(*y, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE),
            PodLocation::kBackoff);
  EXPECT_EQ(q_->CheckInvariants(), "") << "events are dropped once no pod is in flight";
}

TEST_F(EventsTest, EventArrivingWhileHintsRunIsReplayedToo) {
  // The hint for the first event fires a second event from inside the callback, i.e. while the
  // replay runs without the lock; the second one must be evaluated as well.
  bool fired = false;
  hints_["A"] = [&](const ClusterEvent& ev) {
    if (ev.label == "NodeAdd" && !fired) {
      fired = true;
      q_->MoveAllToActiveOrBackoffQueue(MakeNodeDeleteEvent(nullptr));
      return false;
    }
    return ev.label == "NodeDelete";
  };
  q_->Add(MakePod("p"));
  auto info = q_->TryPop();
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->AddUnschedulableIfNotPresent(*info, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE),
            PodLocation::kBackoff);
  EXPECT_TRUE(fired);
  EXPECT_THAT(calls_, ::testing::ElementsAre("A/p/NodeAdd", "A/p/NodeDelete"));
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, GatedPodsWaitAndUpdatesUngateThem) {
  auto pod = MakePod(TestPod{.name = "g", .gates = {"example.com/wait"}});
  EXPECT_EQ(q_->Add(pod), PodLocation::kGated);
  EXPECT_EQ(q_->Counts().gated, 1u);
  EXPECT_EQ(q_->Counts().unschedulable, 0u);
  auto pending = q_->PendingPods();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].where, PodLocation::kGated);
  EXPECT_EQ(q_->nominator().Size(), 0u);
  // Still gated after an unrelated spec change (PreEnqueue runs again).
  auto relabeled = With(pod, [](model::PodData& d) { d.metadata.labels = {{"a", "b"}}; });
  const int calls = pre_enqueue_calls_;
  EXPECT_EQ(q_->Update(pod, relabeled), PodLocation::kGated);
  EXPECT_EQ(pre_enqueue_calls_, calls + 1);
  // A status-only update does not even ask.
  auto status = With(relabeled, [](model::PodData& d) { d.status.nominated_node_name = "n"; });
  EXPECT_EQ(q_->Update(relabeled, status), PodLocation::kGated);
  EXPECT_EQ(pre_enqueue_calls_, calls + 1);
  // Removing the gates admits it straight to activeQ: gated pods never back off.
  auto ungated = With(status, [](model::PodData& d) { d.spec.scheduling_gates.clear(); });
  EXPECT_EQ(q_->Update(status, ungated), PodLocation::kActive);
  auto info = q_->TryPop();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->attempts, 1);
  EXPECT_FALSE(info->gated);
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, GatedByAPluginReleasedThroughItsHint) {
  quota_full_ = true;
  ASSERT_EQ(q_->Add(MakePod("q")), PodLocation::kGated);
  Hint("Quota", false);
  int calls = pre_enqueue_calls_;
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->Where("uid-q"), PodLocation::kGated);
  EXPECT_EQ(pre_enqueue_calls_, calls) << "Skip does not re-run PreEnqueue";
  Hint("Quota", true);
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->Where("uid-q"), PodLocation::kGated) << "PreEnqueue still rejects";
  EXPECT_EQ(pre_enqueue_calls_, calls + 1);
  quota_full_ = false;
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->Where("uid-q"), PodLocation::kActive);
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, PreEnqueueRunsAgainOnTheWayBackToActiveQ) {
  EXPECT_EQ(AddPopFail("b", {}, {}, SCHEDHOST_ERROR), PodLocation::kBackoff);
  quota_full_ = true;
  clock_.Advance(seconds(1));
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(q_->Where("uid-b"), PodLocation::kGated);
  quota_full_ = false;
  clock_.Advance(std::chrono::minutes(6));
  q_->FlushUnschedulablePodsLeftover();  // The timeout re-checks gated pods as well.
  EXPECT_EQ(q_->Where("uid-b"), PodLocation::kActive);
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, StaleMoveIsDroppedWhenThePodChangedMeanwhile) {
  // While the hint for an event runs (without the lock), the pod is updated and moved by
  // someone else; the event's decision must not move it a second time.
  auto pod = MakePod("p");
  q_->Add(pod);
  auto info = q_->TryPop();
  Hint("A", false);
  q_->AddUnschedulableIfNotPresent(*info, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE);
  clock_.Advance(seconds(2));
  hints_["A"] = [&](const ClusterEvent&) {
    q_->Update(pod, With(pod, [](model::PodData& d) { d.metadata.labels = {{"x", "y"}}; }));
    return true;
  };
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->Where("uid-p"), PodLocation::kActive);
  EXPECT_EQ(q_->Counts().active, 1u);
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, StaleMoveIsDroppedWhenThePodFailedAgainMeanwhile) {
  // Worse: during the hint the pod is retried and fails again (with another plugin), so it is
  // back where the event found it. The decision was about the old failure and must not apply.
  q_->Add(MakePod("p"));
  auto info = q_->TryPop();
  Hint("B", false);
  q_->AddUnschedulableIfNotPresent(*info, {"A"}, {}, SCHEDHOST_UNSCHEDULABLE);
  clock_.Advance(seconds(2));
  hints_["A"] = [&](const ClusterEvent&) {
    q_->MoveAllToActiveOrBackoffQueue(MakeWildcardEvent("Force"));  // p -> activeQ
    auto again = q_->TryPop();
    EXPECT_TRUE(again);
    if (again) q_->AddUnschedulableIfNotPresent(*again, {"B"}, {}, SCHEDHOST_UNSCHEDULABLE);
    return true;
  };
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(q_->Where("uid-p"), PodLocation::kUnschedulable);
  EXPECT_EQ(q_->CheckInvariants(), "");
}

TEST_F(EventsTest, CallbacksMayCallBackIntoTheQueue) {
  // PreEnqueue and hints run without the queue's lock, as the plugin ABI promises: calling the
  // queue from inside them must not deadlock.
  int seen = 0;
  hints_["A"] = [&](const ClusterEvent&) {
    seen += static_cast<int>(q_->Counts().unschedulable);
    return q_->Where("uid-p") == PodLocation::kUnschedulable;
  };
  pre_enqueue_hook_ = [&] { seen += static_cast<int>(q_->nominator().Size()) + 10; };
  AddPopFail("p", {"A"});
  clock_.Advance(seconds(2));
  q_->MoveAllToActiveOrBackoffQueue(NodeAdd());
  EXPECT_EQ(seen, 1 + 10 + 10) << "hint once, PreEnqueue at Add and on the move";
  EXPECT_EQ(q_->Where("uid-p"), PodLocation::kActive);
}

}  // namespace
}  // namespace schedhost::queue
