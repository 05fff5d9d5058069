// Hot swap of the live ProfileSet: the new set is built and validated by the
// caller, wired to this scheduler here, and swapped in under profiles_mu_ — one pointer, so the
// scheduling loop takes it at its next cycle while every cycle under way keeps the shared_ptr it
// started with (a pod waiting at Permit finishes on the plugin instances that admitted it). The
// replaced sets are remembered weakly, so Stop and pod deletions still reach the pods waiting in
// them, and are freed (destroy callbacks, then the libraries) when the last cycle lets go.
//
// A pod whose schedulerName names no live profile is parked: out of the queue, with the message
// "no profile named X". The store stays the truth, so a swap that brings the profile back finds
// such pods there and queues them again; nothing is lost and nothing is queued twice.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "host/framework/plugin_instance.h"
#include "host/queue/cluster_event.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::scheduler {
namespace {

using framework::View;

// kProfilesReplacedLabel labels the wildcard event that gives every unschedulable and gated pod
// another chance under the new policy.
constexpr std::string_view kProfilesReplacedLabel = "ProfilesReplaced";

}  // namespace

void Scheduler::Wire(const ProfileSet& set) {
  for (const auto& fw : set.frameworks()) {
    fw->SetSnapshot(snapshot_.get());
    fw->SetNominator(&queue_->nominator());
    fw->SetClock(clock_.get());
    fw->SetClusterAccess(toolkit_.get());
    fw->SetObjects(&store_.objects());
    fw->SetObjectWriter([this](const store::KindInfo& kind, store::ObjectWriteOp op,
                               std::string_view ns, std::string_view name, std::string_view body) {
      writer_->WriteObject(kind, op, ns, name, body);
    });
    fw->SetBinder([this](const schedhost_pod_view* pod, std::string_view node) {
      const model::Pod* p = model::Pod::FromView(pod);
      if (p == nullptr) return framework::Status::Error("bind: not a pod view the host made");
      try {
        writer_->Bind(*p, node);
        return framework::Status::Success();
      } catch (const store::StoreError& e) {
        if (e.code() == store::ErrorCode::kSuperseded) {
          std::lock_guard lock(superseded_mu_);
          superseded_.emplace(p->uid());
        }
        return framework::Status::Error(e.what());
      }
    });
  }
  // Shadows read the objects the live profiles read; their snapshot, nominations and (dry-run)
  // cluster access are the shadow thread's copies, set for each cycle. Every way to write is
  // shut.
  for (const ShadowProfile& shadow : set.shadows()) {
    framework::Framework& fw = *shadow.framework;
    fw.SetObjects(&store_.objects());
    const std::string name = shadow.profile.name;
    fw.SetObjectWriter([name](const store::KindInfo& kind, store::ObjectWriteOp, std::string_view,
                              std::string_view object, std::string_view) {
      throw store::StoreError(store::ErrorCode::kForbidden,
                              "shadow profile \"" + name + "\" does not write (" +
                                  kind.resource + " " + std::string(object) + " left as it is)");
    });
    fw.SetBinder([name](const schedhost_pod_view*, std::string_view) {
      return framework::Status::Error("shadow profile \"" + name + "\" does not bind");
    });
  }
}

void Scheduler::DeclareKinds(const ProfileSet& set) {
  // All or nothing: a refused set declares nothing. A kind the set adds is mirrored (Kubernetes
  // mode: listed) before Declare returns, so before the set goes live.
  try {
    store_.objects().Declare(set.DeclaredKinds());
  } catch (const store::StoreError& e) {
    throw SchedulerError(std::string(e.what()) +
                         "; restart the host to change a kind's version or scope");
  }
}

void Scheduler::Unwire(const ProfileSet& set) {
  for (const auto& fw : set.frameworks()) {
    fw->SetSnapshot(nullptr);
    fw->SetNominator(nullptr);
    fw->SetClock(nullptr);
    fw->SetBinder(nullptr);
    fw->SetClusterAccess(nullptr);
    fw->SetObjects(nullptr);
    fw->SetObjectWriter(nullptr);
  }
  for (const ShadowProfile& shadow : set.shadows()) {
    shadow.framework->SetSnapshot(nullptr);
    shadow.framework->SetNominator(nullptr);
    shadow.framework->SetClusterAccess(nullptr);
    shadow.framework->SetObjects(nullptr);
    shadow.framework->SetObjectWriter(nullptr);
    shadow.framework->SetBinder(nullptr);
  }
}

std::vector<std::shared_ptr<const ProfileRuntime>> Scheduler::LiveRuntimes() const {
  std::lock_guard lock(profiles_mu_);
  std::vector<std::shared_ptr<const ProfileRuntime>> out{profiles_};
  for (const auto& weak : retired_) {
    if (auto runtime = weak.lock()) out.push_back(std::move(runtime));
  }
  return out;
}

