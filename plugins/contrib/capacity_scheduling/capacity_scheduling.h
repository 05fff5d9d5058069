// CapacityScheduling: elastic quotas per namespace after kubernetes-sigs/scheduler-plugins,
// built only on the SDK. Each quota gives a namespace a guaranteed `min` and a ceiling `max`
// per resource. PreFilter (and Filter, for preemption's dry runs) refuses a pod that would take
// its namespace over max, or beyond its min while the cluster's total min is used up. PostFilter
// preempts through the host's toolkit: a namespace within its min reclaims from namespaces that
// borrow beyond theirs; otherwise a pod only preempts lower-priority pods of its own namespace.
//
//   [profile.plugin_config.CapacityScheduling]
//   quotas = [
//     { namespace = "team-a", min = { cpu = "2" }, max = { cpu = "6" } },
//   ]
//
// or, watched while running, `quota_file = "quotas.toml"` holding the same `quotas = [...]`.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <schedhost/args_tree.hpp>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "quota.h"

namespace schedhost::contrib {

/// QuotaFileStamp identifies one version of a file by what stat(2) reports: rewriting it
/// changes its size or times, replacing it (rename) its inode; a missing file has `error` set.
struct QuotaFileStamp {
  int error = 0;  // errno of stat(2), 0 when it succeeded
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const QuotaFileStamp&) const = default;
};

/// StatQuotaFile returns the stamp of `path` now.
QuotaFileStamp StatQuotaFile(const std::string& path);

/// CapacitySchedulingArgs are CapacityScheduling's validated arguments.
struct CapacitySchedulingArgs {
  /// quotas holds one entry per namespace, in the order configured (inline or in the file).
  std::vector<capacity::QuotaSpec> quotas;
  /// quota_file is the absolute path of the watched quota file, "" when the quotas are inline.
  std::string quota_file;
  /// quota_file_stamp is the file's stamp taken just before `quotas` were read from it.
  QuotaFileStamp quota_file_stamp;
  /// quota_file_poll is how often PreFilter looks at the file at most (0: every cycle).
  std::chrono::milliseconds quota_file_poll{1000};
};

/// ParseCapacitySchedulingArgs reads plugin_config.CapacityScheduling; throws ArgsError naming
/// the field (unknown keys, bad quantities, min above max, a namespace given twice, both
/// `quotas` and `quota_file`, a quota file that is missing or invalid).
CapacitySchedulingArgs ParseCapacitySchedulingArgs(const Args& args);

/// ReadTomlFile reads and parses the TOML file `path` into an argument tree located
/// "path:line:col"; throws ArgsError ("path: cannot open: ...", "path:line:col: invalid TOML:
/// ...") when it cannot. Files over 1 MiB are refused.
ArgsTree ReadTomlFile(const std::string& path);

/// LoadQuotaFile reads the quotas of a quota file (top-level `quotas`, validated as inline
/// ones); throws ArgsError with the file's path:line:col and the field.
std::vector<capacity::QuotaSpec> LoadQuotaFile(const std::string& path);

/// CapacityScheduling is the elastic-quota plugin.
class CapacityScheduling final : public Plugin,
                                 public PreFilterPlugin,
                                 public PreFilterExtensions,
                                 public FilterPlugin,
                                 public PostFilterPlugin,
                                 public ReservePlugin,
                                 public PostBindPlugin {
 public:
  static constexpr std::string_view kName = "CapacityScheduling";
  static constexpr std::string_view kVersion = "1.1.0";

  /// CapacityScheduling validates its arguments (see ParseCapacitySchedulingArgs).
  CapacityScheduling(const Host& host, const Args& args);

  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;
  Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) override;
  Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                   const NodeInfo& ni) override;
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;
  Status PostFilter(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                    std::string& nominated_node) override;
  Status Reserve(CycleState& state, const Pod& pod, std::string_view node) override;
  void Unreserve(CycleState& state, const Pod& pod, std::string_view node) override;
  void PostBind(CycleState& state, const Pod& pod, std::string_view node) override;

  /// table returns the quotas in force, resolved over the host's interned names.
  std::shared_ptr<const capacity::QuotaTable> table() const;

  /// QuotaState is one cycle's view of the quotas (cloned into each preemption dry run, where
  /// AddPod/RemovePod keep `used` in step with the pods added to or removed from the node).
  struct QuotaState {
    // The table the cycle started with: a quota file change swaps the plugin's table, never
    // this one, so `quota` and `used` keep meaning the same quotas for the whole cycle.
    std::shared_ptr<const capacity::QuotaTable> table;
    int64_t quota = -1;  // the pod's quota, -1: its namespace has none
    capacity::Amounts request;
    capacity::Usage used;
  };

 private:
  // Snapshot computes the usage of every quota: pods of the snapshot (bound and assumed) plus
  // pods reserved but not in it yet, and the pod's own quota and request.
  QuotaState Snapshot(const Pod& pod, std::shared_ptr<const capacity::QuotaTable> table);
  // CheckQuotaFile re-reads the quota file when its stamp changed (at most once per poll
  // interval): a valid file replaces the table, an invalid or missing one is logged once and
  // the table kept.
  void CheckQuotaFile();
  // Update adds (sign 1) or removes (sign -1) `other`'s requests in `state`, if it has a quota.
  void Update(CycleState& state, const Pod& other, int sign) const;
  static int32_t EligibleVictim(void* user, const schedhost_pod_view* preemptor,
                                const schedhost_pod_view* victim) noexcept;

  // NodeUsage is what one node's pods use per quota, as of a node-info generation.
  struct NodeUsage {
    uint64_t generation = 0;
    uint64_t seen_in = 0;  // the Snapshot call that last saw the node
    capacity::Usage used;
    std::unordered_set<std::string> uids;  // pods of quota namespaces
  };

  // The table in force; replaced whole (never changed in place) when the quota file changes.
  mutable std::mutex table_mu_;
  std::shared_ptr<const capacity::QuotaTable> table_;
  Id state_key_ = 0;
  // The watched quota file ("" when quotas are inline) and what was last seen of it.
  std::string quota_file_;
  std::chrono::steady_clock::duration quota_file_poll_{};
  std::mutex file_mu_;  // guards the two below; PreFilter only try-locks it
  std::chrono::steady_clock::time_point next_check_{};
  QuotaFileStamp stamp_;
  // Per-node usage cached by generation (the host bumps it on every change of a node info), so
  // a cycle re-sums only the nodes that changed since the last one.
  std::mutex nodes_mu_;
  std::map<std::string, NodeUsage, std::less<>> nodes_;
  std::shared_ptr<const capacity::QuotaTable> nodes_table_;  // the table nodes_ was summed for
  uint64_t snapshots_ = 0;
  capacity::ReservedPods reserved_;   // between Reserve and PostBind/Unreserve
  capacity::ReservedPods nominated_;  // nominated by this plugin's preemption, not reserved yet
};

}  // namespace schedhost::contrib
