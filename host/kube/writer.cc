#include "host/kube/writer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

#include "host/kube/proto_codec.h"
#include "host/metrics/scheduler_metrics.h"
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

// Rfc3339Seconds renders Unix nanoseconds in whole seconds, as Kubernetes' Time fields hold them.
std::string Rfc3339Seconds(int64_t unix_ns) {
  return model::FormatRfc3339(unix_ns / 1'000'000'000 * 1'000'000'000);
}

std::string Now() { return Rfc3339Seconds(model::NowUnixNs()); }

std::string EventName(std::string_view pod) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(rng()));
  return std::string(pod) + suffix;
}

// SeriesKey is what makes two events alike for a series (client-go's eventKey): everything
// but the note and the time.
template <typename E>
std::string SeriesKey(const E& e) {
  std::string key;
  for (const std::string* part :
       {&e.type, &e.action, &e.reason, &e.scheduler, &e.namespace_name, &e.pod_name, &e.pod_uid,
        &e.related_namespace, &e.related_name, &e.related_uid}) {
    key += *part;
    key += '\0';
  }
  return key;
}

// EventCounters are schedhost_kube_events_total's children, one family per process.
struct EventCounters {
  metrics::Counter& written;
  metrics::Counter& aggregated;
  metrics::Counter& dropped;
  metrics::Counter& failed;
  metrics::Counter& retried;
};

const EventCounters& Counters() {
  static const EventCounters counters = [] {
    auto& family = metrics::DefaultRegistry().AddCounter(
        "schedhost_kube_events_total",
        "Events recorded to the API server, by result: 'written' writes accepted, "
        "'aggregated' events counted into a running series without a write, 'dropped' events "
        "not queued because the API server fell behind, 'failed' writes given up on, "
        "'retried' writes tried again.",
        {"result"});
    return EventCounters{family.With({"written"}), family.With({"aggregated"}),
                         family.With({"dropped"}), family.With({"failed"}),
                         family.With({"retried"})};
  }();
  return counters;
}

// Jittered is `d` scaled by a random factor in [1, 1.25) (client-go's wait.Jitter(d, 0.25)).
std::chrono::milliseconds Jittered(std::chrono::milliseconds d) {
  static thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> factor(1.0, 1.25);
  return std::chrono::milliseconds(static_cast<int64_t>(static_cast<double>(d.count()) * factor(rng)));
}

}  // namespace

std::pair<std::string, std::string_view> Writer::Body(const nlohmann::json& object) const {
  if (client_.protobuf()) {
    try {
      return {proto::EncodeObject(object), proto::kContentType};
    } catch (const proto::ProtoError& e) {
      spdlog::debug("kubernetes: sending {} as JSON: {}", object.value("kind", ""), e.what());
    }
  }
  return {object.dump(), "application/json"};
}

Writer::Writer(ApiClient& client, WriterOptions options)
    : client_(client),
      options_(std::move(options)),
      event_limiter_(options_.events_per_second, options_.event_burst) {
  Counters();  // the family exists from the start, before the first event
}

Writer::~Writer() { Stop(); }

void Writer::Start() {
  try {
    const Response r = client_.Call("GET", "/apis/events.k8s.io/v1");
    events_v1_ = r.status == 200;
  } catch (const ApiError& e) {
    spdlog::warn("kubernetes: probing the Events API: {}; using events.k8s.io/v1", e.what());
  }
  {
    std::lock_guard lock(mu_);
    const Clock::time_point now = Clock::now();
    next_finish_ = now + options_.series_finish;
    next_refresh_ = now + options_.series_refresh;
  }
  status_thread_ = std::thread([this] { StatusLoop(); });
  for (int i = 0; i < std::max(1, options_.event_senders); ++i) {
    event_threads_.emplace_back([this] { EventLoop(); });
  }
}

