#include "pod_group.h"

#include <charconv>
#include <mutex>
#include <schedhost/names.hpp>
#include <utility>

namespace schedhost::contrib {
namespace {

// Digits reads exactly `n` decimal digits at `pos`, advancing it.
std::optional<int> Digits(std::string_view text, size_t& pos, size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int value = 0;
  const char* first = text.data() + pos;
  auto [ptr, ec] = std::from_chars(first, first + n, value);
  if (ec != std::errc() || ptr != first + n) return std::nullopt;
  pos += n;
  return value;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || (text[pos] != c && !(c == 'T' && text[pos] == 't'))) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  size_t pos = 0;
  const auto year = Digits(text, pos, 4);
  if (!year || !Expect(text, pos, '-')) return std::nullopt;
  const auto month = Digits(text, pos, 2);
  if (!month || !Expect(text, pos, '-')) return std::nullopt;
  const auto day = Digits(text, pos, 2);
  if (!day || !Expect(text, pos, 'T')) return std::nullopt;
  const auto hour = Digits(text, pos, 2);
  if (!hour || !Expect(text, pos, ':')) return std::nullopt;
  const auto minute = Digits(text, pos, 2);
  if (!minute || !Expect(text, pos, ':')) return std::nullopt;
  const auto second = Digits(text, pos, 2);
  if (!second || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;
  int64_t fraction_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = 100'000'000;
    const size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      fraction_ns += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '+' ? 1 : -1;
    ++pos;
    const auto oh = Digits(text, pos, 2);
    if (!oh || !Expect(text, pos, ':')) return std::nullopt;
    const auto om = Digits(text, pos, 2);
    if (!om) return std::nullopt;
    offset_s = int64_t{sign} * (int64_t{*oh} * 3600 + int64_t{*om} * 60);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  const int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const int64_t seconds = days * 86400 + int64_t{*hour} * 3600 + int64_t{*minute} * 60 +
                          int64_t{*second} - offset_s;
  return seconds * 1'000'000'000 + fraction_ns;
}

PodGroupSpec DecodePodGroup(const Host& host, const Args& object) {
  PodGroupSpec out;
  ArgsReader spec = ArgsReader::Object(object["spec"], "spec");
  out.min_member = static_cast<int32_t>(
      spec.Int("minMember", {.min = 1, .max = kMaxMinMember, .fallback = 1}));
  out.schedule_timeout =
      std::chrono::seconds(spec.Int("scheduleTimeoutSeconds", {.min = 0, .fallback = 0}));
  spec.Table("minResources", [&](ArgsReader& t) {
    for (const std::string& name : t.Keys()) {
      if (!names::IsQualifiedName(name)) t.Fail(name, "not a valid resource name");
      const QuantityUnit unit = name == "cpu" ? QuantityUnit::kMilli : QuantityUnit::kUnits;
      out.min_resources.emplace_back(host.Intern(name),
                                     t.Quantity(name, {.unit = unit, .min = 0}));
    }
  });
  ArgsReader meta = ArgsReader::Object(object["metadata"], "metadata");
  const std::string created = meta.String("creationTimestamp");
  if (!created.empty()) {
    std::optional<int64_t> ns = ParseRfc3339(created);
    if (!ns) meta.Fail("creationTimestamp", "\"" + created + "\" is not an RFC 3339 time");
    out.created_ns = *ns;
  }
  return out;
}

void GroupRegistry::Observe(const GroupKey& key, std::string_view namespace_name,
                            std::string_view name, std::string_view uid, int64_t created_ns) {
  std::unique_lock lock(mu_);
  auto [it, inserted] = groups_.try_emplace(key);
  Group& g = it->second;
  if (inserted) {
    g.namespace_name = namespace_name;
    g.name = name;
    g.created_ns = created_ns;
    g.met_at = std::chrono::steady_clock::now();
  }
  if (g.members.find(uid) == g.members.end()) g.members.emplace(uid);
}

void GroupRegistry::Join(const GroupKey& key, std::string_view uid) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it != groups_.end() && it->second.members.find(uid) == it->second.members.end()) {
    it->second.members.emplace(uid);
  }
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
  auto it = groups_.find(key);
  return it == groups_.end() ? std::set<std::string, std::less<>>{} : it->second.members;
}

void GroupRegistry::Deny(const GroupKey& key, std::chrono::steady_clock::time_point until,
                         std::string reason) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  it->second.denied_until = until;
  it->second.denied_reason = std::move(reason);
  it->second.permitted_until = {};
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

void GroupRegistry::Permit(const GroupKey& key, std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it != groups_.end()) it->second.permitted_until = until;
}

bool GroupRegistry::Permitted(const GroupKey& key,
                              std::chrono::steady_clock::time_point now) const {
  std::shared_lock lock(mu_);
  auto it = groups_.find(key);
  return it != groups_.end() && now < it->second.permitted_until;
}

std::set<std::string, std::less<>> GroupRegistry::Bound(const GroupKey& key,
                                                        std::string_view uid) {
  std::unique_lock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return {};
  if (it->second.bound.find(uid) == it->second.bound.end()) it->second.bound.emplace(uid);
  return it->second.bound;
}

}  // namespace schedhost::contrib
