// Helpers for the queue tests: pods built in one line and a fake clock the tests advance.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/model/pod.h"
#include "host/queue/queued_pod_info.h"

namespace schedhost::queue::testing {

/// TestPod describes a test pod; every field is optional.
struct TestPod {
  std::string name;
  int32_t priority = 0;
  std::string nominated_node;
  std::vector<std::string> gates;
  std::vector<std::pair<std::string, std::string>> labels;
  std::string uid;  // "" -> "uid-<name>".
};

/// MakePod builds an unbound pod in namespace "default".
inline std::shared_ptr<const model::Pod> MakePod(const TestPod& t) {
  model::PodData d;
  d.metadata.name = t.name;
  d.metadata.namespace_name = "default";
  d.metadata.uid = t.uid.empty() ? "uid-" + t.name : t.uid;
  d.metadata.labels = t.labels;
  d.spec.priority = t.priority;
  d.spec.scheduling_gates = t.gates;
  d.status.nominated_node_name = t.nominated_node;
  model::Container c;
  c.name = "c";
  c.image = "busybox";
  d.spec.containers.push_back(c);
  return model::Pod::Make(std::move(d));
}

/// MakePod builds pod `name` with `priority`.
inline std::shared_ptr<const model::Pod> MakePod(const std::string& name, int32_t priority = 0) {
  return MakePod(TestPod{.name = name, .priority = priority});
}

/// With returns a copy of `pod`'s data changed by `edit`, made into a new pod (same uid).
template <typename F>
std::shared_ptr<const model::Pod> With(const std::shared_ptr<const model::Pod>& pod, F edit) {
  model::PodData d = pod->data();
  edit(d);
  return model::Pod::Make(std::move(d));
}

/// FakeClock is a thread-safe clock that only moves when told to.
class FakeClock {
 public:
  /// Now returns the current fake time.
  TimePoint Now() const { return TimePoint(std::chrono::nanoseconds(ns_.load())); }
  /// Advance moves the time forward by `d`.
  void Advance(std::chrono::nanoseconds d) { ns_.fetch_add(d.count()); }
  /// AsClock returns a Clock reading this fake clock (which must outlive it).
  Clock AsClock() const {
    return [this] { return Now(); };
  }

 private:
  std::atomic<int64_t> ns_{int64_t{1'000'000'000'000}};
};

}  // namespace schedhost::queue::testing
