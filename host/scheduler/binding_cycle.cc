// Assume, Reserve and Permit at the end of the scheduling cycle, then the binding cycle off the
// loop: wait at Permit, PreBind, Bind, PostBind. A failure anywhere after the assume runs
// Unreserve in reverse, forgets the assumed pod and requeues it (upstream's
// handleBindingCycleError), recording upstream's message.
#include <spdlog/spdlog.h>

#include "host/framework/framework_metrics.h"
#include "host/model/interner.h"
#include "host/queue/cluster_event.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::scheduler {

using framework::Code;
using framework::Status;

/// BindingContext is one pod's binding cycle: what the scheduling cycle decided and holds.
struct BindingContext {
  std::shared_ptr<const ProfileRuntime> profiles;  // keeps the profile's plugins loaded
  framework::Framework* fw = nullptr;
  queue::QueuedPodInfo info;  // as popped
  std::shared_ptr<const model::Pod> assumed;  // the pod with spec.nodeName set
  std::string node;
  std::unique_ptr<framework::CycleState> state;
  uint64_t scratch_cycle = 0;
};

namespace {

// Rejection plugins of a failure: the rejecting plugin, as Pending or Unschedulable.
std::pair<queue::PluginSet, queue::PluginSet> Rejectors(const Status& s) {
  queue::PluginSet rejectors;
  queue::PluginSet pending;
  if (s.IsRejected() && !s.plugin.empty()) {
    (s.code == Code::kPending ? pending : rejectors).insert(s.plugin.str());
  }
  return {rejectors, pending};
}

// A rejection after the node was chosen reads like a Filter failure on that one node, as
// upstream's FitError with NumAllNodes 1 ("0/1 nodes are available: 1 <reason>.").
std::string MessageOf(const Status& s, const std::string& node) {
  if (!s.IsRejected()) return s.Message();
  return framework::FitErrorMessage(1, {{node, s}});
}

schedhost_code AbiCode(Code code) {
  switch (code) {
    case Code::kUnschedulable: return SCHEDHOST_UNSCHEDULABLE;
    case Code::kUnschedulableAndUnresolvable: return SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE;
    case Code::kPending: return SCHEDHOST_PENDING;
    default: return SCHEDHOST_ERROR;
  }
}

}  // namespace

void Scheduler::AssumeAndBind(std::shared_ptr<const ProfileRuntime> profiles,
                              framework::Framework& fw, queue::QueuedPodInfo info,
                              std::unique_ptr<framework::CycleState> state,
                              const std::string& node, uint64_t scratch_cycle) {
  model::PodData data = info.pod->Decode();
  data.spec.node_name = node;
  std::shared_ptr<const model::Pod> assumed = model::Pod::Make(std::move(data));
  try {
    cache_.AssumePod(assumed);
  } catch (const cache::CacheError& e) {
    fw.metrics().EndAttempt(*state, Status::Error(e.what()));
    HandleFailure(info, Status::Error(e.what()), e.what(), {}, {}, "", false);
    return;
  }
  // The pod is placed: its nomination (if any) no longer reserves room elsewhere.
  queue_->nominator().Delete(*info.pod);

  auto fail = [&](const Status& s) {
    fw.metrics().EndAttempt(*state, s);
    fw.RunReservePluginsUnreserve(*state, assumed->view(), node);
    try {
      cache_.ForgetPod(assumed->uid());
    } catch (const cache::CacheError& e) {
      spdlog::error("scheduler: forgetting pod {}/{}: {}", assumed->namespace_name(),
                    assumed->name(), e.what());
    }
    auto [rejectors, pending] = Rejectors(s);
    HandleFailure(info, s, MessageOf(s, node), std::move(rejectors), std::move(pending), "", true);
  };
  if (Status s = fw.RunReservePluginsReserve(*state, assumed->view(), node); !s.ok()) {
    fail(s);
    return;
  }
  framework::PermitResult permit = fw.RunPermitPlugins(*state, assumed->view(), node);
  if (!permit.status.ok() && permit.status.code != Code::kWait) {
    fail(permit.status);
    return;
  }

  auto ctx = std::make_shared<BindingContext>();
  ctx->profiles = std::move(profiles);
  ctx->fw = &fw;
  ctx->info = std::move(info);
  ctx->assumed = assumed;
  ctx->node = node;
  ctx->state = std::move(state);
  ctx->scratch_cycle = scratch_cycle;
  fw.scratch().Pin(scratch_cycle);
  bindings_in_flight_.fetch_add(1);
  if (permit.status.code == Code::kWait) {
    try {
      fw.waiting_pods().Add(assumed, permit.waits, [this, ctx](const Status& decision) {
        executor_->Post([this, ctx, decision] { RunBindingCycle(ctx, decision); });
      });
      return;
    } catch (const std::exception& e) {
      executor_->Post([this, ctx, s = Status::Error(e.what())] { RunBindingCycle(ctx, s); });
      return;
    }
  }
  executor_->Post([this, ctx] { RunBindingCycle(ctx, Status::Success()); });
}

