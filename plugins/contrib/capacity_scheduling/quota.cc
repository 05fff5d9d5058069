#include "quota.h"

#include <set>
#include <utility>

namespace schedhost::contrib::capacity {
namespace {

constexpr int64_t kKi = 1024;
constexpr int64_t kMi = kKi * 1024;
constexpr int64_t kGi = kMi * 1024;

}  // namespace

std::string FormatQuantity(std::string_view resource, int64_t value) {
  if (resource == "cpu") {
    if (value % 1000 == 0) return std::to_string(value / 1000);
    return std::to_string(value) + "m";
  }
  if (value != 0) {
    for (const auto& [unit, name] : {std::pair{kGi, "Gi"}, {kMi, "Mi"}, {kKi, "Ki"}}) {
      if (value % unit == 0) return std::to_string(value / unit) + name;
    }
  }
  return std::to_string(value);
}

QuotaTable::QuotaTable(const std::vector<QuotaSpec>& specs,
                       const std::function<schedhost_id(std::string_view)>& intern) {
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> min_names;
  for (const QuotaSpec& q : specs) {
    for (const auto& entry : q.min) {
      names.insert(entry.first);
      min_names.insert(entry.first);
    }
    for (const auto& entry : q.max) names.insert(entry.first);
  }
  resource_names_.assign(names.begin(), names.end());
  for (const std::string& n : resource_names_) {
    resource_ids_.push_back(intern(n));
    min_tracked_.push_back(min_names.count(n) != 0);
  }
  for (const QuotaSpec& q : specs) {
    by_namespace_.emplace(intern(q.namespace_name), namespaces_.size());
    namespaces_.push_back(q.namespace_name);
    Amounts min(resources(), 0);
    Amounts max(resources(), -1);
    for (size_t r = 0; r < resources(); ++r) {
      if (auto it = q.min.find(resource_names_[r]); it != q.min.end()) min[r] = it->second;
      if (auto it = q.max.find(resource_names_[r]); it != q.max.end()) max[r] = it->second;
    }
    min_.push_back(std::move(min));
    max_.push_back(std::move(max));
  }
}

std::optional<size_t> QuotaTable::IndexOf(schedhost_id ns) const {
  auto it = by_namespace_.find(ns);
  if (it == by_namespace_.end()) return std::nullopt;
  return it->second;
}

Amounts QuotaTable::Project(const Resources& requests) const {
  Amounts out(resources(), 0);
  for (size_t r = 0; r < resources(); ++r) out[r] = requests.Get(resource_ids_[r]);
  return out;
}

void QuotaTable::AddProjected(Amounts& into, const Resources& requests) const {
  for (size_t r = 0; r < resources() && r < into.size(); ++r) {
    into[r] += requests.Get(resource_ids_[r]);
  }
}

std::optional<std::string> QuotaTable::ExceedsMax(size_t q, const Usage& used,
                                                  const Amounts& req) const {
  std::string why;
  for (size_t r = 0; r < resources(); ++r) {
    if (req[r] <= 0 || max_[q][r] < 0 || used[q][r] + req[r] <= max_[q][r]) continue;
    const std::string& name = resource_names_[r];
    why += (why.empty() ? "" : ", ") + name + " " + FormatQuantity(name, used[q][r] + req[r]) +
           ", more than its max " + FormatQuantity(name, max_[q][r]);
  }
  if (why.empty()) return std::nullopt;
  return "namespace " + namespaces_[q] + " would use " + why;
}

bool QuotaTable::OverMinWith(size_t q, const Usage& used, const Amounts& req) const {
  for (size_t r = 0; r < resources(); ++r) {
    if (min_tracked_[r] && req[r] > 0 && used[q][r] + req[r] > min_[q][r]) return true;
  }
  return false;
}

bool QuotaTable::Borrowing(size_t q, const Usage& used) const {
  for (size_t r = 0; r < resources(); ++r) {
    if (min_tracked_[r] && used[q][r] > min_[q][r]) return true;
  }
  return false;
}

std::optional<std::string> QuotaTable::ExceedsTotalMin(const Usage& used,
                                                       const Amounts& req) const {
  std::string why;
  for (size_t r = 0; r < resources(); ++r) {
    if (!min_tracked_[r] || req[r] <= 0) continue;
    int64_t total_used = req[r];
    int64_t total_min = 0;
    for (size_t q = 0; q < size(); ++q) {
      total_used += used[q][r];
      total_min += min_[q][r];
    }
    if (total_used <= total_min) continue;
    const std::string& name = resource_names_[r];
    why += (why.empty() ? "" : ", ") + name + " " + FormatQuantity(name, total_used) +
           ", more than their total min " + FormatQuantity(name, total_min);
  }
  if (why.empty()) return std::nullopt;
  return "all quotas would use " + why;
}

std::optional<std::string> QuotaTable::Check(size_t q, const Usage& used,
                                             const Amounts& req) const {
  if (std::optional<std::string> why = ExceedsMax(q, used, req)) {
    return "exceeded quota: " + *why;
  }
  if (!OverMinWith(q, used, req)) return std::nullopt;  // within its guarantee
  if (std::optional<std::string> why = ExceedsTotalMin(used, req)) {
    return "exceeded quota: namespace " + namespaces_[q] +
           " would borrow beyond its min, but no guarantee is left to borrow: " + *why;
  }
  return std::nullopt;
}

void ReservedPods::Add(std::string_view uid, schedhost_id namespace_id, const Resources& requests,
                       int32_t priority) {
  std::vector<schedhost_resource> copy(requests.items().begin(), requests.items().end());
  std::lock_guard lock(mu_);
  pods_.insert_or_assign(std::string(uid), Entry{namespace_id, std::move(copy), priority,
                                                 std::chrono::steady_clock::now()});
}

bool ReservedPods::Contains(std::string_view uid) const {
  std::lock_guard lock(mu_);
  return pods_.find(uid) != pods_.end();
}

void ReservedPods::PruneOlderThan(std::chrono::steady_clock::duration age) {
  const auto cutoff = std::chrono::steady_clock::now() - age;
  std::lock_guard lock(mu_);
  std::erase_if(pods_, [cutoff](const auto& kv) { return kv.second.added <= cutoff; });
}

bool ReservedPods::Remove(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return false;
  pods_.erase(it);
  return true;
}

size_t ReservedPods::size() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

void ReservedPods::AddTo(const QuotaTable& table, Usage& used,
                         const std::function<bool(std::string_view uid)>& counted,
                         int32_t min_priority) const {
  std::lock_guard lock(mu_);
  for (const auto& [uid, e] : pods_) {
    const std::optional<size_t> q = table.IndexOf(e.namespace_id);
    if (!q || *q >= used.size() || e.priority < min_priority || counted(uid)) continue;
    table.AddProjected(used[*q],
                       Resources(schedhost_resources{e.requests.data(), e.requests.size()}));
  }
}

void Add(Amounts& into, const Amounts& req) {
  for (size_t r = 0; r < into.size() && r < req.size(); ++r) into[r] += req[r];
}

void Subtract(Amounts& from, const Amounts& req) {
  for (size_t r = 0; r < from.size() && r < req.size(); ++r) from[r] -= req[r];
}

}  // namespace schedhost::contrib::capacity
