// Quota arithmetic for CapacityScheduling, free of host calls so it can be tested alone:
// quantities written for messages, the configured quotas resolved over the resources they name,
// and the checks PreFilter and Filter make (max, and the cluster's total min once a namespace
// borrows).
//
//   QuotaTable table(specs, intern);
//   Usage used = table.EmptyUsage();
//   if (auto why = table.Check(q, used, table.Project(pod.requests()))) reject(*why);
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace schedhost::contrib::capacity {

/// FormatQuantity renders `value` of `resource` for messages ("500m", "2", "4Gi", "1500000").
std::string FormatQuantity(std::string_view resource, int64_t value);

/// QuotaSpec is one namespace's elastic quota as configured (resource name -> amount).
struct QuotaSpec {
  std::string namespace_name;
  std::map<std::string, int64_t, std::less<>> min;
  std::map<std::string, int64_t, std::less<>> max;
};

/// Amounts holds one value per tracked resource (QuotaTable's resource order).
using Amounts = std::vector<int64_t>;
/// Usage holds the Amounts used by each quota's namespace (QuotaTable's quota order).
using Usage = std::vector<Amounts>;

/// QuotaTable is the configured quotas over the resources any of them names. A resource absent
/// from a quota's max is not limited by it; one absent from its min is guaranteed 0 when some
/// other quota's min names it, and not accounted against min at all when no min names it.
class QuotaTable {
 public:
  /// QuotaTable resolves namespace and resource names through `intern`.
  QuotaTable(const std::vector<QuotaSpec>& specs,
             const std::function<schedhost_id(std::string_view)>& intern);

  size_t size() const noexcept { return namespaces_.size(); }
  size_t resources() const noexcept { return resource_names_.size(); }
  /// IndexOf returns the quota of namespace `ns`, or nullopt when it has none.
  std::optional<size_t> IndexOf(schedhost_id ns) const;
  const std::string& Namespace(size_t q) const { return namespaces_[q]; }

  /// EmptyUsage returns zero usage for every quota.
  Usage EmptyUsage() const { return Usage(size(), Amounts(resources(), 0)); }
  /// Project returns `requests` restricted to the tracked resources.
  Amounts Project(const Resources& requests) const;
  /// AddProjected adds `requests`, restricted to the tracked resources, to `into`.
  void AddProjected(Amounts& into, const Resources& requests) const;

  /// ExceedsMax explains why used[q] + req goes over q's max on a resource `req` asks for.
  std::optional<std::string> ExceedsMax(size_t q, const Usage& used, const Amounts& req) const;
  /// OverMinWith tells whether used[q] + req goes over q's min on a resource `req` asks for,
  /// i.e. whether the pod would borrow instead of using its namespace's guarantee.
  bool OverMinWith(size_t q, const Usage& used, const Amounts& req) const;
  /// Borrowing tells whether quota q uses more than its min of some resource a min names.
  bool Borrowing(size_t q, const Usage& used) const;
  /// ExceedsTotalMin explains why all quotas' usage plus `req` goes over the sum of every min,
  /// on a resource `req` asks for (no guarantee is left to borrow).
  std::optional<std::string> ExceedsTotalMin(const Usage& used, const Amounts& req) const;
  /// Check is PreFilter's rule for a pod of quota q requesting `req`: over max is refused; a pod
  /// that would borrow beyond its namespace's min is refused when the total min is used up.
  std::optional<std::string> Check(size_t q, const Usage& used, const Amounts& req) const;

 private:
  std::vector<std::string> namespaces_;
  std::unordered_map<schedhost_id, size_t> by_namespace_;
  std::vector<std::string> resource_names_;
  std::vector<schedhost_id> resource_ids_;
  std::vector<bool> min_tracked_;          // per resource: named by some min
  std::vector<Amounts> min_;               // per quota (0 when absent)
  std::vector<std::vector<int64_t>> max_;  // per quota (-1 when absent: unlimited)
};

/// ReservedPods remembers pods the snapshot does not hold yet with their namespace and requests
/// (between Reserve and PostBind/Unreserve; or nominated by a preemption until they reserve),
/// so usage counts them. Entries keep the namespace and the full requests rather than a quota
/// index and projected amounts, so they stay right when the quota table is replaced (a quota
/// file change). Thread-safe: Reserve, Unreserve and PostBind run on different threads.
class ReservedPods {
 public:
  void Add(std::string_view uid, schedhost_id namespace_id, const Resources& requests,
           int32_t priority = std::numeric_limits<int32_t>::min());
  /// Remove forgets `uid`; returns whether it was there.
  bool Remove(std::string_view uid);
  bool Contains(std::string_view uid) const;
  size_t size() const;
  /// PruneOlderThan forgets pods added longer than `age` ago (steady clock).
  void PruneOlderThan(std::chrono::steady_clock::duration age);
  /// AddTo adds, to `used` (of `table`), every remembered pod of a quota namespace of at least
  /// `min_priority` for which `counted` is false.
  void AddTo(const QuotaTable& table, Usage& used,
             const std::function<bool(std::string_view uid)>& counted,
             int32_t min_priority = std::numeric_limits<int32_t>::min()) const;

 private:
  struct Entry {
    schedhost_id namespace_id;
    std::vector<schedhost_resource> requests;
    int32_t priority;
    std::chrono::steady_clock::time_point added;
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> pods_;
};

/// Add adds `req` to `into` (same size); Subtract subtracts it.
void Add(Amounts& into, const Amounts& req);
void Subtract(Amounts& from, const Amounts& req);

}  // namespace schedhost::contrib::capacity
