// ProfileRuntime: a ProfileSet plus what the scheduler derives from it once, on the control
// thread: every plugin's EnqueueExtensions (events and queueing hints), per profile. It answers
// the scheduling queue's three questions — QueueSort order, PreEnqueue, and whether a cluster
// event may make a pod that a plugin rejected schedulable — through the loaded plugins.
//
//   auto runtime = std::make_shared<ProfileRuntime>(profile_set);
//   queue::SchedulingQueue q(MakeQueueCallbacks(runtime_source, on_gate), options);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/framework/framework.h"
#include "host/queue/scheduling_queue.h"
#include "host/scheduler/profile_set.h"

namespace schedhost::scheduler {

/// ProfileRuntime is immutable once built and safe to share across threads.
class ProfileRuntime {
 public:
  /// ProfileRuntime collects the event registrations of every plugin of every profile.
  explicit ProfileRuntime(std::shared_ptr<const ProfileSet> set);

  /// set returns the ProfileSet.
  const ProfileSet& set() const { return *set_; }
  /// Find returns the framework of the profile named `scheduler_name`, or nullptr.
  framework::Framework* Find(std::string_view scheduler_name) const {
    return set_->Find(scheduler_name);
  }
  /// FrameworkFor returns the framework of `pod`'s schedulerName, or nullptr.
  framework::Framework* FrameworkFor(const model::Pod& pod) const {
    return set_->Find(pod.scheduler_name());
  }

  /// QueueSortLess orders two queued pods with the (shared) QueueSort plugin; pods it finds
  /// equal are ordered by creation time, then uid, so the order never depends on heap layout.
  bool QueueSortLess(const queue::QueuedPodInfo& a, const queue::QueuedPodInfo& b) const;
  /// PreEnqueue runs the PreEnqueue plugins of the pod's profile (no profile: admitted).
  queue::PreEnqueueResult PreEnqueue(const model::Pod& pod) const;
  /// Hint answers whether `ev` may make `pod`, rejected by `plugin`, schedulable: true when one of
  /// the plugin's registrations matches and its hint (if any) says Queue; a plugin that registers
  /// no events (or is unknown) is interested in every event, as upstream.
  bool Hint(std::string_view plugin, const model::Pod& pod, const queue::ClusterEvent& ev) const;
  /// Interest lists, per profile, the plugins registered for no event matching `ev` (their
  /// Hint is false for every pod); the queue skips pods only they rejected without asking.
  queue::EventInterest Interest(const queue::ClusterEvent& ev) const;

 private:
  struct PluginEvents {
    const framework::PluginInstance* plugin = nullptr;
    std::vector<queue::EventRegistration> registrations;
  };
  using PluginMap = std::map<std::string, PluginEvents, std::less<>>;

  std::shared_ptr<const ProfileSet> set_;
  framework::Framework* sort_framework_ = nullptr;
  std::map<std::string, PluginMap, std::less<>> events_;  // by profile name
};

/// AskQueueingHint answers for `plugin`, whose EventsToRegister gave `registrations`, whether
/// `ev` may make `pod` schedulable: true when a registration matches and its hint (if any) says
/// Queue. ProfileRuntime::Hint and the SDK's test harness both ask through it.
bool AskQueueingHint(const framework::PluginInstance& plugin,
                     std::span<const queue::EventRegistration> registrations,
                     const model::Pod& pod, const queue::ClusterEvent& ev);

/// MakeQueueCallbacks builds the queue's callbacks: `less` from `initial` (QueueSort is shared by
/// every profile; a reload re-sorts through SchedulingQueue::Reorder), PreEnqueue and hints from
/// whatever `current` returns when they run. `on_pre_enqueue` (may be empty) sees every verdict.
queue::QueueCallbacks MakeQueueCallbacks(
    const std::shared_ptr<const ProfileRuntime>& initial,
    const std::function<std::shared_ptr<const ProfileRuntime>()>& current,
    const std::function<void(const model::Pod&, const queue::PreEnqueueResult&)>& on_pre_enqueue);

}  // namespace schedhost::scheduler
