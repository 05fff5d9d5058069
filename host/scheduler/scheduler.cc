// Scheduler: wiring, the loop thread, periodic flushes, graceful stop, RunUntilIdle on a virtual
// clock, the invariant check and per-pod diagnostics. The cycles live in schedule_one.cc and
// binding_cycle.cc, the hot swap of profiles in swap.cc.
#include "host/scheduler/scheduler.h"

#include <spdlog/spdlog.h>

#include "host/cache/consistency.h"
#include "host/framework/log.h"
#include "host/model/interner.h"
#include "host/scheduler/event_router.h"

namespace schedhost::scheduler {

Scheduler::Scheduler(store::Store& store, std::shared_ptr<const ProfileSet> profiles,
                     SchedulerOptions options)
    : store_(store),
      writer_(options.writer != nullptr ? options.writer
                                        : std::make_shared<store::StoreWriter>(store)),
      options_(std::move(options)),
      cycle_(options_.seed) {
  framework::TouchLoggerBeforeThreads();
  clock_ = options_.clock ? options_.clock : std::make_shared<RealClock>();
  virtual_clock_ = dynamic_cast<VirtualClock*>(clock_.get());
  started_ns_ =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_->Now().time_since_epoch())
          .count();
  profiles_ = std::make_shared<ProfileRuntime>(std::move(profiles));

  queue::QueueOptions qo;
  qo.pod_initial_backoff = options_.pod_initial_backoff;
  qo.pod_max_backoff = options_.pod_max_backoff;
  qo.clock = [clock = clock_.get()] { return clock->Now(); };
  queue_ = std::make_unique<queue::SchedulingQueue>(
      MakeQueueCallbacks(
          profiles_, [this] { return this->profiles(); },
          [this](const model::Pod& pod, const queue::PreEnqueueResult& r) {
            Record(pod, [&](PodEntry& e) {
              e.gated = !r.admitted;
              if (!r.admitted) SetMessageLocked(e, r.message);
            });
          }),
      qo);
  snapshot_ = std::make_unique<cache::Snapshot>();
  preemption::ToolkitOptions to;
  to.seed = options_.seed;
  to.on_evicted = options_.on_evicted;
  to.writer = writer_.get();
  to.reject_waiting = [this](std::string_view uid, std::string_view plugin,
                             std::string_view message) {
    return RejectWaiting(uid, plugin, message);
  };
  toolkit_ = std::make_unique<preemption::Toolkit>(store_, queue_->nominator(), std::move(to));
  shadow_ = std::make_unique<ShadowRunner>(store_, queue_->nominator(), cache_, options_.seed);
  DeclareKinds(profiles_->set());
  Wire(profiles_->set());
  shadow_->Adopt(profiles_, 1);
  if (virtual_clock_ != nullptr) {
    auto manual = std::make_unique<ManualExecutor>();
    manual_executor_ = manual.get();
    executor_ = std::move(manual);
  } else {
    executor_ = std::make_unique<ThreadPoolExecutor>(options_.binding_threads);
  }
  router_ = std::make_unique<EventRouter>(*this);
  router_->Start();
  ArmPeriodic(options_.backoff_flush_interval, &queue::SchedulingQueue::FlushBackoffQCompleted, 0);
  ArmPeriodic(options_.unschedulable_flush_interval,
              &queue::SchedulingQueue::FlushUnschedulablePodsLeftover, 1);
}

Scheduler::~Scheduler() {
  Stop();
  for (const auto& runtime : LiveRuntimes()) Unwire(runtime->set());
}

std::shared_ptr<const ProfileRuntime> Scheduler::profiles() const {
  std::lock_guard lock(profiles_mu_);
  return profiles_;
}

void Scheduler::Start() {
  std::lock_guard lock(run_mu_);
  if (virtual_clock_ != nullptr) {
    throw SchedulerError("Start runs the loop in real time; on a VirtualClock use RunUntilIdle");
  }
  if (stopped_ || loop_.joinable()) throw SchedulerError("the scheduler was already started");
  loop_ = std::thread([this] {
    while (!stopping_.load()) {
      std::optional<queue::QueuedPodInfo> info = queue_->Pop();
      if (!info) return;
      RunCycle(std::move(*info));
    }
  });
}

void Scheduler::Stop() {
  std::lock_guard lock(run_mu_);
  if (stopped_) return;
  stopped_ = true;
  stopping_.store(true);
  queue_->Close();
  if (loop_.joinable()) loop_.join();
  shadow_->Shutdown();
  // Pods waiting at Permit go back to the queue; every binding cycle then runs to its end.
  // Replaced sets too: a pod admitted by an old plugin may still wait there.
  for (const auto& runtime : LiveRuntimes()) {
    for (const auto& fw : runtime->set().frameworks()) {
      fw->waiting_pods().RejectAll("scheduler is stopping");
    }
  }
  if (manual_executor_ != nullptr) manual_executor_->RunAll();
  {
    std::unique_lock bl(bindings_mu_);
    bindings_cv_.wait(bl, [this] { return bindings_in_flight_.load() == 0; });
  }
  {
    std::unique_lock tl(timers_mu_);
    timers_stopped_ = true;
    for (Clock::TimerId& id : timer_ids_) {
      if (id != 0) clock_->Cancel(id);
      id = 0;
    }
    // A flush already running on the clock's thread finishes before the queue can go away.
    timers_cv_.wait(tl, [this] { return timer_callbacks_running_ == 0; });
  }
  router_->Stop();
  executor_.reset();
  manual_executor_ = nullptr;
}

void Scheduler::ArmPeriodic(std::chrono::nanoseconds every, void (queue::SchedulingQueue::*flush)(),
                            size_t slot) {
  std::lock_guard lock(timers_mu_);
  ArmPeriodicLocked(every, flush, slot);
}

