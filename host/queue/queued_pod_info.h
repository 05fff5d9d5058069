// The vocabulary of the scheduling queue: a queued pod with its attempt bookkeeping, where a pod
// sits (activeQ, backoffQ, unschedulable, gated, in flight), what PreEnqueue answered, the
// injectable clock and the options that tune backoff and the unschedulable flush.
//
//   QueueOptions opts;  opts.clock = [&] { return fake_now; };
//   SchedulingQueue q(callbacks, opts);
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "host/model/interner.h"
#include "host/model/pod.h"

namespace schedhost::queue {

/// PluginName is a plugin's name, interned in model::Interner::Global (which keeps it for the
/// life of the process): four bytes, and nothing allocated per queued pod. Names order by text.
class PluginName {
 public:
  // NOLINTBEGIN(google-explicit-constructor): a PluginName is made wherever a name is given
  PluginName(std::string_view name) : id_(model::Interner::Global().Intern(name)) {}
  PluginName(const std::string& name) : PluginName(std::string_view(name)) {}
  PluginName(const char* name) : PluginName(std::string_view(name)) {}
  operator std::string_view() const { return view(); }
  // NOLINTEND(google-explicit-constructor)
  std::string_view view() const { return model::Interner::Global().Str(id_); }

  friend bool operator==(PluginName a, PluginName b) { return a.id_ == b.id_; }
  friend bool operator<(PluginName a, PluginName b) { return a.view() < b.view(); }

 private:
  schedhost_id id_;
};

/// PluginSet is a set of plugin names, iterated in text order. Every queued pod has two, usually
/// of one name or none: up to two names are kept in place, more in one heap block, and the set
/// takes 16 bytes (a small_vector-backed flat_set took 32).
class PluginSet {
 public:
  using value_type = PluginName;
  using const_iterator = const PluginName*;
  using iterator = const_iterator;

  PluginSet() noexcept = default;
  PluginSet(std::initializer_list<PluginName> names);
  PluginSet(const PluginSet& other);
  PluginSet(PluginSet&& other) noexcept;
  PluginSet& operator=(const PluginSet& other);
  PluginSet& operator=(PluginSet&& other) noexcept;
  ~PluginSet() { Release(); }

  bool empty() const noexcept { return size_ == 0; }
  size_t size() const noexcept { return size_; }
  const PluginName* begin() const noexcept { return data(); }
  const PluginName* end() const noexcept { return data() + size_; }
  bool contains(PluginName name) const noexcept;
  size_t count(PluginName name) const noexcept { return contains(name) ? 1 : 0; }
  /// insert adds `name` in its place; false when the set had it already.
  bool insert(PluginName name);
  void clear() noexcept;
  void swap(PluginSet& other) noexcept;

  friend bool operator==(const PluginSet& a, const PluginSet& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static constexpr uint32_t kInPlace = 2;
  union Storage {
    Storage() noexcept : heap(nullptr) {}
    PluginName* heap;            // when capacity_ > kInPlace
    PluginName names[kInPlace];  // otherwise
  };
  const PluginName* data() const noexcept {
    return capacity_ > kInPlace ? items_.heap : items_.names;
  }
  PluginName* data() noexcept { return capacity_ > kInPlace ? items_.heap : items_.names; }
  void Release() noexcept;

  uint32_t size_ = 0;
  uint32_t capacity_ = kInPlace;
  Storage items_;
};

/// TimePoint is the queue's notion of time: a monotonic clock reading.
using TimePoint = std::chrono::steady_clock::time_point;
/// Clock returns "now"; tests inject a fake one so every timing decision is deterministic.
using Clock = std::function<TimePoint()>;

/// QueueError reports input the queue refused (unknown pod, pod already queued, bad options);
/// the queue is unchanged when it is thrown.
class QueueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// PodLocation names the one place a pending pod is in at any moment.
enum class PodLocation {
  kNone,           // Not tracked by the queue.
  kActive,         // activeQ: ready to be popped, ordered by QueueSort.
  kBackoff,        // backoffQ: failed recently, waits out its backoff.
  kUnschedulable,  // Failed; waits for a cluster event, an update or the periodic flush.
  kGated,          // Rejected by PreEnqueue; kept beside the unschedulable pods.
  kInFlight,       // Popped and being scheduled; not yet bound or requeued.
};

/// LocationName returns the lower-case name of `where` ("none", "active", "backoff",
/// "unschedulable", "gated", "in_flight"), as used in metrics labels and messages.
std::string_view LocationName(PodLocation where);

/// PreEnqueueResult is the verdict of the PreEnqueue plugins on a pod.
struct PreEnqueueResult {
  bool admitted = true;
  std::string plugin;   // The rejecting plugin when !admitted.
  std::string message;  // Its reason, for explain and events.
};

/// QueuedPodInfo is a pending pod plus the queue's bookkeeping about it.
struct QueuedPodInfo {
  std::shared_ptr<const model::Pod> pod;
  /// timestamp is when the pod last entered the queue (added or failed); QueueSort ties use it.
  TimePoint timestamp{};
  /// initial_attempt_timestamp is when the pod first entered activeQ (while initial_attempt_set).
  TimePoint initial_attempt_timestamp{};
  /// unschedulable_plugins are the plugins that rejected the last attempt (or gate the pod).
  PluginSet unschedulable_plugins;
  /// pending_plugins are the plugins that answered Pending in the last attempt.
  PluginSet pending_plugins;
  /// attempts counts scheduling attempts; Pop increments it.
  int attempts = 0;
  /// gated is true while PreEnqueue keeps the pod out of activeQ (the plugin's reason reaches
  /// the scheduler through QueueCallbacks::pre_enqueue; the queue does not keep it).
  bool gated = false;
  /// initial_attempt_set is true once the pod has entered activeQ (initial_attempt_timestamp
  /// is set; a flag rather than an optional, so that the entry stays within 88 bytes).
  bool initial_attempt_set = false;
};

/// QueueOptions tunes the queue; the defaults are upstream's.
struct QueueOptions {
  /// pod_initial_backoff is the backoff after the first failed attempt (> 0).
  std::chrono::nanoseconds pod_initial_backoff = std::chrono::seconds(1);
  /// pod_max_backoff caps the doubling backoff (>= pod_initial_backoff).
  std::chrono::nanoseconds pod_max_backoff = std::chrono::seconds(10);
  /// pod_max_in_unschedulable is how long a pod may stay unschedulable before the leftover
  /// flush moves it back regardless of events (> 0).
  std::chrono::nanoseconds pod_max_in_unschedulable = std::chrono::minutes(5);
  /// clock reads the time; empty means std::chrono::steady_clock::now.
  Clock clock;
};

/// BackoffDuration returns min(initial * 2^(attempts-1), max), and zero for a pod never attempted.
std::chrono::nanoseconds BackoffDuration(const QueueOptions& options, int attempts);

}  // namespace schedhost::queue