void Writer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !status_thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  event_cv_.notify_all();
  event_limiter_.Cancel();
  if (status_thread_.joinable()) status_thread_.join();
  for (std::thread& t : event_threads_) t.join();
  event_threads_.clear();
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
    const auto [body, content_type] = Body(binding);
    r = client_.Call("POST", PodPath(pod.namespace_name(), pod.name()) + "/binding", body,
                     content_type, fence_);
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
    std::string key = SeriesKey(event);
    const Clock::time_point now = Clock::now();
    auto it = recorded_.find(key);
    if (it == recorded_.end()) {
      Recorded r;
      r.name = EventName(event.pod_name);
      r.event_time_ns = model::NowUnixNs();
      r.last_seen = now;
      r.event = std::move(event);
      r.writing = true;
      if (!QueueWriteLocked(WriteOfLocked(key, r))) return;
      recorded_.emplace(std::move(key), std::move(r));
    } else {
      Recorded& r = it->second;
      r.last_seen = now;
      r.last_observed_ns = model::NowUnixNs();
      if (r.count > 0 || r.writing) {
        // A running series, or one whose create is still on its way: the count goes out with
        // the next write (after that create, at the refresh, or when the series ends).
        if (r.count == 0) {
          r.count = 2;  // written once the create is done
          return;
        }
        ++r.count;
        ++stats_.events_aggregated;
        Counters().aggregated.Inc();
        return;
      }
      r.count = 2;
      r.writing = true;
      if (!QueueWriteLocked(WriteOfLocked(it->first, r))) {
        r.count = 0;
        r.writing = false;
        return;
      }
    }
  }
  event_cv_.notify_one();
}

Writer::EventWrite Writer::WriteOfLocked(const std::string& key, const Recorded& r) {
  return EventWrite{key, r.event, r.name, r.event_time_ns, r.count, r.last_observed_ns, 0};
}

bool Writer::QueueWriteLocked(EventWrite write) {
  if (events_.size() >= options_.max_events) {
    ++stats_.events_dropped;
    Counters().dropped.Inc();
    return false;
  }
  events_.push_back(std::move(write));
  return true;
}

void Writer::EventWrittenLocked(const EventWrite& write) {
  auto it = recorded_.find(write.key);
  if (it == recorded_.end()) return;  // its series ended meanwhile
  Recorded& r = it->second;
  r.writing = false;
  if (r.count > write.count) {
    r.writing = QueueWriteLocked(WriteOfLocked(it->first, r));
    if (r.writing) event_cv_.notify_one();
  }
}

void Writer::SeriesUpkeepLocked(Clock::time_point now) {
  const bool finish = now >= next_finish_;
  const bool refresh = now >= next_refresh_;
  if (finish) next_finish_ = now + options_.series_finish;
  if (refresh) next_refresh_ = now + options_.series_refresh;
  if (!finish && !refresh) return;
  bool queued = false;
  for (auto it = recorded_.begin(); it != recorded_.end();) {
    Recorded& r = it->second;
    // One being written ends at a later upkeep, once its write is done.
    const bool ended = finish && !r.writing && now - r.last_seen >= options_.series_finish;
    if (r.count > 0 && !r.writing && (ended || refresh)) {
      r.writing = QueueWriteLocked(WriteOfLocked(it->first, r));
      queued |= r.writing;
    }
    it = ended ? recorded_.erase(it) : std::next(it);
  }
  if (queued) event_cv_.notify_all();
}

void Writer::CountEvents(uint64_t WriterStats::*counter, uint64_t n) {
  {
    std::lock_guard lock(mu_);
    stats_.*counter += n;
  }
  const EventCounters& c = Counters();
  if (counter == &WriterStats::events) c.written.Inc(n);
  if (counter == &WriterStats::event_errors) c.failed.Inc(n);
  if (counter == &WriterStats::event_retries) c.retried.Inc(n);
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
    const Clock::time_point now = Clock::now();
    if (stopping_) return;  // events are not worth delaying a shutdown for
    SeriesUpkeepLocked(now);
    if (!event_retries_.empty() && event_retries_.begin()->first <= now) {
      events_.push_back(std::move(event_retries_.begin()->second));
      event_retries_.erase(event_retries_.begin());
    }
    if (events_.empty()) {
      Clock::time_point wake = std::min(next_finish_, next_refresh_);
      if (!event_retries_.empty()) wake = std::min(wake, event_retries_.begin()->first);
      event_cv_.wait_until(lock, wake);
      continue;
    }
    EventWrite write = std::move(events_.front());
    events_.pop_front();
    lock.unlock();
    if (!event_limiter_.Acquire()) return;
    const bool answered = SendEvent(write);
    lock.lock();
    if (answered) {
      EventWrittenLocked(write);
      continue;
    }
    if (++write.tries >= options_.event_tries) {
      EventWrittenLocked(write);
      lock.unlock();
      spdlog::warn("kubernetes: recording event {} about pod {}/{}: no answer after {} tries",
                   write.event.reason, write.event.namespace_name, write.event.pod_name,
                   write.tries);
      CountEvents(&WriterStats::event_errors);
      lock.lock();
      continue;
    }
    event_retries_.emplace(Clock::now() + Jittered(options_.event_retry_delay), std::move(write));
    lock.unlock();
    CountEvents(&WriterStats::event_retries);
    lock.lock();
  }
}