void Scheduler::ArmPeriodicLocked(std::chrono::nanoseconds every,
                                  void (queue::SchedulingQueue::*flush)(), size_t slot) {
  if (timers_stopped_) return;
  timer_ids_[slot] = clock_->AfterFunc(every, [this, every, flush, slot] {
    {
      std::lock_guard l(timers_mu_);
      if (timers_stopped_) return;
      ++timer_callbacks_running_;
    }
    (queue_.get()->*flush)();
    // Re-armed and notified under the lock: once Stop sees no callback running it may destroy
    // the scheduler, so nothing here touches a member after the lock is released.
    std::lock_guard l(timers_mu_);
    --timer_callbacks_running_;
    ArmPeriodicLocked(every, flush, slot);
    timers_cv_.notify_all();
  });
}

bool Scheduler::ScheduleOne() {
  if (loop_.joinable()) throw SchedulerError("ScheduleOne while the loop thread runs");
  std::optional<queue::QueuedPodInfo> info = queue_->TryPop();
  if (!info) return false;
  RunCycle(std::move(*info));
  return true;
}

size_t Scheduler::DrainBindings() {
  return manual_executor_ != nullptr ? manual_executor_->RunAll() : 0;
}

RunResult Scheduler::RunUntilIdle(const RunLimits& limits) {
  if (virtual_clock_ == nullptr) throw SchedulerError("RunUntilIdle needs a VirtualClock");
  RunResult result;
  const Clock::TimePoint start = virtual_clock_->Now();
  for (;;) {
    while (result.cycles < limits.max_cycles && ScheduleOne()) {
      ++result.cycles;
      DrainBindings();
      if (limits.after_step) limits.after_step();
    }
    DrainBindings();
    const queue::QueueCounts counts = queue_->Counts();
    result.virtual_time = virtual_clock_->Now() - start;
    if (counts.active == 0 && counts.backoff == 0 && counts.in_flight == 0) {
      result.idle = true;
      return result;
    }
    if (result.cycles >= limits.max_cycles) {
      result.stopped_by = "the limit of " + std::to_string(limits.max_cycles) + " cycles";
      return result;
    }
    std::optional<Clock::TimePoint> next = virtual_clock_->NextTimer();
    if (!next) {
      result.stopped_by = "no timer left to wait for";
      return result;
    }
    if (*next - start > limits.max_virtual_time) {
      result.stopped_by = "the virtual time limit";
      return result;
    }
    virtual_clock_->AdvanceToNextTimer();
    DrainBindings();
    if (limits.after_step) limits.after_step();
  }
}

std::string Scheduler::CheckInvariants() const {
  if (std::string q = queue_->CheckInvariants(); !q.empty()) return "queue: " + q;
  if (std::string n = queue_->nominator().CheckInvariants(); !n.empty()) return "nominator: " + n;
  const auto profiles = this->profiles();
  for (const auto& pod : store_.List<model::Pod>()) {
    const std::string who = "pod " + pod->Key();
    const queue::PodLocation where = queue_->Where(pod->uid());
    if (!pod->node_name().empty()) {
      if (where != queue::PodLocation::kNone && where != queue::PodLocation::kInFlight) {
        return who + " is bound to " + std::string(pod->node_name()) + " but still queued (" +
               std::string(queue::LocationName(where)) + ")";
      }
    } else if (profiles->FrameworkFor(*pod) != nullptr && where == queue::PodLocation::kNone) {
      return who + " is pending but neither queued nor in flight";
    }
  }
  for (const auto& pending : queue_->PendingPods()) {
    auto stored = store_.Get<model::Pod>(pending.pod->namespace_name(), pending.pod->name());
    if ((!stored || stored->uid() != pending.pod->uid()) &&
        pending.where != queue::PodLocation::kInFlight) {
      return "pod " + pending.pod->Key() + " is queued (" +
             std::string(queue::LocationName(pending.where)) + ") but no longer in the store";
    }
  }
  if (auto diffs = cache::CompareWithStore(cache_, store_); !diffs.empty()) {
    return "cache: " + diffs.front();
  }
  return "";
}

std::optional<PodDiagnostics> Scheduler::Diagnostics(std::string_view uid) const {
  std::lock_guard lock(diag_mu_);
  auto it = diagnostics_.find(model::UidKey::Probe(uid));
  if (it == diagnostics_.end()) return std::nullopt;
  const PodEntry& e = it->second;
  const model::Interner& names = model::Interner::Global();
  PodDiagnostics d;
  d.attempts = e.attempts;
  d.message = e.message.str();
  d.gated = e.gated;
  d.nominated_node = names.Str(e.nominated_node);
  d.node = names.Str(e.node);
  return d;
}

void Scheduler::ForgetDiagnostics(std::string_view uid) {
  std::lock_guard lock(diag_mu_);
  auto it = diagnostics_.find(model::UidKey::Probe(uid));
  if (it == diagnostics_.end()) return;
  DropExplanationLocked(it->second);
  diagnostics_.erase(it);
}

void Scheduler::Record(const model::Pod& pod, const std::function<void(PodEntry&)>& edit) {
  std::lock_guard lock(diag_mu_);
  auto it = diagnostics_.find(model::UidKey::Probe(pod.uid()));
  if (it == diagnostics_.end())
    it = diagnostics_.emplace(model::UidKey(pod.uid()), PodEntry{}).first;
  edit(it->second);
}

void Scheduler::SetMessageLocked(PodEntry& e, std::string_view message) {
  if (message.empty()) {
    e.message = framework::Text();
  } else if (last_message_.view() == message) {
    e.message = last_message_;
  } else {
    e.message = framework::Text(std::string(message));
    last_message_ = e.message;
  }
}

}  // namespace schedhost::scheduler
