// Writer: the scheduler's ClusterWriter against an API server, as kube-scheduler writes.
// - Bind: `POST pods/{name}/binding` with the pod's uid, on the calling binding-cycle thread (its
//   own lane: it never waits behind status patches or events), in protobuf when the client
//   speaks it (as are event creates; patches are JSON). 409 and 404 mean someone else
//   bound the pod or it is going away: kSuperseded, never retried.
// - Status: a strategic-merge patch of `pods/{name}/status` (PodScheduled=False with upstream's
//   reason and message; nominatedNodeName set or cleared), sent by a thread of its own; only
//   the latest patch per pod is kept while one waits.
// - Evict: the victim gets DisruptionTarget=True (PreemptionByScheduler), then a DELETE with
//   its uid as precondition and the default grace period, and a Preempted event.
// - Events (events.k8s.io/v1 where served, else core/v1): Scheduled, FailedScheduling and
//   Preempted with upstream's reasons, actions and notes, recorded as client-go's events
//   library records them: an event like one recorded in the last 6 minutes (same type, action,
//   reason, reporter, regarding and related object) is not created again but becomes a series,
//   its count patched at the second occurrence, every 30 minutes while it goes on and once
//   more when it ends; an event the API server did not answer is tried again 10 s later, up to
//   12 times. Writes go out several at once (event_senders) under the client's rate limit, as
//   client-go writes each in a goroutine of its own; when the API server is gone so long that
//   max_events (100,000) wait, new ones are dropped and counted (schedhost_kube_events_total):
//   an event never blocks scheduling.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "host/kube/api_client.h"
#include "host/store/cluster_writer.h"

namespace schedhost::kube {

// WriterOptions tune the writer.
struct WriterOptions {
  // instance names this replica in events' reportingInstance ("<scheduler>-<instance>").
  std::string instance;
  // events_per_second and event_burst bound the events sent beyond the client's own limit
  // (0: none); the queue holds max_events, and events beyond them are dropped. client-go
  // writes each event on a goroutine of its own, so at any rate its API server takes it drops
  // none; max_events is that guard against an API server gone for long (about 400 bytes an
  // event: 40 MB at most), not a limit a busy scheduler meets.
  double events_per_second = 0;
  int event_burst = 100;
  size_t max_events = 100'000;
  // event_senders are the event writes in flight at once: enough to keep up with a binding
  // rate near the API server's limit at its latency under that load (client-go starts a
  // goroutine per event).
  int event_senders = 32;
  // series_finish: a series not seen for this long gets its last count written and is
  // forgotten, as is an event without a series this long after it was recorded; series_refresh:
  // how often a running series' count is written (client-go's finishTime and refreshTime).
  std::chrono::milliseconds series_finish = std::chrono::minutes(6);
  std::chrono::milliseconds series_refresh = std::chrono::minutes(30);
  // An event write without an answer is tried again after event_retry_delay (±25 %), up to
  // event_tries times in all (client-go: 10 s, 12).
  std::chrono::milliseconds event_retry_delay = std::chrono::seconds(10);
  int event_tries = 12;
};

// WriterStats are the writer's counters.
struct WriterStats {
  uint64_t bindings = 0;           // bindings the API server accepted
  uint64_t binding_conflicts = 0;  // 409/404: bound by someone else or going away
  uint64_t binding_errors = 0;
  uint64_t status_patches = 0;
  uint64_t status_errors = 0;
  uint64_t evictions = 0;
  uint64_t events = 0;             // event writes the API server accepted (creates and patches)
  uint64_t events_aggregated = 0;  // events counted into a running series without a write
  uint64_t events_dropped = 0;     // events not queued: max_events were waiting
  uint64_t event_errors = 0;       // event writes given up on (rejected, or out of tries)
  uint64_t event_retries = 0;      // event writes tried again after no answer
  uint64_t not_leading = 0;  // writes not sent because this replica no longer led
};

class Writer final : public store::ClusterWriter {
 public:
  // Writer writes through `client` (not owned; must outlive it).
  Writer(ApiClient& client, WriterOptions options);
  ~Writer() override;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // SetFence makes every write ask `may_write` just before it is sent (LeaderElector::Leading):
  // once it answers false, bindings and evictions fail (kUnavailable) and status patches and
  // events are dropped, all without a byte sent. Call before Start.
  void SetFence(std::function<bool()> may_write) { fence_ = std::move(may_write); }
  // Start probes which Events API the server has and starts the status and event threads.
  void Start();
  // Stop sends what the status lane holds (the client permitting) and ends both threads.
  void Stop();

  void Bind(const model::Pod& pod, std::string_view node) override;
  std::shared_ptr<const model::Pod> SetNominatedNodeName(const model::Pod& pod,
                                                         std::string_view node) override;
  void Evict(const model::Pod& victim, const model::Pod* preemptor) override;
  void ReportScheduled(const model::Pod& pod, std::string_view node) override;
  void ReportUnschedulable(const model::Pod& pod, std::string_view reason,
                           std::string_view message) override;