void Scheduler::RunBindingCycle(const std::shared_ptr<BindingContext>& ctx, Status permit) {
  framework::Framework& fw = *ctx->fw;
  const schedhost_pod_view* pod = ctx->assumed->view();
  if (!options_.bind && permit.ok()) {
    permit = Status::Make(Code::kUnschedulableAndUnresolvable,
                          "not bound: this scheduler runs scheduling cycles alone");
  }
  if (!permit.ok()) {
    if (!permit.IsRejected()) {
      permit = Status::Error("waiting on permit for pod: " + permit.Message(), permit.plugin);
    }
    FailBinding(ctx, permit);
    return;
  }
  if (Status s = fw.RunPreBindPlugins(*ctx->state, pod, ctx->node); !s.ok()) {
    FailBinding(ctx, s);
    return;
  }
  Status bound = fw.RunBindPlugins(*ctx->state, pod, ctx->node);
  if (bound.code == Code::kSkip) bound = Status::Error("bind status: Skip, " + bound.Message());
  if (!bound.ok()) {
    FailBinding(ctx, bound);
    return;
  }
  cache_.FinishBinding(ctx->assumed->uid());
  CountBinding();
  writer_->ReportScheduled(*ctx->assumed, ctx->node);
  fw.RunPostBindPlugins(*ctx->state, pod, ctx->node);
  fw.metrics().EndAttempt(*ctx->state, Status::Success());
  const schedhost_id node = model::Interner::Global().Intern(ctx->node);
  Record(*ctx->assumed, [&](PodEntry& e) {
    e.message = framework::Text();
    e.nominated_node = 0;
    e.node = node;
  });
  queue_->Done(ctx->assumed->uid());
  EndBinding(ctx);
}

void Scheduler::FailBinding(const std::shared_ptr<BindingContext>& ctx, const Status& status) {
  const model::Pod& assumed = *ctx->assumed;
  ctx->fw->metrics().EndAttempt(*ctx->state, status);
  ctx->fw->RunReservePluginsUnreserve(*ctx->state, assumed.view(), ctx->node);
  const std::string uid(assumed.uid());
  bool superseded = false;
  {
    std::lock_guard lock(superseded_mu_);
    superseded = superseded_.erase(uid) != 0;
  }
  bool forgot = false;
  try {
    cache_.ForgetPod(assumed.uid());
    forgot = true;
  } catch (const cache::CacheError& e) {
    // Already confirmed (a Bind plugin bound it and then failed) or removed with the pod; when
    // someone else bound it, the watch may well have confirmed it on their node first.
    if (superseded) {
      spdlog::debug("scheduler: forgetting pod {}/{}: {}", assumed.namespace_name(),
                    assumed.name(), e.what());
    } else {
      spdlog::warn("scheduler: forgetting pod {}/{}: {}", assumed.namespace_name(),
                   assumed.name(), e.what());
    }
  }
  if (superseded) {
    // Bound by someone else, going away or re-created: the watch brings the pod's new state,
    // which confirms, deletes or queues it; this pod is not retried (upstream forgets it too).
    spdlog::info("scheduler: pod {}/{} not bound: {}", assumed.namespace_name(), assumed.name(),
                 status.Message());
    if (forgot) {
      queue_->MoveAllToActiveOrBackoffQueue(queue::MakeAssignedPodDeleteEvent(ctx->assumed),
                                            [&uid](const model::Pod& p) { return p.uid() != uid; });
    }
    queue_->Done(uid);
    EndBinding(ctx);
    return;
  }
  // Forgetting frees what the assumed pod held, like a deleted bound pod. After a rejection
  // the pod itself is left out, or the event would send it straight back to be retried.
  const bool rejected = status.IsRejected();
  if (forgot && !rejected) {
    queue_->MoveAllToActiveOrBackoffQueue(queue::MakeAssignedPodDeleteEvent(ctx->assumed));
  }
  auto [rejectors, pending] = Rejectors(status);
  HandleFailure(ctx->info, status, MessageOf(status, ctx->node), std::move(rejectors),
                std::move(pending), "", true);
  if (forgot && rejected) {
    queue_->MoveAllToActiveOrBackoffQueue(queue::MakeAssignedPodDeleteEvent(ctx->assumed),
                                          [&uid](const model::Pod& p) { return p.uid() != uid; });
  }
  EndBinding(ctx);
}

