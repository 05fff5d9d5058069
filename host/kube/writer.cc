#include "host/kube/writer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

#include "host/model/meta.h"

namespace schedhost::kube {
namespace {

// Events carry at most this many bytes of note (upstream's NoteLengthLimit).
constexpr size_t kNoteLengthLimit = 1024;

std::string Truncate(std::string_view message) {
  if (message.size() <= kNoteLengthLimit) return std::string(message);
  constexpr std::string_view kSuffix = " ...";
  return std::string(message.substr(0, kNoteLengthLimit - kSuffix.size())) + std::string(kSuffix);
}

std::string PodPath(std::string_view ns, std::string_view name) {
  return "/api/v1/namespaces/" + UrlEscape(ns) + "/pods/" + UrlEscape(name);
}

std::string Now() {
  return model::FormatRfc3339(model::NowUnixNs() / 1'000'000'000 * 1'000'000'000);
}

std::string EventName(std::string_view pod) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(rng()));
  return std::string(pod) + suffix;
}

}  // namespace

Writer::Writer(ApiClient& client, WriterOptions options)
    : client_(client),
      options_(std::move(options)),
      event_limiter_(options_.events_per_second, options_.event_burst) {}

Writer::~Writer() { Stop(); }

void Writer::Start() {
  try {
    const Response r = client_.Call("GET", "/apis/events.k8s.io/v1");
    events_v1_ = r.status == 200;
  } catch (const ApiError& e) {
    spdlog::warn("kubernetes: probing the Events API: {}; using events.k8s.io/v1", e.what());
  }
  status_thread_ = std::thread([this] { StatusLoop(); });
  event_thread_ = std::thread([this] { EventLoop(); });
}

void Writer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !status_thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  event_limiter_.Cancel();
  if (status_thread_.joinable()) status_thread_.join();
  if (event_thread_.joinable()) event_thread_.join();
}

WriterStats Writer::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string Writer::forbidden() const {
  std::lock_guard lock(mu_);
  return forbidden_;
}

void Writer::Bind(const model::Pod& pod, std::string_view node) {
  nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", {{"name", pod.name()}, {"namespace", pod.namespace_name()}, {"uid", pod.uid()}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  const std::string what = "binding pod " + pod.Key() + " to node " + std::string(node);
  Response r;
  try {
    r = client_.Call("POST", PodPath(pod.namespace_name(), pod.name()) + "/binding",
                     binding.dump(), "application/json", fence_);
  } catch (const ApiError& e) {
    std::lock_guard lock(mu_);
    if (e.not_sent()) {
      ++stats_.not_leading;
      throw store::StoreError(store::ErrorCode::kUnavailable,
                              what + ": not sent, this replica no longer leads");
    }
    ++stats_.binding_errors;
    throw store::StoreError(store::ErrorCode::kUnavailable, what + ": " + e.what());
  }
  if (r.status == 201 || r.status == 200) {
    std::lock_guard lock(mu_);
    ++stats_.bindings;
    forbidden_.clear();
    last_condition_.erase(std::string(pod.uid()));
    return;
  }
  const ApiError error = ApiError::From(r, what);
  if (r.status == 409 || r.status == 404) {
    {
      std::lock_guard lock(mu_);
      ++stats_.binding_conflicts;
    }
    throw store::StoreError(store::ErrorCode::kSuperseded, error.what());
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.binding_errors;
    if (r.status == 403) forbidden_ = error.what();
  }
  if (r.status == 403) spdlog::error("kubernetes: {}", error.what());
  throw store::StoreError(store::ErrorCode::kUnavailable, error.what());
}

std::shared_ptr<const model::Pod> Writer::SetNominatedNodeName(const model::Pod& pod,
                                                               std::string_view node) {
  // Clearing a nomination the pod does not have costs a request for nothing.
  if (node.empty() && pod.nominated_node_name().empty()) {
    std::lock_guard lock(mu_);
    auto it = status_.find(std::string(pod.uid()));
    if (it == status_.end() || !it->second.nomination) return nullptr;
  }
  QueueStatus(pod, [&](StatusUpdate& u) {
    u.nomination = true;
    u.nominated_node = std::string(node);
  });
  return nullptr;
}

