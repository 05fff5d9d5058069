// Pod groups as Coscheduling sees them: the PodGroup object a group is defined by
// (scheduling.x-k8s.io/v1alpha1, decoded into PodGroupSpec), the label that makes a pod a
// member, and the registry of groups the plugin has met (members seen in the queue, the
// group's creation time for QueueSort, its denial and its resource pre-check).
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
#include <utility>
#include <vector>

namespace schedhost::contrib {

/// kPodGroupLabel names the label whose value is the pod's PodGroup (same namespace only).
inline constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
/// kMaxMinMember bounds spec.minMember (a larger value is refused as invalid).
inline constexpr int64_t kMaxMinMember = 100000;

/// PodGroupSpec is what Coscheduling reads of a PodGroup object.
struct PodGroupSpec {
  /// min_member is spec.minMember: the members that must be placed together (absent: 1).
  int32_t min_member = 1;
  /// schedule_timeout is spec.scheduleTimeoutSeconds (0: absent, the plugin's default).
  std::chrono::seconds schedule_timeout{0};
  /// min_resources is spec.minResources by interned resource name: cpu in millicores, the
  /// rest in units; "pods" is min_member, as upstream counts it.
  std::vector<std::pair<Id, int64_t>> min_resources;
  /// created_ns is metadata.creationTimestamp (Unix ns; 0 when absent).
  int64_t created_ns = 0;
};

/// DecodePodGroup reads `object` (a PodGroup as Host::GetObject returns it); throws ArgsError
/// naming the object and the field ("PodGroup team-a/gang: spec.minMember: ...").
PodGroupSpec DecodePodGroup(const Host& host, const Args& object);

/// ParseRfc3339 reads a Kubernetes timestamp ("2026-12-05T05:41:09Z", fractions and offsets
/// allowed) as Unix nanoseconds; nullopt when it is not one.
std::optional<int64_t> ParseRfc3339(std::string_view text);

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
  /// Observe records `uid` as a member of `key`, creating the group with the PodGroup's
  /// creation time (its first member's when the PodGroup has none).
  void Observe(const GroupKey& key, std::string_view namespace_name, std::string_view name,
               std::string_view uid, int64_t created_ns);
  /// Join records `uid` as a member of `key` when the group is known (met through its
  /// PodGroup); a group not met yet is left for its members' PreEnqueue to create with the
  /// PodGroup's creation time.
  void Join(const GroupKey& key, std::string_view uid);
  /// Forget drops `uid` from the members of `key` (the pod was deleted).
  void Forget(const GroupKey& key, std::string_view uid);
  /// Sort returns the sort key of `key`, or nullopt for a group never observed. The views stay
  /// valid as long as the registry (groups are never removed).
  std::optional<SortKey> Sort(const GroupKey& key) const;
  /// Members returns the uids seen as members of `key`.
  std::set<std::string, std::less<>> Members(const GroupKey& key) const;
  /// Deny marks `key` denied until `until`, with `reason` for the pods it rejects; it also
  /// forgets the group's resource pre-check.
  void Deny(const GroupKey& key, std::chrono::steady_clock::time_point until, std::string reason);
  /// Lift ends a denial early (a cluster event may have made room); true when one was lifted.
  bool Lift(const GroupKey& key);
  /// MetAt returns when the plugin first met a member of `key` (its own steady clock).
  std::chrono::steady_clock::time_point MetAt(const GroupKey& key) const;
  /// Denied returns the reason when `key` is denied at `now`.
  std::optional<std::string> Denied(const GroupKey& key,
                                    std::chrono::steady_clock::time_point now) const;
  /// Permit records that the group passed its minResources check, good until `until`;
  /// Permitted tells whether it still holds at `now`.
  void Permit(const GroupKey& key, std::chrono::steady_clock::time_point until);
  bool Permitted(const GroupKey& key, std::chrono::steady_clock::time_point now) const;
  /// Bound records `uid` as bound and returns the uids recorded bound for `key`.
  std::set<std::string, std::less<>> Bound(const GroupKey& key, std::string_view uid);

 private:
  struct Group {
    std::string namespace_name;
    std::string name;
    int64_t created_ns = 0;
    std::chrono::steady_clock::time_point met_at;
    std::set<std::string, std::less<>> members;
    std::set<std::string, std::less<>> bound;
    std::chrono::steady_clock::time_point denied_until{};
    std::string denied_reason;
    std::chrono::steady_clock::time_point permitted_until{};
  };
  mutable std::shared_mutex mu_;
  std::map<GroupKey, Group> groups_;  // node-based: names stay put once inserted
};

}  // namespace schedhost::contrib
