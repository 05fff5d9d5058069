// WaitingPods: the pods of one profile waiting at Permit (reference/004). A Permit plugin that
// answers Wait gets a timer of its own; the pod goes on once every waiting plugin allowed it,
// and is rejected (Unschedulable) as soon as any plugin rejects it, a timer fires ("rejected due
// to timeout after waiting 5s at plugin X") or the pod is deleted. The decision is delivered
// once, to a callback (the binding cycle's continuation) and to anyone blocked in Wait().
//
//   auto wp = waiting_pods.Add(pod, {{"Gang", 5s}}, [](const Status& s) { ... resume ... });
//   waiting_pods.Get(uid)->Allow("Gang");
#pragma once

#include <schedhost/plugin.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "host/framework/clock.h"
#include "host/framework/status.h"
#include "host/model/pod.h"

namespace schedhost::framework {

class WaitingPods;

/// PermitWaits are the plugins that asked a pod to wait, each with its timeout.
using PermitWaits = std::vector<std::pair<std::string, std::chrono::nanoseconds>>;

/// WaitingPod is one pod waiting at Permit; thread-safe. Its ABI handle is an id, so a handle
/// kept after the wait ended is recognised as stale rather than dereferenced.
class WaitingPod {
 public:
  /// DoneFn receives the decision: Success, or Unschedulable naming the rejecting plugin.
  using DoneFn = std::function<void(const Status&)>;

  WaitingPod(const WaitingPod&) = delete;
  WaitingPod& operator=(const WaitingPod&) = delete;

  /// pod returns the (assumed) pod that waits.
  const std::shared_ptr<const model::Pod>& pod() const { return pod_; }
  /// uid returns the pod's uid.
  std::string_view uid() const { return pod_->uid(); }
  /// handle returns the ABI handle plugins see for this waiting pod.
  schedhost_waiting_pod* handle() const;
  /// PendingPlugins lists the plugins that have not allowed the pod yet, sorted.
  std::vector<std::string> PendingPlugins() const;
  /// Allow records `plugin`'s approval (stopping its timer); the pod proceeds once no plugin is
  /// pending. Returns false when the wait already ended.
  bool Allow(std::string_view plugin);
  /// Reject ends the wait with Unschedulable, `message` and `plugin` as the rejecting plugin.
  /// Returns false when the wait already ended.
  bool Reject(std::string_view plugin, std::string_view message);
  /// Wait blocks until the wait ends and returns the decision.
  Status Wait() const;
  /// decision returns the decision once made.
  std::optional<Status> decision() const;

 private:
  friend class WaitingPods;
  WaitingPod(WaitingPods* owner, Clock* clock, std::shared_ptr<const model::Pod> pod, uint64_t id,
             DoneFn done);
  bool Decide(const Status& status);

  WaitingPods* const owner_;
  Clock* const clock_;
  const std::shared_ptr<const model::Pod> pod_;
  const uint64_t id_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, Clock::TimerId, std::less<>> pending_;  // plugin -> its timer
  std::optional<Status> decision_;
  DoneFn done_;
};

/// WaitingPods is a profile's set of waiting pods, by uid; thread-safe.
class WaitingPods {
 public:
  WaitingPods() = default;
  /// ~WaitingPods disarms the timers of pods still waiting (their callbacks are not called).
  ~WaitingPods();
  WaitingPods(const WaitingPods&) = delete;
  WaitingPods& operator=(const WaitingPods&) = delete;

  /// SetClock sets the clock the timers run on (not owned; must outlive every wait).
  void SetClock(Clock* clock);
  /// Add makes `pod` wait for every plugin of `waits` (timeouts start now) and calls `done` once
  /// with the decision, on the deciding thread, without any lock held. Throws FrameworkError when
  /// no clock is set, `waits` is empty or a pod with the same uid already waits.
  std::shared_ptr<WaitingPod> Add(std::shared_ptr<const model::Pod> pod, const PermitWaits& waits,
                                  WaitingPod::DoneFn done);
  /// Get returns the waiting pod with `uid`, or nullptr.
  std::shared_ptr<WaitingPod> Get(std::string_view uid) const;
  /// Iterate calls `fn` for every waiting pod (in uid order) until it returns false; the pods
  /// are collected first, so fn may allow or reject them.
  void Iterate(const std::function<bool(WaitingPod&)>& fn) const;
  /// Reject rejects the waiting pod with `uid` (upstream's RejectWaitingPod); false when no such
  /// pod waits.
  bool Reject(std::string_view uid, std::string_view plugin, std::string_view message);
  /// RejectAll rejects every waiting pod with `message`; returns how many.
  size_t RejectAll(std::string_view message);
  /// size returns how many pods wait.
  size_t size() const;

  /// FromHandle returns the live waiting pod behind an ABI handle, or nullptr when the handle
  /// is unknown or its wait ended.
  static std::shared_ptr<WaitingPod> FromHandle(schedhost_waiting_pod* handle);

 private:
  friend class WaitingPod;
  void Remove(const WaitingPod& wp);

  mutable std::mutex mu_;
  Clock* clock_ = nullptr;
  std::map<std::string, std::shared_ptr<WaitingPod>, std::less<>> pods_;
};

/// TimeoutMessage is upstream's text for a Permit timer that fired.
std::string TimeoutMessage(std::chrono::nanoseconds timeout, std::string_view plugin);

}  // namespace schedhost::framework
