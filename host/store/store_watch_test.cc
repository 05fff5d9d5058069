// Watches: replay from a version, live delivery in order, resync when the log is too short,
// callbacks that write or unwatch, and several writer threads against one watcher.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "host/store/store.h"
#include "host/store/store_test_util.h"

namespace schedhost::store {
namespace {

using testing::Bare;
using testing::ErrorOf;
using testing::NodeData;
using testing::PodData;

// Recorder keeps "<TYPE> <Kind> <key>@<rv>" lines.
struct Recorder {
  std::vector<std::string> lines;
  std::vector<Event> events;
  std::function<void(const Event&)> Fn() {
    return [this](const Event& e) {
      lines.push_back(std::string(ToString(e.type)) + " " + Describe(e.object) + "@" +
                      std::to_string(e.resource_version) + (e.resync ? " resync" : ""));
      events.push_back(e);
    };
  }
};

TEST(StoreWatchTest, ReplaysFromAVersionThenDeliversLive) {
  Store store(Bare());
  store.Create(NodeData("n1"));             // 1
  store.Create(PodData("a"));               // 2
  store.Bind("default", "a", "", 0, "n1");  // 3
  Recorder r;
  const uint64_t id = store.Watch(1, r.Fn());
  EXPECT_EQ(r.lines,
            (std::vector<std::string>{"ADDED Pod default/a@2", "MODIFIED Pod default/a@3"}));
  store.Delete<model::Pod>("default", "a");  // 4
  store.Create(NodeData("n2"));              // 5
  EXPECT_EQ(r.lines, (std::vector<std::string>{"ADDED Pod default/a@2", "MODIFIED Pod default/a@3",
                                               "DELETED Pod default/a@4", "ADDED Node n2@5"}));
  // MODIFIED carries both states; DELETED carries the last state as object and old object.
  const Event& modified = r.events[1];
  ASSERT_TRUE(modified.old_object.has_value());
  EXPECT_EQ(std::get<std::shared_ptr<const model::Pod>>(*modified.old_object)->node_name(), "");
  EXPECT_EQ(std::get<std::shared_ptr<const model::Pod>>(modified.object)->node_name(), "n1");
  const Event& deleted = r.events[2];
  EXPECT_EQ(std::get<std::shared_ptr<const model::Pod>>(deleted.object)->node_name(), "n1");
  EXPECT_FALSE(r.events[0].old_object.has_value());

  EXPECT_TRUE(store.Unwatch(id));
  EXPECT_FALSE(store.Unwatch(id));
  store.Create(NodeData("n3"));
  EXPECT_EQ(r.lines.size(), 4u);
}

// The log keeps its entries type-erased; a replay must hand back each kind as the alternative
// a live watcher saw, with the same objects, old objects and versions.
TEST(StoreWatchTest, AReplayOfEveryKindMatchesWhatALiveWatcherSaw) {
  Store store(Bare());
  Recorder live;
  store.Watch(0, live.Fn());
  store.Create(NodeData("n1"));
  store.Create(PodData("a"));
  store.Create(testing::PdbData("budget"));
  store.Create(testing::ClassData("high", 1000));
  model::NamespaceData ns;
  ns.metadata.name = "team-a";
  store.Create(std::move(ns));
  store.Bind("default", "a", "", 0, "n1");
  store.Delete<model::Node>("", "n1");
  store.Delete<model::PriorityClass>("", "high");

  Recorder replay;
  store.Watch(0, replay.Fn());
  ASSERT_EQ(replay.lines, live.lines);
  ASSERT_EQ(replay.events.size(), 8u);
  for (size_t i = 0; i < live.events.size(); ++i) {
    const Event& want = live.events[i];
    const Event& got = replay.events[i];
    EXPECT_EQ(got.kind, want.kind) << i;
    EXPECT_EQ(got.type, want.type) << i;
    EXPECT_EQ(got.object.index(), want.object.index()) << i;
    EXPECT_EQ(got.object, want.object) << i;  // the same shared objects
    EXPECT_EQ(got.old_object, want.old_object) << i;
    EXPECT_FALSE(got.resync) << i;
  }
  EXPECT_TRUE(replay.events[5].old_object.has_value());   // the binding
  EXPECT_FALSE(replay.events[0].old_object.has_value());  // an ADDED
}

TEST(StoreWatchTest, WatchFromNowAndFromTheFuture) {
  Store store(Bare());
  store.Create(NodeData("n1"));
  Recorder r;
  store.Watch(store.resource_version(), r.Fn());
  EXPECT_TRUE(r.lines.empty());
  store.Create(NodeData("n2"));
  EXPECT_EQ(r.lines, (std::vector<std::string>{"ADDED Node n2@2"}));
  EXPECT_EQ(ErrorOf([&] { store.Watch(99, [](const Event&) {}); }).code(), ErrorCode::kInvalid);
  EXPECT_EQ(ErrorOf([&] { store.Watch(0, nullptr); }).code(), ErrorCode::kInvalid);
}

TEST(StoreWatchTest, ResyncWhenTheLogNoLongerHoldsTheVersion) {
  Store::Limits limits = Bare();
  limits.event_log_length = 3;
  Store store(limits);
  store.Create(PodData("a"));                // 1
  store.Create(NodeData("n1"));              // 2
  store.Create(PodData("b"));                // 3
  store.Delete<model::Pod>("default", "a");  // 4
  store.Create(NodeData("n2"));              // 5; the log keeps 3..5
  EXPECT_EQ(store.oldest_replayable_rv(), 2u);

  Recorder replay;
  store.Watch(2, replay.Fn());
  EXPECT_EQ(replay.lines, (std::vector<std::string>{"ADDED Pod default/b@3",
                                                    "DELETED Pod default/a@4", "ADDED Node n2@5"}));
  Recorder resync;
  store.Watch(1, resync.Fn());
  // Every current object once, nodes before pods, stamped with the store's version.
  EXPECT_EQ(resync.lines,
            (std::vector<std::string>{"ADDED Node n1@5 resync", "ADDED Node n2@5 resync",
                                      "ADDED Pod default/b@5 resync"}));
  store.Create(PodData("c"));
  EXPECT_EQ(resync.lines.back(), "ADDED Pod default/c@6");
}

TEST(StoreWatchTest, CallbacksMayWriteAndUnwatch) {
  Store store(Bare());
  std::vector<std::string> seen;
  uint64_t self = 0;
  // A controller that binds every new pod to n1 and stops after the second binding.
  self = store.Watch(0, [&](const Event& e) {
    auto pod = std::get<std::shared_ptr<const model::Pod>>(e.object);
    seen.push_back(std::string(ToString(e.type)) + " " + std::string(pod->name()) + "@" +
                   std::to_string(e.resource_version));
    if (e.type == EventType::kAdded) store.Bind("default", pod->name(), pod->uid(), 0, "n1");
    if (e.type == EventType::kModified && pod->name() == "b") store.Unwatch(self);
  });
  store.Create(PodData("a"));
  store.Create(PodData("b"));
  store.Create(PodData("c"));  // the watch is gone: c stays unbound
  EXPECT_EQ(seen,
            (std::vector<std::string>{"ADDED a@1", "MODIFIED a@2", "ADDED b@3", "MODIFIED b@4"}));
  EXPECT_EQ(store.Get<model::Pod>("default", "a")->node_name(), "n1");
  EXPECT_EQ(store.Get<model::Pod>("default", "c")->node_name(), "");
}

TEST(StoreWatchTest, ThrowingCallbacksAreCountedNotFatal) {
  Store store(Bare());
  int calls = 0;
  store.Watch(0, [&](const Event&) {
    ++calls;
    throw std::runtime_error("boom");
  });
  store.Create(NodeData("n1"));
  store.Create(NodeData("n2"));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(store.failed_callbacks(), 2u);
}

// Several writers race; each watcher must see strictly increasing versions with no gaps, and
// every write must have been delivered by the time it returns.
TEST(StoreWatchConcurrentTest, WritersRaceAWatcher) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  Store store(Bare());
  std::vector<uint64_t> seen;  // only touched by callbacks, which never run concurrently
  std::atomic<uint64_t> last_seen{0};
  std::atomic<int> in_callback{0};
  std::atomic<bool> overlapped{false};
  store.Watch(0, [&](const Event& e) {
    if (in_callback.fetch_add(1) != 0) overlapped = true;
    seen.push_back(e.resource_version);
    last_seen = e.resource_version;
    in_callback.fetch_sub(1);
  });
  std::atomic<bool> undelivered{false};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string name = "p" + std::to_string(t) + "-" + std::to_string(i);
        auto pod = store.Create(PodData(name));
        if (last_seen.load() < pod->resource_version()) undelivered = true;
        if (i % 2 == 0) store.Bind("default", name, pod->uid(), 0, "n" + std::to_string(t));
        if (i % 5 == 0) store.Delete<model::Pod>("default", name);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(overlapped);
  EXPECT_FALSE(undelivered);
  ASSERT_EQ(seen.size(), store.resource_version());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i + 1);
}

TEST(StoreWatchConcurrentTest, UnwatchWaitsForARunningCallback) {
  Store store(Bare());
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::atomic<bool> running{false};
  uint64_t id = store.Watch(0, [&](const Event&) {
    running = true;
    entered = true;
    while (!release) std::this_thread::yield();
    running = false;
  });
  std::thread writer([&] { store.Create(NodeData("n1")); });
  while (!entered) std::this_thread::yield();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release = true;
  });
  EXPECT_TRUE(store.Unwatch(id));
  EXPECT_FALSE(running);  // Unwatch returned only after the callback ended
  writer.join();
  releaser.join();
}

}  // namespace
}  // namespace schedhost::store
