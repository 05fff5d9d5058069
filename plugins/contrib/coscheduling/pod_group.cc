#include "pod_group.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <utility>

namespace schedhost::contrib {

MinAvailable ParseMinAvailable(const Pod& pod) {
  MinAvailable out;
  const schedhost_pod_view* v = pod.raw();
  for (const auto& a : MakeSpan(v->annotations, v->annotations_len)) {
    if (ToView(a.key) != kMinAvailableAnnotation) continue;
    out.present = true;
    const std::string_view text = ToView(a.value);
    int64_t n = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, n);
    if (text.empty() || ec != std::errc() || ptr != end || n < 1 || n > kMaxMinAvailable) {
      out.error = "annotation " + std::string(kMinAvailableAnnotation) + " is \"" +
                  std::string(text) + "\"; want an integer from 1 to " +
                  std::to_string(kMaxMinAvailable);
      return out;
    }
    out.value = static_cast<int32_t>(n);
    return out;
  }
  return out;
}

int32_t GroupRegistry::Observe(const GroupKey& key, std::string_view namespace_name,
                               std::string_view name, std::string_view uid, int64_t created_ns,
                               int32_t min_available) {
  std::unique_lock lock(mu_);
  auto [it, inserted] = groups_.try_emplace(key);
  Group& g = it->second;
  if (inserted) {
    g.namespace_name = namespace_name;
    g.name = name;
    g.created_ns = created_ns;
    g.met_at = std::chrono::steady_clock::now();
  }
  g.members.insert_or_assign(std::string(uid), min_available);
  int32_t m = 1;
  for (const auto& [u, v] : g.members) m = std::max(m, v);
  return m;
}

void GroupRegistry::Forget(const GroupKey& key, std::string_view uid) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  auto m = it->second.members.find(uid);
  if (m != it->second.members.end()) it->second.members.erase(m);
}

std::optional<SortKey> GroupRegistry::Sort(const GroupKey& key) const {
  std::shared_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return std::nullopt;
  return SortKey{it->second.created_ns, it->second.namespace_name, it->second.name};
}

std::set<std::string, std::less<>> GroupRegistry::Members(const GroupKey& key) const {
  std::shared_lock lock(mu_);
  std::set<std::string, std::less<>> out;
  auto it = groups_.find(key);
  if (it == groups_.end()) return out;
  for (const auto& [uid, v] : it->second.members) out.insert(uid);
  return out;
}

int32_t GroupRegistry::MinAvailable(const GroupKey& key) const {
  std::shared_lock lock(mu_);
  auto it = groups_.find(key);
  int32_t m = 1;
  if (it == groups_.end()) return m;
  for (const auto& [u, v] : it->second.members) m = std::max(m, v);
  return m;
}

void GroupRegistry::Deny(const GroupKey& key, std::chrono::steady_clock::time_point until,
                         std::string reason) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  it->second.denied_until = until;
  it->second.denied_reason = std::move(reason);
}

bool GroupRegistry::Lift(const GroupKey& key) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end() || it->second.denied_until == std::chrono::steady_clock::time_point{}) {
    return false;
  }
  it->second.denied_until = {};
  return true;
}

std::chrono::steady_clock::time_point GroupRegistry::MetAt(const GroupKey& key) const {
  std::shared_lock lock(mu_);
  auto it = groups_.find(key);
  return it == groups_.end() ? std::chrono::steady_clock::time_point{} : it->second.met_at;
}

std::optional<std::string> GroupRegistry::Denied(const GroupKey& key,
                                                 std::chrono::steady_clock::time_point now) const {
  std::shared_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end() || now >= it->second.denied_until) return std::nullopt;
  return it->second.denied_reason;
}

}  // namespace schedhost::contrib