std::shared_ptr<const ProfileRuntime> Scheduler::RuntimeOf(const framework::Framework& fw) const {
  // The live set, or a replaced one a cycle still holds (the cycle asking holds it).
  for (auto& runtime : LiveRuntimes()) {
    for (const auto& f : runtime->set().frameworks()) {
      if (f.get() == &fw) return runtime;
    }
  }
  return nullptr;
}

uint64_t Scheduler::generation() const {
  std::lock_guard lock(profiles_mu_);
  return generation_;
}

size_t Scheduler::DrainingSets() const {
  std::lock_guard lock(profiles_mu_);
  size_t n = 0;
  for (const auto& weak : retired_) n += weak.expired() ? 0 : 1;
  return n;
}

bool Scheduler::RejectWaiting(std::string_view uid, std::string_view plugin,
                              std::string_view message) {
  for (const auto& runtime : LiveRuntimes()) {
    for (const auto& fw : runtime->set().frameworks()) {
      if (auto wp = fw->waiting_pods().Get(uid)) return wp->Reject(plugin, message);
    }
  }
  return false;
}

uint64_t Scheduler::ReplaceProfiles(std::shared_ptr<const ProfileSet> set) {
  std::lock_guard swap(swap_mu_);
  // Everything that can fail comes before the swap: the runtime asks every plugin for its
  // events (control thread, no scheduler lock held, as the ABI promises).
  auto runtime = std::make_shared<const ProfileRuntime>(std::move(set));
  if (stopping_.load()) throw SchedulerError("the scheduler is stopping; profiles not replaced");
  DeclareKinds(runtime->set());
  Wire(runtime->set());
  uint64_t generation = 0;
  std::shared_ptr<const ProfileRuntime> replaced;
  {
    std::lock_guard lock(profiles_mu_);
    std::erase_if(retired_, [](const auto& weak) { return weak.expired(); });
    retired_.emplace_back(profiles_);
    replaced = profiles_;
    profiles_ = runtime;
    generation = ++generation_;
  }
  // Kinds the new set no longer reads: a mirror of an API server stops following them.
  std::vector<store::KindInfo> dropped;
  const std::vector<store::KindInfo> kept = runtime->set().DeclaredKinds();
  for (const store::KindInfo& kind : replaced->set().DeclaredKinds()) {
    if (std::find(kept.begin(), kept.end(), kind) == kept.end()) dropped.push_back(kind);
  }
  replaced.reset();
  store_.objects().Release(dropped);
  // The queue takes the new QueueSort (and lets go of the old set's); re-heapifying activeQ
  // costs O(n) comparisons and is a no-op when the order did not change.
  queue_->Reorder([runtime](const queue::QueuedPodInfo& a, const queue::QueuedPodInfo& b) {
    return runtime->QueueSortLess(a, b);
  });
  // Unschedulable and gated pods were judged by the old plugins: let the new ones judge them
  // (after backoff, as after the unschedulable-timeout flush). A pod whose profile went away is
  // parked when the loop pops it.
  queue_->MoveAllToActiveOrBackoffQueue(
      queue::MakeWildcardEvent(std::string(kProfilesReplacedLabel)));
  // Pods parked (or never queued) for want of a profile that now exists.
  for (const auto& pod : store_.List<model::Pod>()) QueueIfProfiled(*pod);
  shadow_->Adopt(runtime, generation);
  spdlog::info("scheduler: profile set generation {} is live ({} profile(s), {} shadow(s))",
               generation, runtime->set().frameworks().size(), runtime->set().shadows().size());
  return generation;
}

void Scheduler::QueueIfProfiled(const model::Pod& pod) {
  if (!pod.node_name().empty() || profiles()->FrameworkFor(pod) == nullptr) return;
  // Where first, then the store: a pod bound meanwhile was in flight (not kNone) until its
  // binding was written, so the store read below sees the binding.
  if (queue_->Where(pod.uid()) != queue::PodLocation::kNone || cache_.IsAssumed(pod.uid())) return;
  auto stored = store_.Get<model::Pod>(pod.namespace_name(), pod.name());
  if (!stored || stored->uid() != pod.uid() || !stored->node_name().empty()) return;
  try {
    queue_->Add(stored);
  } catch (const queue::QueueError&) {
    // Queued meanwhile by the event router or by the parking cycle: once is enough.
  }
}

void Scheduler::ParkWithoutProfile(const queue::QueuedPodInfo& info) {
  const model::Pod& pod = *info.pod;
  // Upstream drops such a pod with an error in the log; here it waits for the profile.
  spdlog::warn("scheduler: no profile \"{}\" for pod {}/{}; parked until a reload adds one",
               pod.scheduler_name(), pod.namespace_name(), pod.name());
  Record(pod, [&](PodEntry& e) {
    SetMessageLocked(e, "no profile named \"" + std::string(pod.scheduler_name()) + "\"");
  });
  queue_->Done(pod.uid());
  // A swap that added the profile after this cycle took its set may have looked for parked pods
  // before the Done above; whichever of the two comes second queues the pod.
  QueueIfProfiled(pod);
}

}  // namespace schedhost::scheduler