  // WriteObject sends a plugin's write of a declared kind's object to the API server at once
  // (POST, PUT, PATCH application/merge-patch+json, the /status subresource, DELETE), behind
  // the leader fence; the mirror's watch brings the result back.
  void WriteObject(const store::KindInfo& kind, store::ObjectWriteOp op,
                   std::string_view namespace_name, std::string_view name,
                   std::string_view body) override;

  WriterStats stats() const;
  // forbidden returns the last 403 a binding got while no binding has succeeded since (RBAC
  // withdrawn: the host cannot do its work), or "".
  std::string forbidden() const;

 private:
  // StatusUpdate is what the status lane sends for one pod (merged while it waits).
  struct StatusUpdate {
    std::string namespace_name, name, uid;
    bool condition = false;
    std::string reason, message;
    bool nomination = false;
    std::string nominated_node;  // "" clears it
  };
  struct Event {
    std::string namespace_name, pod_name, pod_uid, scheduler;
    std::string type, reason, action, note;
    // related: the preemptor of a Preempted event.
    std::string related_namespace, related_name, related_uid;
  };
  using Clock = std::chrono::steady_clock;
  // Recorded is an event as written to the API server, kept for series_finish to fold the
  // events like it into a series (client-go's event cache).
  struct Recorded {
    Event event;
    std::string name;         // the Event object's name
    int64_t event_time_ns = 0;
    int32_t count = 0;        // the series' count; 0: no series yet
    int64_t last_observed_ns = 0;
    Clock::time_point last_seen;  // when an event like it last came
    // writing: a write of it is queued or in flight; the next waits for it, so a series patch
    // never overtakes the create it patches.
    bool writing = false;
  };
  // EventWrite is one write of a recorded event: a create, or (count > 0) a patch of its
  // series, which becomes a create when the object is gone.
  struct EventWrite {
    std::string key;  // its Recorded's
    Event event;
    std::string name;
    int64_t event_time_ns = 0;
    int32_t count = 0;
    int64_t last_observed_ns = 0;
    int tries = 0;
  };

  // Body is `object` as the request body of a create and its Content-Type: protobuf when the
  // client speaks it (as client-go sends creates), else JSON.
  std::pair<std::string, std::string_view> Body(const nlohmann::json& object) const;
  void QueueStatus(const model::Pod& pod, const std::function<void(StatusUpdate&)>& change);
  void QueueEvent(Event event);
  // QueueWriteLocked queues `write` unless max_events wait (then counts it dropped); mu_ held.
  bool QueueWriteLocked(EventWrite write);
  // WriteOfLocked is the write of `r`'s current state; mu_ held.
  static EventWrite WriteOfLocked(const std::string& key, const Recorded& r);
  // EventWritten marks `write` done: the write `r` waited for goes out now; mu_ held.
  void EventWrittenLocked(const EventWrite& write);
  // SeriesUpkeepLocked writes the counts of series due a refresh or finished, and forgets
  // events past series_finish; mu_ held.
  void SeriesUpkeepLocked(Clock::time_point now);
  void StatusLoop();
  void EventLoop();
  void SendStatus(const StatusUpdate& update);
  // SendEvent writes `write`; false when it got no answer and may be tried again.
  bool SendEvent(const EventWrite& write);
  // NoAnswer is SendEvent's outcome for a request that got no answer (`e`): true (done) when
  // the fence stopped it or the client is shutting down, false (try again) otherwise.
  bool NoAnswer(const ApiError& e, std::string_view what);
  // CountEvents adds to the event counters and their metric.
  void CountEvents(uint64_t WriterStats::*counter, uint64_t n = 1);

  ApiClient& client_;
  const WriterOptions options_;
  std::function<bool()> fence_;  // empty: every write is sent
  bool events_v1_ = true;
  RateLimiter event_limiter_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  // The status lane: pods in order of their first pending update, and each pod's update.
  std::deque<std::string> status_order_;
  std::unordered_map<std::string, StatusUpdate> status_;
  // The last PodScheduled=False sent per pod uid (reason + message), not to repeat it.
  std::unordered_map<std::string, std::string> last_condition_;
  std::condition_variable event_cv_;  // the event senders wait on it
  std::deque<EventWrite> events_;
  // Writes to try again, by when.
  std::multimap<Clock::time_point, EventWrite> event_retries_;
  // Recorded events by their series key (type, action, reason, reporter, regarding, related).
  std::unordered_map<std::string, Recorded> recorded_;
  Clock::time_point next_finish_, next_refresh_;
  WriterStats stats_;
  std::string forbidden_;
  std::thread status_thread_;
  std::vector<std::thread> event_threads_;
};

}  // namespace schedhost::kube
