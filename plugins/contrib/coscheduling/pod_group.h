// Pod groups as Coscheduling sees them: the label and annotation that define a group, and the
// registry of groups the plugin has met (members seen at PreEnqueue, the group's creation time
// for QueueSort, its min-available and whether it is denied). There is no PodGroup object: a
// group exists through its pods.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <schedhost/plugin.hpp>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>

namespace schedhost::contrib {

/// kPodGroupLabel names the label whose value is the pod's group (same namespace only).
inline constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
/// kMinAvailableAnnotation names the annotation holding the group's minimum size.
inline constexpr std::string_view kMinAvailableAnnotation = "scheduling.x-k8s.io/min-available";
/// kMaxMinAvailable bounds min-available (a larger value is refused as invalid).
inline constexpr int64_t kMaxMinAvailable = 100000;

/// MinAvailable is what a pod's annotation says: absent, a valid size, or an error message.
struct MinAvailable {
  bool present = false;
  int32_t value = 1;
  std::string error;  // non-empty when the annotation is present but invalid
};

/// ParseMinAvailable reads kMinAvailableAnnotation from `pod`: a decimal integer in
/// [1, kMaxMinAvailable]; absent means 1.
MinAvailable ParseMinAvailable(const Pod& pod);

/// GroupKey identifies a group: its namespace and the interned label value.
struct GroupKey {
  Id namespace_id = 0;
  Id name_id = 0;
  auto operator<=>(const GroupKey&) const = default;
};

/// SortKey is what QueueSort compares for a group: its creation time, then its name.
struct SortKey {
  int64_t created_ns = 0;
  std::string_view namespace_name;
  std::string_view name;
};

/// GroupRegistry holds the groups met so far; thread-safe (one leaf lock, no host calls under
/// it). A group's creation time and name never change once recorded, so QueueSort's order of
/// two queued pods never changes while they are queued.
class GroupRegistry {
 public:
  /// Observe records `uid` as a member of `key` (creating the group with `created_ns`, the
  /// member's creation time) and its min-available; returns the group's min-available.
  int32_t Observe(const GroupKey& key, std::string_view namespace_name, std::string_view name,
                  std::string_view uid, int64_t created_ns, int32_t min_available);
  /// Forget drops `uid` from the members of `key` (the pod was deleted).
  void Forget(const GroupKey& key, std::string_view uid);
  /// Sort returns the sort key of `key`, or nullopt for a group never observed. The views stay
  /// valid as long as the registry (groups are never removed).
  std::optional<SortKey> Sort(const GroupKey& key) const;
  /// Members returns the uids seen as members of `key`.
  std::set<std::string, std::less<>> Members(const GroupKey& key) const;
  /// MinAvailable returns the group's min-available: the largest any member asked for.
  int32_t MinAvailable(const GroupKey& key) const;
  /// Deny marks `key` denied until `until`, with `reason` for the pods it rejects.
  void Deny(const GroupKey& key, std::chrono::steady_clock::time_point until, std::string reason);
  /// Lift ends a denial early (a cluster event may have made room); true when one was lifted.
  bool Lift(const GroupKey& key);
  /// MetAt returns when the plugin first met a member of `key` (its own steady clock).
  std::chrono::steady_clock::time_point MetAt(const GroupKey& key) const;
  /// Denied returns the reason when `key` is denied at `now`.
  std::optional<std::string> Denied(const GroupKey& key,
                                    std::chrono::steady_clock::time_point now) const;

 private:
  struct Group {
    std::string namespace_name;
    std::string name;
    int64_t created_ns = 0;
    std::chrono::steady_clock::time_point met_at;
    std::map<std::string, int32_t, std::less<>> members;  // uid -> its min-available
    std::chrono::steady_clock::time_point denied_until{};
    std::string denied_reason;
  };
  mutable std::shared_mutex mu_;
  std::map<GroupKey, Group> groups_;  // node-based: names stay put once inserted
};

}  // namespace schedhost::contrib
