// ClusterWriter: every change the scheduler makes to the cluster goes through this one
// interface — binding a pod, setting or clearing its nomination, evicting a preemption victim,
// reporting a cycle's outcome. StoreWriter writes to the embedded store at once; Kubernetes
// mode implements it with API calls whose results come back through the watched mirror.
//
//   store::StoreWriter writer(store);
//   writer.Bind(*pod, "n1");   // throws StoreError(kConflict) when someone else bound it
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "host/model/pod.h"
#include "host/store/object_write.h"
#include "host/store/store.h"

namespace schedhost::store {

class ClusterWriter {
 public:
  virtual ~ClusterWriter() = default;

  // Bind sets `pod`'s node (the pod as the scheduling cycle read it). Throws StoreError:
  // kSuperseded when the pod was bound by someone else, is going away or was re-created (the
  // caller forgets its assumption and does not retry: the watch brings the pod's new state),
  // others (kConflict, kNotFound, kUnavailable, ...) on failures the pod is retried after.
  virtual void Bind(const model::Pod& pod, std::string_view node) = 0;
  // SetNominatedNodeName sets (or with "" clears) status.nominatedNodeName. Returns the pod as
  // stored after the change when it is visible at once, or nullptr when the change is on its way
  // (Kubernetes mode: the watch brings it back). Throws StoreError when the pod is gone.
  virtual std::shared_ptr<const model::Pod> SetNominatedNodeName(const model::Pod& pod,
                                                                 std::string_view node) = 0;
  // Evict removes a preemption victim (its uid as precondition); `preemptor` is the pod it
  // makes room for, or null. Throws StoreError when it cannot.
  virtual void Evict(const model::Pod& victim, const model::Pod* preemptor) = 0;
  // ReportScheduled / ReportUnschedulable tell the cluster a cycle's outcome: the pod's
  // PodScheduled condition and an event. `reason` is upstream's (Unschedulable or
  // SchedulerError). The embedded store records neither; they never block scheduling.
  virtual void ReportScheduled(const model::Pod& /*pod*/, std::string_view /*node*/) {}
  virtual void ReportUnschedulable(const model::Pod& /*pod*/, std::string_view /*reason*/,
                                   std::string_view /*message*/) {}
  // WriteObject writes an object of a declared kind for a plugin (store::WriteObject says what
  // each op does). Throws StoreError: kNotFound, kAlreadyExists, kConflict, kInvalid,
  // kForbidden, kUnavailable.
  virtual void WriteObject(const KindInfo& kind, ObjectWriteOp op, std::string_view namespace_name,
                           std::string_view name, std::string_view body) = 0;
};

// StoreWriter writes to the embedded store.
class StoreWriter final : public ClusterWriter {
 public:
  explicit StoreWriter(Store& store) : store_(store) {}

  void Bind(const model::Pod& pod, std::string_view node) override {
    // The cycle read the pod at this version; a pod changed since then is not bound.
    store_.Bind(pod.namespace_name(), pod.name(), pod.uid(), pod.resource_version(), node);
  }
  std::shared_ptr<const model::Pod> SetNominatedNodeName(const model::Pod& pod,
                                                         std::string_view node) override {
    return store_.SetNominatedNodeName(pod.namespace_name(), pod.name(), pod.uid(), node);
  }
  void Evict(const model::Pod& victim, const model::Pod* /*preemptor*/) override {
    store_.Delete<model::Pod>(victim.namespace_name(), victim.name(),
                              Preconditions{std::string(victim.uid()), 0});
  }
  void WriteObject(const KindInfo& kind, ObjectWriteOp op, std::string_view namespace_name,
                   std::string_view name, std::string_view body) override {
    store::WriteObject(store_.objects(), kind, op, namespace_name, name, body);
  }

 private:
  Store& store_;
};

// Leadership is where a replica stands in its source's leader election.
struct Leadership {
  bool enabled = false;  // false: no election, this replica schedules alone
  bool leading = false;
  std::string identity;  // this replica's name in the election
  std::string lease;     // what the replicas elect on ("kube-system/schedhost")
  std::string holder;    // the holder last observed ("" none)
  int64_t transitions = 0;
  std::string last_error;  // the last failed attempt's reason
  // term_end_unix_ns is when (wall clock) the leader's writes stop unless it renews; 0: never led.
  int64_t term_end_unix_ns = 0;
};

// ClusterSource is a cluster the store mirrors instead of owning the state (Kubernetes mode):
// it fills the store, says when the mirror is complete and healthy, and supplies the writer.
class ClusterSource {
 public:
  virtual ~ClusterSource() = default;
  // Start begins mirroring into `store` (not owned; outlives the source until Stop returns).
  virtual void Start(Store& store) = 0;
  // DelaysMirrorUntilElected: Start is to be called only once this replica leads (a standby
  // holds no mirror: less memory, a slower takeover). writer() is valid before Start.
  virtual bool DelaysMirrorUntilElected() const { return false; }
  // WaitForSync waits until every kind has been listed once; false (with *why) when the
  // source's own sync timeout passes or on a fatal error such as refused credentials.
  virtual bool WaitForSync(std::string* why) = 0;
  // writer returns the writer the scheduler uses against this cluster.
  virtual std::shared_ptr<ClusterWriter> writer() = 0;
  // Healthy is false (with *why) while the mirror cannot follow the cluster.
  virtual bool Healthy(std::string* why) const = 0;
  // Degraded says what the mirror cannot follow while it is otherwise healthy (a kind a plugin
  // declares that the cluster does not serve); "" when nothing.
  virtual std::string Degraded() const { return ""; }
  // description names the cluster for messages ("the API server at https://10.0.0.1:6443").
  virtual std::string description() const = 0;
  // Campaign enters the leader election when the source runs one: `elected` runs once this
  // replica leads, `lost` once it lost the lease (its writes are already refused; it does not
  // campaign again). Both run on a thread of the source's. Without an election, `elected` runs
  // at once. Call once, after WaitForSync unless the source delays its mirror until elected.
  virtual void Campaign(const std::function<void()>& elected,
                        const std::function<void()>& /*lost*/) {
    elected();
  }
  // leadership says where this replica stands in the election.
  virtual Leadership leadership() const { return {}; }
  // Stop ends every watch and write, and leaves the election (a held lease is released, so
  // call it once nothing binds any more); idempotent.
  virtual void Stop() = 0;
};

}  // namespace schedhost::store
