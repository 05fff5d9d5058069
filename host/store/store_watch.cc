// The event log and watches. Writers record events under the store's mutex; callbacks run
// with it released, by one delivering thread at a time, so every watcher sees its events in
// resource-version order. A writer returns once its event has been delivered, except when it
// writes from inside a callback: then the running delivery loop picks the event up next.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>
#include <variant>

#include "host/store/store_internal.h"

namespace schedhost::store {

struct Store::Watcher {
  uint64_t id = 0;
  std::function<void(const Event&)> fn;
  std::deque<Event> queue;  // Guarded by Store::mu_.
  std::atomic<bool> active{true};
  std::mutex call_mu;  // Held while fn runs, so Unwatch can wait for a running call.
};

namespace {

// The stores this thread is delivering events for (nested when a callback writes elsewhere).
thread_local std::vector<const Store*> t_delivering;

bool DeliveringHere(const Store* store) {
  return std::find(t_delivering.begin(), t_delivering.end(), store) != t_delivering.end();
}

std::shared_ptr<const void> Erased(const model::Object& object) {
  return std::visit([](const auto& p) -> std::shared_ptr<const void> { return p; }, object);
}

// Restored is the object `erased` holds, as the alternative of model::Object that `kind` names.
model::Object Restored(Kind kind, const std::shared_ptr<const void>& erased) {
  switch (kind) {
    case Kind::kPod:
      return std::static_pointer_cast<const model::Pod>(erased);
    case Kind::kNode:
      return std::static_pointer_cast<const model::Node>(erased);
    case Kind::kPodDisruptionBudget:
      return std::static_pointer_cast<const model::PodDisruptionBudget>(erased);
    case Kind::kPriorityClass:
      return std::static_pointer_cast<const model::PriorityClass>(erased);
    case Kind::kNamespace:
      return std::static_pointer_cast<const model::Namespace>(erased);
  }
  throw std::logic_error("store: an event log entry of an unknown kind");
}

}  // namespace

void Store::Record(EventType type, model::Object object, std::optional<model::Object> old,
                   uint64_t resource_version) {
  Event event;
  event.type = type;
  event.kind = KindOf(object);
  event.object = std::move(object);
  event.old_object = std::move(old);
  event.resource_version = resource_version;
  log_.push_back({Erased(event.object), event.old_object ? Erased(*event.old_object) : nullptr,
                  resource_version, type, event.kind});
  for (auto& [id, watcher] : watchers_) watcher->queue.push_back(event);
  while (log_.size() > limits_.event_log_length) {
    compacted_rv_ = log_.front().resource_version;
    log_.pop_front();
  }
}

void Store::Deliver(std::unique_lock<std::mutex>& lock) {
  if (DeliveringHere(this)) return;
  // Whoever delivers drains every queue before stopping, so once it is idle our events are
  // either delivered or still queued for us.
  idle_cv_.wait(lock, [this] { return !delivering_; });
  delivering_ = true;
  t_delivering.push_back(this);
  for (;;) {
    std::vector<std::pair<std::shared_ptr<Watcher>, std::deque<Event>>> batch;
    for (auto& [id, watcher] : watchers_) {
      if (watcher->queue.empty()) continue;
      batch.emplace_back(watcher, std::move(watcher->queue));
      watcher->queue.clear();
    }
    if (batch.empty()) break;
    lock.unlock();
    for (auto& [watcher, events] : batch) {
      std::lock_guard call(watcher->call_mu);
      for (const Event& event : events) {
        if (!watcher->active.load()) break;
        try {
          watcher->fn(event);
        } catch (...) {
          failed_callbacks_.fetch_add(1);
        }
      }
    }
    lock.lock();
  }
  t_delivering.pop_back();
  delivering_ = false;
  idle_cv_.notify_all();
}

void Store::QueueResync(Watcher& watcher) const {
  auto add = [&](const auto& table) {
    for (const auto& object : table.items) {
      Event event;
      event.type = EventType::kAdded;
      event.object = object;
      event.kind = KindOf(event.object);
      event.resource_version = rv_;
      event.resync = true;
      watcher.queue.push_back(std::move(event));
    }
  };
  // Classes and nodes first, so a consumer sees them before the pods that refer to them.
  add(classes_);
  add(nodes_);
  add(pdbs_);
  add(pods_);
}

uint64_t Store::Watch(uint64_t from_rv, std::function<void(const Event&)> fn) {
  if (!fn) throw StoreError(ErrorCode::kInvalid, "Watch: the callback is empty");
  std::unique_lock lock(mu_);
  if (from_rv > rv_) {
    throw StoreError(ErrorCode::kInvalid, "Watch: resource version " + std::to_string(from_rv) +
                                              " is newer than the store's " + std::to_string(rv_));
  }
  auto watcher = std::make_shared<Watcher>();
  watcher->id = next_watch_id_++;
  watcher->fn = std::move(fn);
  if (from_rv < compacted_rv_) {
    QueueResync(*watcher);
  } else {
    auto first = std::upper_bound(
        log_.begin(), log_.end(), from_rv,
        [](uint64_t rv, const LogEntry& entry) { return rv < entry.resource_version; });
    for (auto it = first; it != log_.end(); ++it) {
      Event event;
      event.type = it->type;
      event.kind = it->kind;
      event.object = Restored(it->kind, it->object);
      if (it->old_object) event.old_object = Restored(it->kind, it->old_object);
      event.resource_version = it->resource_version;
      watcher->queue.push_back(std::move(event));
    }
  }
  const uint64_t id = watcher->id;
  watchers_.emplace(id, std::move(watcher));
  Deliver(lock);
  return id;
}

bool Store::Unwatch(uint64_t id) {
  std::shared_ptr<Watcher> watcher;
  {
    std::lock_guard lock(mu_);
    auto it = watchers_.find(id);
    if (it == watchers_.end()) return false;
    watcher = std::move(it->second);
    watchers_.erase(it);
    watcher->active.store(false);
    watcher->queue.clear();
  }
  // Another thread may be inside fn right now; wait for that call to end. From inside a
  // callback of this store the flag is enough (waiting here could wait for ourselves).
  if (!DeliveringHere(this)) {
    std::lock_guard call(watcher->call_mu);
  }
  return true;
}

uint64_t Store::oldest_replayable_rv() const {
  std::lock_guard lock(mu_);
  return compacted_rv_;
}

}  // namespace schedhost::store
