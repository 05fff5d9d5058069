// LeaderElector: client-go's leader election on a coordination.k8s.io/v1 Lease, so that of the
// replicas given the same Lease exactly one schedules.
//
// The protocol is upstream's: a replica reads the Lease and takes it when nobody holds it or the
// holder has not renewed it for leaseDurationSeconds as this replica measured the time (its own
// clock, from when it first saw the current record: no clocks are compared across machines).
// Taking and renewing are updates with the resourceVersion read, so of two replicas racing for
// one Lease only one succeeds. The leader renews every retry period; when no renewal has
// succeeded for renew_deadline it stops leading. A standby tries every retry period, jittered.
//
// Fencing: Leading() is computed from the clock at every call, not from a flag a thread sets, so
// it turns false at the start of the last successful renewal + renew_deadline even while the
// elector's own thread waits on a request. The writer checks it just before sending each
// binding, eviction, status patch and event; renew_deadline < lease_duration leaves the gap in
// which nothing of the old leader starts while no other replica may yet have taken over.
//
//   LeaderElector elector(client, {.lease_name = "schedhost", ...});
//   elector.Run({.started = [&] { scheduler.Start(); }, .stopped = [&] { exit(1); }});
//   ...
//   elector.Stop();  // gives the lease up when held (SIGTERM), so a standby need not wait
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "host/kube/api_client.h"
#include "host/store/cluster_writer.h"

namespace schedhost::kube {

// LeaseRecord is the part of a Lease's spec the election reads and writes.
struct LeaseRecord {
  std::string holder;             // holderIdentity; "" when nobody holds it
  int64_t duration_seconds = 0;   // leaseDurationSeconds
  std::string acquire_time;       // acquireTime, RFC 3339 with microseconds
  std::string renew_time;         // renewTime
  int64_t transitions = 0;        // leaseTransitions

  bool operator==(const LeaseRecord&) const = default;
};

// ElectorOptions tune one elector; the defaults are kube-scheduler's.
struct ElectorOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "schedhost";
  std::string identity;  // required
  std::chrono::nanoseconds lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period = std::chrono::seconds(2);
};

// ElectorCallbacks are run on the elector's thread.
struct ElectorCallbacks {
  // started runs once this replica leads.
  std::function<void()> started;
  // stopped runs once it lost the lease (renew deadline passed, or another replica holds it);
  // Leading() is already false. Not run when Stop ends the election. The elector does not
  // campaign again afterwards: as kube-scheduler, the process is expected to exit.
  std::function<void()> stopped;
};

// Decision is what one attempt does with the record it read (see Decide).
struct Decision {
  bool write = false;     // false: the lease is held by another replica; try later
  LeaseRecord record;     // the record to write when `write`
};

// Decide is the election's rule for one attempt by `identity` at `now` (RFC 3339 MicroTime):
// `current` is the record read (nullopt: there is no Lease yet) and `holder_valid` whether its
// holder's term has not run out by this replica's measure (the time it first saw `current` plus
// its leaseDurationSeconds is still ahead). A replica renews its own record (acquireTime and
// leaseTransitions kept), takes one that nobody holds or whose term ran out (a transition), and
// leaves one another replica validly holds. Pure, for tests.
Decision Decide(const std::optional<LeaseRecord>& current, bool holder_valid,
                const std::string& identity, int64_t duration_seconds, const std::string& now);

class LeaderElector {
 public:
  // LeaderElector talks through `client` (not owned; outlives the elector). The client should be
  // the elector's own, so that renewals never wait behind bindings for the rate limiter.
  LeaderElector(ApiClient& client, ElectorOptions options);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Run starts campaigning on a thread of its own; call once.
  void Run(ElectorCallbacks callbacks);
  // Stop ends the election; when this replica still leads, it releases the Lease first
  // (holderIdentity cleared, leaseDurationSeconds 1) so a standby takes over at its next try.
  // Call it after the scheduler has stopped binding. Idempotent.
  void Stop();

  // Leading is true while this replica holds the Lease and its last successful renewal started
  // less than renew_deadline ago. Thread-safe, lock-free.
  bool Leading() const;
  // Status is what the elector last observed: the holder of the record last read or written,
  // the last failed attempt's reason ("" after a success), the end of its last term.
  store::Leadership Status() const;
  const ElectorOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;

  void Loop();
  // TryAcquireOrRenew makes one attempt; true when this replica holds the Lease after it.
  bool TryAcquireOrRenew();
  // Put writes `record` over the Lease read at `resource_version` ("" : create it).
  bool Put(const LeaseRecord& record, const std::string& resource_version, Clock::time_point start,
           int64_t start_unix_ns);
  void Release();
  void Fail(std::string why);
  // Sleep waits `d` or until Stop; false when stopping.
  bool Sleep(std::chrono::nanoseconds d);
  std::string LeasePath() const;

  ApiClient& client_;
  const ElectorOptions options_;
  ElectorCallbacks callbacks_;

  // Fence: the steady-clock time (ns since epoch) until which this replica may write; 0: never.
  std::atomic<int64_t> leading_until_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool holds_ = false;  // the last write made this replica the holder (not yet lost)
  std::optional<LeaseRecord> observed_;  // the record last read or written
  std::string observed_version_;         // its resourceVersion
  Clock::time_point observed_time_{};    // when this replica first saw `observed_`
  std::string last_error_;
  int64_t term_end_unix_ns_ = 0;
  std::thread thread_;
};

// Hostname is this machine's host name ("schedhost" when it has none).
std::string Hostname();

// DefaultIdentity is "<hostname>_<random uuid>", as kube-scheduler names a replica.
std::string DefaultIdentity();

}  // namespace schedhost::kube
