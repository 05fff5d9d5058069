// The QueueTest fixture: a fake clock and helpers shared by the queue's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "host/queue/scheduling_queue.h"
#include "host/queue/test/queue_test_util.h"

namespace schedhost::queue::testing {

/// QueueTest gives each test a fake clock and shortcuts for adding, popping and failing pods.
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
    return info ? std::string(info->pod->name()) : std::string();
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
      clock_.Advance(std::chrono::milliseconds(1));
    }
  }
  // A queue whose hints always answer Skip, so failed pods stay unschedulable.
  std::unique_ptr<SchedulingQueue> SkipQueue(QueueOptions o) {
    QueueCallbacks cb;
    cb.hint = [](std::string_view, const model::Pod&, const ClusterEvent&) { return false; };
    return std::make_unique<SchedulingQueue>(cb, std::move(o));
  }

  FakeClock clock_;
};

}  // namespace schedhost::queue::testing