void Writer::ReportUnschedulable(const model::Pod& pod, std::string_view reason,
                                 std::string_view message) {
  QueueStatus(pod, [&](StatusUpdate& u) {
    u.condition = true;
    u.reason = std::string(reason);
    u.message = std::string(message);
  });
  Event event;
  event.namespace_name = std::string(pod.namespace_name());
  event.pod_name = std::string(pod.name());
  event.pod_uid = std::string(pod.uid());
  event.scheduler = std::string(pod.scheduler_name());
  event.type = "Warning";
  event.reason = "FailedScheduling";
  event.action = "Scheduling";
  event.note = Truncate(message);
  QueueEvent(std::move(event));
}

void Writer::ReportScheduled(const model::Pod& pod, std::string_view node) {
  Event event;
  event.namespace_name = std::string(pod.namespace_name());
  event.pod_name = std::string(pod.name());
  event.pod_uid = std::string(pod.uid());
  event.scheduler = std::string(pod.scheduler_name());
  event.type = "Normal";
  event.reason = "Scheduled";
  event.action = "Binding";
  event.note = "Successfully assigned " + event.namespace_name + "/" + event.pod_name + " to " +
               std::string(node);
  QueueEvent(std::move(event));
}

void Writer::Evict(const model::Pod& victim, const model::Pod* preemptor) {
  const std::string path = PodPath(victim.namespace_name(), victim.name());
  const std::string scheduler =
      preemptor != nullptr ? std::string(preemptor->scheduler_name()) : "schedhost";
  nlohmann::json condition = {
      {"type", "DisruptionTarget"},
      {"status", "True"},
      {"reason", "PreemptionByScheduler"},
      {"message", scheduler + ": preempting to accommodate a higher priority pod"},
      {"lastTransitionTime", Now()}};
  nlohmann::json patch = {{"status", {{"conditions", nlohmann::json::array({condition})}}}};
  const std::string what = "evicting pod " + victim.Key();
  try {
    Response r = client_.Call("PATCH", path + "/status", patch.dump(),
                              "application/strategic-merge-patch+json", fence_);
    if (r.status == 404) return;  // already gone
    if (r.status != 200) throw ApiError::From(r, what + ": adding DisruptionTarget");
    nlohmann::json options = {{"apiVersion", "v1"},
                              {"kind", "DeleteOptions"},
                              {"preconditions", {{"uid", victim.uid()}}}};
    r = client_.Call("DELETE", path, options.dump(), "application/json", fence_);
    if (r.status == 404 || r.status == 409) return;  // gone, or re-created: not this victim
    if (r.status != 200 && r.status != 202) throw ApiError::From(r, what);
  } catch (const ApiError& e) {
    throw store::StoreError(store::ErrorCode::kUnavailable, e.what());
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.evictions;
  }
  Event event;
  event.namespace_name = std::string(victim.namespace_name());
  event.pod_name = std::string(victim.name());
  event.pod_uid = std::string(victim.uid());
  event.scheduler = scheduler;
  event.type = "Normal";
  event.reason = "Preempted";
  event.action = "Preempting";
  event.note = "Preempted by pod " +
               (preemptor != nullptr ? std::string(preemptor->uid()) : std::string("<unknown>")) +
               " on node " + std::string(victim.node_name());
  if (preemptor != nullptr) {
    event.related_namespace = std::string(preemptor->namespace_name());
    event.related_name = std::string(preemptor->name());
    event.related_uid = std::string(preemptor->uid());
  }
  QueueEvent(std::move(event));
}

void Writer::QueueStatus(const model::Pod& pod, const std::function<void(StatusUpdate&)>& change) {
  const std::string uid(pod.uid());
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    auto [it, added] = status_.try_emplace(uid);
    if (added) {
      it->second.namespace_name = std::string(pod.namespace_name());
      it->second.name = std::string(pod.name());
      it->second.uid = uid;
      status_order_.push_back(uid);
    }
    change(it->second);
  }
  cv_.notify_all();
}

