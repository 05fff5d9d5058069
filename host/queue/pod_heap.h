// PodHeap: a binary heap of queued pods that can also find, update and remove a pod by uid in
// O(log n). activeQ orders it with the QueueSort comparator, backoffQ by backoff expiry.
// Internal to the queue; not thread-safe (the queue's lock guards it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "host/queue/queued_pod_info.h"

namespace schedhost::queue::internal {

/// Entry is a queued pod as the queue stores it: the info plus a version that changes whenever
/// the pod moves or its object changes, so work done without the lock can tell it went stale.
struct Entry {
  QueuedPodInfo info;
  uint64_t version = 0;
  /// heap_index is the entry's position in the PodHeap holding it (an entry is in one at most).
  size_t heap_index = 0;

  /// uid returns the pod's uid.
  std::string_view uid() const { return info.pod->uid(); }
};

/// StringHash lets the uid-keyed maps be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
/// UidMap is an unordered map keyed by uid. A key views the uid of the entry's own pod rather
/// than copying it (every queued pod is in two such maps): whoever replaces an entry's pod
/// re-keys the maps that hold it (Rekey) while the old pod is still alive.
template <typename V>
using UidMap = std::unordered_map<std::string_view, V, StringHash, std::equal_to<>>;

/// EntryHash and SameUid read an entry's uid from the entry (its pod) itself, so a set of
/// entries is an index by uid with no key beside each entry: a hash node of 24 bytes instead
/// of a map node of 40. Lookups take a uid.
struct EntryHash {
  using is_transparent = void;
  size_t operator()(std::string_view uid) const { return std::hash<std::string_view>{}(uid); }
  size_t operator()(const Entry* e) const { return (*this)(e->uid()); }
  size_t operator()(const std::unique_ptr<Entry>& e) const { return (*this)(e->uid()); }
};
struct SameUid {
  using is_transparent = void;
  static std::string_view UidOf(std::string_view uid) { return uid; }
  static std::string_view UidOf(const Entry* e) { return e->uid(); }
  static std::string_view UidOf(const std::unique_ptr<Entry>& e) { return e->uid(); }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return UidOf(a) == UidOf(b);
  }
};
/// EntrySet holds entries (Entry* or std::unique_ptr<Entry>) found by uid. An entry's pod may
/// be replaced while it is held (the uid stays), with nothing to re-key.
template <typename P>
using EntrySet = std::unordered_set<P, EntryHash, SameUid>;

/// Rekey makes `map`'s key for `uid` view `uid` itself: the same text in the entry's new pod.
template <typename V>
void Rekey(UidMap<V>& map, std::string_view uid) {
  auto node = map.extract(uid);
  if (node.empty()) return;
  node.key() = uid;
  map.insert(std::move(node));
}

/// PodHeap is a min-heap of entries under `less` with a uid index.
class PodHeap {
 public:
  /// Less is true when `a` must come out before `b`.
  using Less = std::function<bool(const Entry& a, const Entry& b)>;

  /// PodHeap builds an empty heap ordered by `less`.
  explicit PodHeap(Less less) : less_(std::move(less)) {}

  /// SetLess replaces the order and re-heapifies every entry.
  void SetLess(Less less);
  /// Push adds an entry whose uid is not in the heap yet.
  void Push(std::unique_ptr<Entry> entry);
  /// Top returns the first entry, or nullptr when empty.
  Entry* Top() const { return items_.empty() ? nullptr : items_.front().get(); }
  /// Pop removes and returns the first entry (nullptr when empty).
  std::unique_ptr<Entry> Pop();
  /// Remove removes and returns the entry with `uid` (nullptr when absent).
  std::unique_ptr<Entry> Remove(std::string_view uid);
  /// Get returns the entry with `uid`, or nullptr.
  Entry* Get(std::string_view uid) const;
  /// Fix restores the order after the entry with `uid` changed in place.
  void Fix(std::string_view uid);
  /// size returns the number of entries.
  size_t size() const { return items_.size(); }
  /// empty is true when there is no entry.
  bool empty() const { return items_.empty(); }
  /// capacity returns how many entries the heap's array holds without growing.
  size_t capacity() const { return items_.capacity(); }
  /// entries returns the entries in heap (not sorted) order.
  const std::vector<std::unique_ptr<Entry>>& entries() const { return items_; }
  /// CollectWhile returns the entries for which `pred` holds, assuming that when it fails for an
  /// entry it fails for everything ordered after it (e.g. "backoff expired"): O(result).
  std::vector<Entry*> CollectWhile(const std::function<bool(const Entry&)>& pred) const;
  /// Check returns "" when the index and the heap order are consistent, else what is wrong.
  std::string Check(std::string_view name) const;

 private:
  void Place(size_t i) { items_[i]->heap_index = i; }  // Records items_[i]'s position.
  void SiftUp(size_t i);
  void SiftDown(size_t i);
  void RestoreAt(size_t i);

  Less less_;
  std::vector<std::unique_ptr<Entry>> items_;
  EntrySet<Entry*> index_;  // changes only on Push and Remove: sifting moves no entry
  static constexpr size_t kRetained = 1024;  // slots kept however few pods remain
};

}  // namespace schedhost::queue::internal
