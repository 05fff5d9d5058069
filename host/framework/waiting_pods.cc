// WaitingPods: per-plugin timers, Allow by all, Reject by any (reference/004), and the id-based
// ABI handles that let a plugin hold a waiting pod without risking a dangling pointer.
#include "host/framework/waiting_pods.h"

#include <algorithm>
#include <atomic>

#include "host/config/duration.h"
#include "host/framework/framework.h"

namespace schedhost::framework {
namespace {

// Every live waiting pod of the process by handle id: handles carry no pointer, so a plugin
// that keeps one past the wait gets "not found" instead of touching freed memory.
struct HandleRegistry {
  std::mutex mu;
  std::unordered_map<uint64_t, std::weak_ptr<WaitingPod>> by_id;
  std::atomic<uint64_t> next_id{1};
};

HandleRegistry& Handles() {
  static HandleRegistry registry;
  return registry;
}

schedhost_waiting_pod* HandleOf(uint64_t id) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the handle is an opaque id, never dereferenced.
  return reinterpret_cast<schedhost_waiting_pod*>(static_cast<uintptr_t>(id));
}

}  // namespace

std::string TimeoutMessage(std::chrono::nanoseconds timeout, std::string_view plugin) {
  return "rejected due to timeout after waiting " + config::FormatDuration(timeout) +
         " at plugin " + std::string(plugin);
}

WaitingPod::WaitingPod(WaitingPods* owner, Clock* clock, std::shared_ptr<const model::Pod> pod,
                       uint64_t id, DoneFn done)
    : owner_(owner), clock_(clock), pod_(std::move(pod)), id_(id), done_(std::move(done)) {}

schedhost_waiting_pod* WaitingPod::handle() const { return HandleOf(id_); }

std::vector<std::string> WaitingPod::PendingPlugins() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [plugin, timer] : pending_) out.push_back(plugin);
  return out;
}

bool WaitingPod::Allow(std::string_view plugin) {
  Clock::TimerId timer = 0;
  bool all_allowed = false;
  {
    std::lock_guard lock(mu_);
    if (decision_) return false;
    if (auto it = pending_.find(plugin); it != pending_.end()) {
      timer = it->second;
      pending_.erase(it);
    }
    all_allowed = pending_.empty();
  }
  if (timer != 0) clock_->Cancel(timer);
  // A rejection racing in between wins; Decide then returns false and nothing changes.
  if (all_allowed) Decide(Status::Success());
  return true;
}

bool WaitingPod::Reject(std::string_view plugin, std::string_view message) {
  return Decide(Status::Make(Code::kUnschedulable, std::string(message), Text::Intern(plugin)));
}

Status WaitingPod::Wait() const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return decision_.has_value(); });
  return *decision_;
}

std::optional<Status> WaitingPod::decision() const {
  std::lock_guard lock(mu_);
  return decision_;
}

bool WaitingPod::Decide(const Status& status) {
  std::vector<Clock::TimerId> timers;
  DoneFn done;
  {
    std::lock_guard lock(mu_);
    if (decision_) return false;
    decision_ = status;
    for (const auto& [plugin, timer] : pending_) timers.push_back(timer);
    pending_.clear();
    done = std::move(done_);
  }
  cv_.notify_all();
  for (Clock::TimerId t : timers) clock_->Cancel(t);
  owner_->Remove(*this);
  if (done) done(status);
  return true;
}

WaitingPods::~WaitingPods() {
  std::map<std::string, std::shared_ptr<WaitingPod>, std::less<>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(pods_);
  }
  for (auto& [uid, wp] : left) {
    std::vector<Clock::TimerId> timers;
    {
      std::lock_guard lock(wp->mu_);
      for (const auto& [plugin, timer] : wp->pending_) timers.push_back(timer);
      wp->pending_.clear();
    }
    for (Clock::TimerId t : timers) clock_->Cancel(t);
    std::lock_guard lock(Handles().mu);
    Handles().by_id.erase(wp->id_);
  }
}

void WaitingPods::SetClock(Clock* clock) {
  std::lock_guard lock(mu_);
  clock_ = clock;
}

std::shared_ptr<WaitingPod> WaitingPods::Add(std::shared_ptr<const model::Pod> pod,
                                             const PermitWaits& waits, WaitingPod::DoneFn done) {
  if (!pod) throw FrameworkError("WaitingPods::Add: the pod is null");
  if (waits.empty()) throw FrameworkError("WaitingPods::Add: no plugin asked to wait");
  Clock* clock = nullptr;
  {
    std::lock_guard lock(mu_);
    clock = clock_;
  }
  const std::string who = "pod " + pod->Key();
  if (clock == nullptr) {
    throw FrameworkError(who + " waits at Permit but the host gave the framework no clock");
  }
  std::shared_ptr<WaitingPod> wp(
      new WaitingPod(this, clock, std::move(pod), Handles().next_id.fetch_add(1), std::move(done)));
  // The pod's lock is held until every timer is armed: an Allow or a timer that comes early
  // waits, so the pod never looks "allowed by all" before its plugins are recorded.
  std::lock_guard wp_lock(wp->mu_);
  {
    std::lock_guard lock(mu_);
    if (!pods_.emplace(wp->uid(), wp).second) {
      throw FrameworkError(who + " is already waiting at Permit");
    }
  }
  {
    std::lock_guard lock(Handles().mu);
    Handles().by_id.emplace(wp->id_, wp);
  }
  std::weak_ptr<WaitingPod> weak = wp;
  for (const auto& [plugin, timeout] : waits) {
    if (wp->pending_.count(plugin)) continue;
    wp->pending_[plugin] = clock->AfterFunc(timeout, [weak, plugin = plugin, timeout = timeout] {
      if (auto self = weak.lock()) self->Reject(plugin, TimeoutMessage(timeout, plugin));
    });
  }
  return wp;
}

std::shared_ptr<WaitingPod> WaitingPods::Get(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : it->second;
}

void WaitingPods::Iterate(const std::function<bool(WaitingPod&)>& fn) const {
  std::vector<std::shared_ptr<WaitingPod>> pods;
  {
    std::lock_guard lock(mu_);
    for (const auto& [uid, wp] : pods_) pods.push_back(wp);
  }
  for (const auto& wp : pods) {
    if (!fn(*wp)) return;
  }
}

bool WaitingPods::Reject(std::string_view uid, std::string_view plugin, std::string_view message) {
  std::shared_ptr<WaitingPod> wp = Get(uid);
  return wp && wp->Reject(plugin, message);
}

size_t WaitingPods::RejectAll(std::string_view message) {
  size_t n = 0;
  Iterate([&](WaitingPod& wp) {
    if (wp.Reject("", message)) ++n;
    return true;
  });
  return n;
}

size_t WaitingPods::size() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

std::shared_ptr<WaitingPod> WaitingPods::FromHandle(schedhost_waiting_pod* handle) {
  const auto id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  std::lock_guard lock(Handles().mu);
  auto it = Handles().by_id.find(id);
  return it == Handles().by_id.end() ? nullptr : it->second.lock();
}

void WaitingPods::Remove(const WaitingPod& wp) {
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(wp.uid());
    if (it != pods_.end() && it->second.get() == &wp) pods_.erase(it);
  }
  std::lock_guard lock(Handles().mu);
  Handles().by_id.erase(wp.id_);
}

}  // namespace schedhost::framework