void Writer::QueueEvent(Event event) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (events_.size() >= options_.max_events) {
      ++stats_.events_dropped;
      return;
    }
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

void Writer::StatusLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !status_order_.empty(); });
    if (status_order_.empty()) return;  // stopping, nothing left
    const std::string uid = std::move(status_order_.front());
    status_order_.pop_front();
    auto it = status_.find(uid);
    if (it == status_.end()) continue;
    StatusUpdate update = std::move(it->second);
    status_.erase(it);
    if (update.condition) {
      // Upstream patches only when the condition changes.
      std::string& last = last_condition_[uid];
      const std::string now = update.reason + "\n" + update.message;
      if (last == now) {
        update.condition = false;
      } else {
        last = now;
      }
    }
    if (!update.condition && !update.nomination) continue;
    if (stopping_ && client_.cancelled()) return;
    lock.unlock();
    SendStatus(update);
    lock.lock();
  }
}

void Writer::SendStatus(const StatusUpdate& update) {
  nlohmann::json status = nlohmann::json::object();
  if (update.condition) {
    status["conditions"] = nlohmann::json::array({{{"type", "PodScheduled"},
                                                   {"status", "False"},
                                                   {"reason", update.reason},
                                                   {"message", update.message},
                                                   {"lastProbeTime", nullptr},
                                                   {"lastTransitionTime", Now()}}});
  }
  if (update.nomination) {
    status["nominatedNodeName"] = update.nominated_node.empty()
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(update.nominated_node);
  }
  // The uid guards against patching a pod of the same name created since.
  nlohmann::json patch = {{"metadata", {{"uid", update.uid}}}, {"status", std::move(status)}};
  bool ok = false;
  try {
    const Response r =
        client_.Call("PATCH", PodPath(update.namespace_name, update.name) + "/status", patch.dump(),
                     "application/strategic-merge-patch+json", fence_);
    ok = r.status == 200;
    // 404 / 409: the pod is gone or was re-created; its watch event says so.
    if (!ok && r.status != 404 && r.status != 409) {
      spdlog::warn("kubernetes: {}",
                   ApiError::From(
                       r, "updating the status of pod " + update.namespace_name + "/" + update.name)
                       .what());
    }
  } catch (const ApiError& e) {
    if (e.not_sent()) {
      std::lock_guard lock(mu_);
      ++stats_.not_leading;
      return;
    }
    if (!client_.cancelled()) {
      spdlog::warn("kubernetes: updating the status of pod {}/{}: {}", update.namespace_name,
                   update.name, e.what());
    }
  }
  std::lock_guard lock(mu_);
  ++(ok ? stats_.status_patches : stats_.status_errors);
}

void Writer::EventLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !events_.empty(); });
    if (stopping_) return;  // events are not worth delaying a shutdown for
    Event event = std::move(events_.front());
    events_.pop_front();
    lock.unlock();
    if (!event_limiter_.Acquire()) return;
    SendEvent(event);
    lock.lock();
  }
}