void Scheduler::EndBinding(const std::shared_ptr<BindingContext>& ctx) {
  ctx->fw->scratch().Unpin(ctx->scratch_cycle);
  // Notified under the lock: Stop may go on (and the scheduler go away) as soon as the count
  // it waits for is seen, so nothing here may touch a member after the lock is released.
  std::lock_guard lock(bindings_mu_);
  bindings_in_flight_.fetch_sub(1);
  bindings_cv_.notify_all();
}

void Scheduler::HandleFailure(const queue::QueuedPodInfo& info, const Status& status,
                              const std::string& message, queue::PluginSet rejectors,
                              queue::PluginSet pending, const std::string& nominated_node,
                              bool clear_nomination) {
  const model::Pod& pod = *info.pod;
  CountFailedAttempt(status);
  spdlog::debug("scheduler: pod {}/{} not scheduled: {}", pod.namespace_name(), pod.name(),
                message);
  const schedhost_id nominated =
      nominated_node.empty() ? 0 : model::Interner::Global().Intern(nominated_node);
  Record(pod, [&](PodEntry& e) {
    SetMessageLocked(e, message);
    e.gated = false;
    if (nominated != 0) {
      e.nominated_node = nominated;
    } else if (clear_nomination) {
      e.nominated_node = 0;
    }
  });
  try {
    // After an assume, upstream clears status.nominatedNodeName before requeueing, so the pod
    // does not keep a reservation on a node it no longer heads for.
    if (clear_nomination) writer_->SetNominatedNodeName(pod, "");
  } catch (const store::StoreError&) {
    // Deleted meanwhile: the queue drops it below.
  }
  try {
    const queue::PodLocation where = queue_->AddUnschedulableIfNotPresent(
        info, std::move(rejectors), std::move(pending), AbiCode(status.code), nominated_node);
    if (where == queue::PodLocation::kNone) {
      ForgetDiagnostics(pod.uid());  // deleted meanwhile: nothing more to say about it
      return;
    }
    // Upstream's reasons: a rejection reads Unschedulable, anything else SchedulerError.
    writer_->ReportUnschedulable(pod, status.IsRejected() ? "Unschedulable" : "SchedulerError",
                                 message);
  } catch (const queue::QueueError& e) {
    spdlog::error("scheduler: requeueing pod {}/{}: {}", pod.namespace_name(), pod.name(),
                  e.what());
  }
  if (!nominated_node.empty()) {
    try {
      writer_->SetNominatedNodeName(pod, nominated_node);
    } catch (const store::StoreError& e) {
      spdlog::warn("scheduler: nominating pod {}/{} to {}: {}", pod.namespace_name(), pod.name(),
                   nominated_node, e.what());
    }
  }
}

}  // namespace schedhost::scheduler
