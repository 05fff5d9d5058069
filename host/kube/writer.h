// Writer: the scheduler's ClusterWriter against an API server, as kube-scheduler writes.
// - Bind: `POST pods/{name}/binding` with the pod's uid, on the calling binding-cycle thread (its
//   own lane: it never waits behind status patches or events). 409 and 404 mean someone else
//   bound the pod or it is going away: kSuperseded, never retried.
// - Status: a strategic-merge patch of `pods/{name}/status` (PodScheduled=False with upstream's
//   reason and message; nominatedNodeName set or cleared), sent by a thread of its own; only
//   the latest patch per pod is kept while one waits.
// - Evict: the victim gets DisruptionTarget=True (PreemptionByScheduler), then a DELETE with
//   its uid as precondition and the default grace period, and a Preempted event.
// - Events (events.k8s.io/v1 where served, else core/v1): Scheduled, FailedScheduling and
//   Preempted with upstream's reasons, actions and notes, sent one at a time by a thread of
//   their own under the client's rate limit; when the API server falls behind and 1,000 wait
//   (client-go's queue), new ones are dropped and counted: an event never blocks scheduling.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "host/kube/api_client.h"
#include "host/store/cluster_writer.h"

namespace schedhost::kube {

// WriterOptions tune the writer.
struct WriterOptions {
  // instance names this replica in events' reportingInstance ("<scheduler>-<instance>").
  std::string instance;
  // events_per_second and event_burst bound the events sent beyond the client's own limit
  // (0: none); the queue holds max_events, and events beyond them are dropped.
  double events_per_second = 0;
  int event_burst = 100;
  size_t max_events = 1000;
};

// WriterStats are the writer's counters.
struct WriterStats {
  uint64_t bindings = 0;           // bindings the API server accepted
  uint64_t binding_conflicts = 0;  // 409/404: bound by someone else or going away
  uint64_t binding_errors = 0;
  uint64_t status_patches = 0;
  uint64_t status_errors = 0;
  uint64_t evictions = 0;
  uint64_t events = 0;
  uint64_t events_dropped = 0;
  uint64_t event_errors = 0;
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

  void QueueStatus(const model::Pod& pod, const std::function<void(StatusUpdate&)>& change);
  void QueueEvent(Event event);
  void StatusLoop();
  void EventLoop();
  void SendStatus(const StatusUpdate& update);
  void SendEvent(const Event& event);

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
  std::deque<Event> events_;
  WriterStats stats_;
  std::string forbidden_;
  std::thread status_thread_;
  std::thread event_thread_;
};

}  // namespace schedhost::kube
