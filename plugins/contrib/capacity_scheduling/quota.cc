#include "quota.h"

#include <limits>
#include <set>
#include <utility>

namespace schedhost::contrib::capacity {
namespace {

__extension__ typedef __int128 Wide;  // __extension__: no -Wpedantic warning for __int128

constexpr int64_t kKi = 1024;
constexpr int64_t kMi = kKi * 1024;
constexpr int64_t kGi = kMi * 1024;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// MultiplyChecked multiplies `v` by `factor`, false when the product would pass `limit`.
bool MultiplyChecked(Wide& v, Wide factor, Wide limit) {
  if (v > limit / factor) return false;
  v *= factor;
  return true;
}

}  // namespace

std::optional<int64_t> ParseQuantity(std::string_view resource, std::string_view text,
                                     std::string* error) {
  auto fail = [&](std::string_view why) -> std::optional<int64_t> {
    if (error != nullptr) {
      // Appended in place: GCC 12 at -O3 misreads `"..." + std::string(...)` (-Wrestrict).
      error->assign(1, '"');
      error->append(text).append("\" is ").append(why);
    }
    return std::nullopt;
  };
  std::string_view s = text;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (!s.empty() && s.front() == '-') return fail("negative");
  // Mantissa: digits with an optional fraction.
  Wide mantissa = 0;
  Wide den = 1;
  size_t digits = 0;
  size_t frac = 0;
  bool dot = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (!IsDigit(c)) break;
    ++digits;
    if (dot) ++frac;
    if (digits > 18 || frac > 9) return fail("too precise or too large");
    mantissa = mantissa * 10 + (c - '0');
    if (dot) den *= 10;
  }
  if (digits == 0) return fail("not a quantity (want e.g. 2, 500m, 1.5, 4Gi)");
  // Suffix: binary (Ki..Ei), decimal (m, k, M..E) or a decimal exponent (e3, E-2).
  const std::string_view suffix = s.substr(i);
  int binary = 0;   // power of 1024
  int decimal = 0;  // power of 10
  static const std::pair<std::string_view, int> kBinary[] = {{"Ki", 1}, {"Mi", 2}, {"Gi", 3},
                                                             {"Ti", 4}, {"Pi", 5}, {"Ei", 6}};
  static const std::pair<std::string_view, int> kDecimal[] = {
      {"", 0}, {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};
  bool known = false;
  for (const auto& [name, power] : kBinary) {
    if (suffix == name) {
      binary = power;
      known = true;
    }
  }
  for (const auto& [name, power] : kDecimal) {
    if (suffix == name) {
      decimal = power;
      known = true;
    }
  }
  if (!known && suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view exp = suffix.substr(1);
    bool negative = false;
    if (exp.front() == '-' || exp.front() == '+') {
      negative = exp.front() == '-';
      exp.remove_prefix(1);
    }
    if (!exp.empty() && exp.size() <= 2) {
      known = true;
      for (char c : exp) {
        if (!IsDigit(c)) {
          known = false;
        } else {
          decimal = decimal * 10 + (c - '0');
        }
      }
      if (negative) decimal = -decimal;
    }
  }
  if (!known || decimal > 18 || decimal < -9) {
    return fail("not a quantity: unknown suffix \"" + std::string(suffix) +
                "\" (want m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent)");
  }
  if (resource == "cpu") decimal += 3;  // millicores
  for (; decimal < 0; ++decimal) den *= 10;
  const Wide limit = static_cast<Wide>(std::numeric_limits<int64_t>::max()) * den;
  bool ok = true;
  for (; ok && decimal > 0; --decimal) ok = MultiplyChecked(mantissa, 10, limit);
  for (; ok && binary > 0; --binary) ok = MultiplyChecked(mantissa, 1024, limit);
  if (!ok) return fail("too large");
  return static_cast<int64_t>((mantissa + den - 1) / den);  // rounded up
}

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
