// WaitingPods (reference/004): Allow by every waiting plugin, Reject by any, per-plugin timers
// with upstream's timeout message, exactly one decision under races, and the ABI entries that
// reach waiting pods through id handles.
#include "host/framework/waiting_pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"

namespace schedhost::framework {
namespace {

using ::testing::ElementsAre;
using std::chrono::seconds;

// ManualClock: timers fire only when the test advances time.
class ManualClock : public Clock {
 public:
  TimePoint Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  TimerId AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) override {
    std::lock_guard lock(mu_);
    const TimerId id = next_++;
    timers_[id] = {now_ + delay, std::move(fn)};
    return id;
  }
  bool Cancel(TimerId id) override {
    std::lock_guard lock(mu_);
    return timers_.erase(id) > 0;
  }
  void Advance(std::chrono::nanoseconds d) {
    std::vector<std::function<void()>> due;
    {
      std::lock_guard lock(mu_);
      now_ += d;
      for (auto it = timers_.begin(); it != timers_.end();) {
        if (it->second.first <= now_) {
          due.push_back(std::move(it->second.second));
          it = timers_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& fn : due) fn();
  }
  size_t armed() const {
    std::lock_guard lock(mu_);
    return timers_.size();
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_{};
  TimerId next_ = 1;
  std::map<TimerId, std::pair<TimePoint, std::function<void()>>> timers_;
};

std::shared_ptr<const model::Pod> MakePod(const std::string& name) {
  model::PodData d;
  d.metadata.name = name;
  d.metadata.uid = "uid-" + name;
  return model::Pod::Make(std::move(d));
}

class WaitingPodsTest : public ::testing::Test {
 protected:
  WaitingPodsTest() { pods.SetClock(&clock); }

  std::shared_ptr<WaitingPod> Add(const std::string& name, const PermitWaits& waits) {
    return pods.Add(MakePod(name), waits, [this, name](const Status& s) {
      std::lock_guard lock(mu);
      decisions[name].push_back(s);
    });
  }
  std::vector<Status> DecisionsOf(const std::string& name) {
    std::lock_guard lock(mu);
    return decisions[name];
  }

  ManualClock clock;
  WaitingPods pods;
  std::mutex mu;
  std::map<std::string, std::vector<Status>> decisions;
};

TEST_F(WaitingPodsTest, AllowedByEveryWaitingPluginProceeds) {
  auto wp = Add("p", {{"A", seconds(5)}, {"B", seconds(10)}});
  EXPECT_THAT(wp->PendingPlugins(), ElementsAre("A", "B"));
  EXPECT_TRUE(wp->Allow("A"));
  EXPECT_TRUE(DecisionsOf("p").empty());
  EXPECT_EQ(pods.size(), 1u);
  EXPECT_TRUE(wp->Allow("B"));
  ASSERT_EQ(DecisionsOf("p").size(), 1u);
  EXPECT_TRUE(DecisionsOf("p")[0].ok());
  EXPECT_EQ(pods.size(), 0u);
  EXPECT_EQ(clock.armed(), 0u) << "every timer is disarmed";
  EXPECT_FALSE(wp->Allow("B")) << "the wait is over";
}

TEST_F(WaitingPodsTest, AllowStopsOnlyThatPluginsTimer) {
  auto wp = Add("p", {{"A", seconds(5)}, {"B", seconds(10)}});
  wp->Allow("A");
  clock.Advance(seconds(6));  // A's timer would have fired here
  EXPECT_TRUE(DecisionsOf("p").empty());
  clock.Advance(seconds(4));  // B's fires
  ASSERT_EQ(DecisionsOf("p").size(), 1u);
  const Status s = DecisionsOf("p")[0];
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_EQ(s.plugin, "B");
  EXPECT_EQ(s.Message(), "rejected due to timeout after waiting 10s at plugin B");
}

TEST_F(WaitingPodsTest, TimeoutMessagesUseGoDurations) {
  EXPECT_EQ(TimeoutMessage(seconds(5), "X"), "rejected due to timeout after waiting 5s at plugin X");
  EXPECT_EQ(TimeoutMessage(std::chrono::milliseconds(1500), "Y"),
            "rejected due to timeout after waiting 1.5s at plugin Y");
  EXPECT_EQ(TimeoutMessage(std::chrono::minutes(15), "Z"),
            "rejected due to timeout after waiting 15m0s at plugin Z");
}

TEST_F(WaitingPodsTest, RejectByAnyPluginEndsTheWait) {
  auto wp = Add("p", {{"A", seconds(5)}, {"B", seconds(5)}});
  wp->Allow("A");
  EXPECT_TRUE(wp->Reject("B", "gang incomplete"));
  ASSERT_EQ(DecisionsOf("p").size(), 1u);
  EXPECT_EQ(DecisionsOf("p")[0].code, Code::kUnschedulable);
  EXPECT_EQ(DecisionsOf("p")[0].plugin, "B");
  EXPECT_EQ(DecisionsOf("p")[0].Message(), "gang incomplete");
  EXPECT_FALSE(wp->Reject("A", "again"));
  clock.Advance(seconds(60));
  EXPECT_EQ(DecisionsOf("p").size(), 1u) << "decided exactly once";
}

TEST_F(WaitingPodsTest, RejectByUidAndRejectAll) {
  Add("a", {{"A", seconds(5)}});
  Add("b", {{"A", seconds(5)}});
  Add("c", {{"A", seconds(5)}});
  EXPECT_TRUE(pods.Reject("uid-a", "", "removed"));
  EXPECT_FALSE(pods.Reject("uid-a", "", "removed"));
  EXPECT_FALSE(pods.Reject("uid-zzz", "", "removed"));
  EXPECT_EQ(DecisionsOf("a")[0].Message(), "removed");
  EXPECT_EQ(pods.RejectAll("scheduler stopping"), 2u);
  EXPECT_EQ(DecisionsOf("c")[0].Message(), "scheduler stopping");
  EXPECT_EQ(pods.size(), 0u);
}

TEST_F(WaitingPodsTest, GetAndIterate) {
  Add("a", {{"A", seconds(5)}});
  Add("b", {{"A", seconds(5)}});
  ASSERT_NE(pods.Get("uid-b"), nullptr);
  EXPECT_EQ(pods.Get("uid-b")->pod()->name(), "b");
  EXPECT_EQ(pods.Get("nope"), nullptr);
  std::vector<std::string> seen;
  pods.Iterate([&](WaitingPod& wp) {
    seen.emplace_back(wp.pod()->name());
    wp.Allow("A");  // allowed to act on the pod from inside the iteration
    return true;
  });
  EXPECT_THAT(seen, ElementsAre("a", "b"));
  EXPECT_EQ(pods.size(), 0u);
  EXPECT_TRUE(DecisionsOf("a")[0].ok());
}

TEST_F(WaitingPodsTest, RefusesBadAdds) {
  EXPECT_THROW(pods.Add(MakePod("x"), {}, nullptr), FrameworkError);
  Add("p", {{"A", seconds(1)}});
  EXPECT_THROW(Add("p", {{"A", seconds(1)}}), FrameworkError);
  WaitingPods no_clock;
  try {
    no_clock.Add(MakePod("y"), {{"A", seconds(1)}}, nullptr);
    FAIL() << "expected FrameworkError";
  } catch (const FrameworkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no clock"));
  }
}

TEST_F(WaitingPodsTest, AbiHandlesGoStaleWhenTheWaitEnds) {
  const schedhost_host_api* api = HostApi();
  auto wp = Add("p", {{"A", seconds(5)}, {"B", seconds(5)}});
  schedhost_waiting_pod* h = wp->handle();
  ASSERT_NE(h, nullptr);
  const schedhost_pod_view* v = api->waiting_pod_pod(h);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v->name.data, v->name.len), "p");
  EXPECT_EQ(api->waiting_pod_allow(h, schedhost_str{"A", 1}), SCHEDHOST_OK);
  EXPECT_EQ(api->waiting_pod_reject(h, schedhost_str{"B", 1}, schedhost_str{"no", 2}), SCHEDHOST_OK);
  EXPECT_EQ(DecisionsOf("p")[0].Message(), "no");
  EXPECT_EQ(api->waiting_pod_allow(h, schedhost_str{"B", 1}), SCHEDHOST_E_NOT_FOUND);
  EXPECT_EQ(api->waiting_pod_pod(h), nullptr);
  EXPECT_EQ(api->waiting_pod_allow(nullptr, schedhost_str{"B", 1}), SCHEDHOST_E_NOT_FOUND);
}

TEST_F(WaitingPodsTest, WaitBlocksUntilDecided) {
  auto wp = Add("p", {{"A", seconds(5)}});
  std::thread t([&] { clock.Advance(seconds(5)); });
  Status s = wp->Wait();
  t.join();
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "rejected due to timeout after waiting 5s at plugin A");
}

TEST_F(WaitingPodsTest, ConcurrentAllowRejectAndTimeoutDecideOnce) {
  for (int round = 0; round < 50; ++round) {
    const std::string name = "p" + std::to_string(round);
    auto wp = Add(name, {{"A", seconds(1)}, {"B", seconds(1)}, {"C", seconds(1)}});
    std::thread t1([&] { wp->Allow("A"); wp->Allow("B"); });
    std::thread t2([&] { wp->Allow("C"); });
    std::thread t3([&] { if (round % 2 == 0) wp->Reject("B", "racing"); });
    std::thread t4([&] { if (round % 3 == 0) clock.Advance(seconds(1)); });
    t1.join();
    t2.join();
    t3.join();
    t4.join();
    clock.Advance(seconds(2));
    EXPECT_EQ(DecisionsOf(name).size(), 1u) << name;
  }
  EXPECT_EQ(pods.size(), 0u);
}

}  // namespace
}  // namespace schedhost::framework