bool Writer::SendEvent(const EventWrite& write) {
  const Event& event = write.event;
  const std::string scheduler = event.scheduler.empty() ? "schedhost" : event.scheduler;
  const std::string collection =
      events_v1_ ? "/apis/events.k8s.io/v1/namespaces/" + UrlEscape(event.namespace_name) + "/events"
                 : "/api/v1/namespaces/" + UrlEscape(event.namespace_name) + "/events";
  const std::string last_observed = model::FormatMicroTime(write.last_observed_ns);
  // A series is a strategic-merge patch of the recorded event's count (client-go patches the
  // difference from the event without a series); when the object is gone it is created anew.
  if (write.count > 0) {
    nlohmann::json patch;
    if (events_v1_) {
      patch = {{"series", {{"count", write.count}, {"lastObservedTime", last_observed}}}};
    } else {
      patch = {{"count", write.count},
               {"lastTimestamp", Rfc3339Seconds(write.last_observed_ns)}};
    }
    try {
      const Response r =
          client_.Call("PATCH", collection + "/" + UrlEscape(write.name), patch.dump(),
                       "application/strategic-merge-patch+json", fence_);
      if (r.status == 200) {
        CountEvents(&WriterStats::events);
        return true;
      }
      if (r.status != 404) {
        spdlog::debug("kubernetes: {}", ApiError::From(r, "updating an event series").what());
        CountEvents(&WriterStats::event_errors);
        return true;
      }
    } catch (const ApiError& e) {
      return NoAnswer(e, "updating an event series");
    }
  }
  const nlohmann::json regarding = {{"apiVersion", "v1"},
                                    {"kind", "Pod"},
                                    {"namespace", event.namespace_name},
                                    {"name", event.pod_name},
                                    {"uid", event.pod_uid}};
  nlohmann::json body;
  if (events_v1_) {
    body = {{"apiVersion", "events.k8s.io/v1"},
            {"kind", "Event"},
            {"metadata", {{"name", write.name}, {"namespace", event.namespace_name}}},
            {"eventTime", model::FormatMicroTime(write.event_time_ns)},
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
    if (write.count > 0) {
      body["series"] = {{"count", write.count}, {"lastObservedTime", last_observed}};
    }
  } else {
    const std::string first = Rfc3339Seconds(write.event_time_ns);
    body = {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", write.name}, {"namespace", event.namespace_name}}},
            {"involvedObject", regarding},
            {"reason", event.reason},
            {"message", event.note},
            {"type", event.type},
            {"action", event.action},
            {"source", {{"component", scheduler}}},
            {"reportingComponent", scheduler},
            {"reportingInstance", scheduler + "-" + options_.instance},
            {"firstTimestamp", first},
            {"lastTimestamp", write.count > 0 ? Rfc3339Seconds(write.last_observed_ns) : first},
            {"count", std::max(1, write.count)}};
  }
  try {
    const auto [bytes, content_type] = Body(body);
    const Response r = client_.Call("POST", collection, bytes, content_type, fence_);
    if (r.status == 201 || r.status == 200) {
      CountEvents(&WriterStats::events);
      return true;
    }
    // A series created by another write meanwhile is tried again, as client-go does; any other
    // refusal is final.
    if (r.status == 409 && write.count > 0) return false;
    spdlog::debug("kubernetes: {}", ApiError::From(r, "recording an event").what());
    CountEvents(&WriterStats::event_errors);
    return true;
  } catch (const ApiError& e) {
    return NoAnswer(e, "recording an event");
  }
}

bool Writer::NoAnswer(const ApiError& e, std::string_view what) {
  if (e.not_sent()) {
    CountEvents(&WriterStats::not_leading);
    return true;
  }
  spdlog::debug("kubernetes: {}: {}", what, e.what());
  return client_.cancelled();  // shutting down: not worth another try
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