void Writer::SendEvent(const Event& event) {
  const std::string scheduler = event.scheduler.empty() ? "schedhost" : event.scheduler;
  const nlohmann::json regarding = {{"apiVersion", "v1"},
                                    {"kind", "Pod"},
                                    {"namespace", event.namespace_name},
                                    {"name", event.pod_name},
                                    {"uid", event.pod_uid}};
  nlohmann::json body;
  std::string path;
  const std::string name = EventName(event.pod_name);
  if (events_v1_) {
    path = "/apis/events.k8s.io/v1/namespaces/" + UrlEscape(event.namespace_name) + "/events";
    body = {{"apiVersion", "events.k8s.io/v1"},
            {"kind", "Event"},
            {"metadata", {{"name", name}, {"namespace", event.namespace_name}}},
            {"eventTime", model::FormatMicroTime(model::NowUnixNs())},
            {"reportingController", scheduler},
            {"reportingInstance", scheduler + "-" + options_.instance},
            {"action", event.action},
            {"reason", event.reason},
            {"regarding", regarding},
            {"note", event.note},
            {"type", event.type}};
    if (!event.related_name.empty()) {
      body["related"] = {{"apiVersion", "v1"},
                         {"kind", "Pod"},
                         {"namespace", event.related_namespace},
                         {"name", event.related_name},
                         {"uid", event.related_uid}};
    }
  } else {
    path = "/api/v1/namespaces/" + UrlEscape(event.namespace_name) + "/events";
    const std::string now = Now();
    body = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", name}, {"namespace", event.namespace_name}}},
            {"involvedObject", regarding},
            {"reason", event.reason},
            {"message", event.note},
            {"type", event.type},
            {"action", event.action},
            {"source", {{"component", scheduler}}},
            {"reportingComponent", scheduler},
            {"reportingInstance", scheduler + "-" + options_.instance},
            {"firstTimestamp", now},
            {"lastTimestamp", now},
            {"count", 1}};
  }
  bool ok = false;
  try {
    const Response r = client_.Call("POST", path, body.dump(), "application/json", fence_);
    ok = r.status == 201 || r.status == 200;
    if (!ok) spdlog::debug("kubernetes: {}", ApiError::From(r, "recording an event").what());
  } catch (const ApiError& e) {
    if (e.not_sent()) {
      std::lock_guard lock(mu_);
      ++stats_.not_leading;
      return;
    }
    spdlog::debug("kubernetes: recording an event: {}", e.what());
  }
  std::lock_guard lock(mu_);
  ++(ok ? stats_.events : stats_.event_errors);
}

void Writer::WriteObject(const store::KindInfo& kind, store::ObjectWriteOp op,
                         std::string_view namespace_name, std::string_view name,
                         std::string_view body) {
  using Op = store::ObjectWriteOp;
  const std::string ns = !kind.namespaced          ? ""
                         : namespace_name.empty() ? "default"
                                                  : std::string(namespace_name);
  const std::string collection = CollectionPath(kind, ns);
  const std::string item = collection + "/" + UrlEscape(name);
  const std::string what = std::string(op == Op::kCreate ? "creating" : op == Op::kDelete
                                                                           ? "deleting"
                                                                           : "writing") +
                           " " + kind.kind + " " + (ns.empty() ? "" : ns + "/") +
                           std::string(name);
  std::string method = "PUT";
  std::string target = item;
  std::string content_type = "application/json";
  switch (op) {
    case Op::kCreate: method = "POST"; target = collection; break;
    case Op::kUpdate: break;
    case Op::kUpdateStatus: target = item + "/status"; break;
    case Op::kMergePatch:
      method = "PATCH";
      content_type = "application/merge-patch+json";
      break;
    case Op::kMergePatchStatus:
      method = "PATCH";
      target = item + "/status";
      content_type = "application/merge-patch+json";
      break;
    case Op::kDelete: method = "DELETE"; break;
  }
  Response r;
  try {
    r = client_.Call(method, target, op == Op::kDelete ? std::string_view() : body, content_type,
                     fence_);
  } catch (const ApiError& e) {
    if (e.not_sent()) {
      throw store::StoreError(store::ErrorCode::kUnavailable,
                              what + ": not sent, this replica no longer leads");
    }
    throw store::StoreError(store::ErrorCode::kUnavailable, what + ": " + e.what());
  }
  if (r.status >= 200 && r.status < 300) return;
  const ApiError error = ApiError::From(r, what);
  store::ErrorCode code = store::ErrorCode::kUnavailable;
  switch (r.status) {
    case 400: case 415: case 422: code = store::ErrorCode::kInvalid; break;
    case 403: code = store::ErrorCode::kForbidden; break;
    case 404: code = store::ErrorCode::kNotFound; break;
    case 409:
      code = op == Op::kCreate ? store::ErrorCode::kAlreadyExists : store::ErrorCode::kConflict;
      break;
    default: break;
  }
  throw store::StoreError(code, error.what());
}

}  // namespace schedhost::kube
