#include "host/config/duration.h"

#include <array>
#include <cstdint>
#include <limits>

namespace schedhost::config {
namespace {

struct Unit {
  std::string_view name;
  uint64_t nanos;
};

constexpr std::array<Unit, 8> kUnits = {{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 MICRO SIGN
    {"\xCE\xBCs", 1'000},  // U+03BC GREEK SMALL LETTER MU
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::optional<std::chrono::nanoseconds> Fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return std::nullopt;
}

}  // namespace

std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text, std::string* error) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) {
    return Fail(error, "invalid duration " + quoted + ": expected a number and a unit like \"1s\"");
  }
  // The magnitude limit: 2^63 - 1 for positive values, 2^63 for negative ones.
  const uint64_t limit =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  uint64_t total = 0;
  while (!s.empty()) {
    if (!IsDigit(s.front()) && s.front() != '.') {
      return Fail(error, "invalid duration " + quoted + ": expected a number at \"" +
                             std::string(s) + "\"");
    }
    uint64_t whole = 0;
    bool whole_overflow = false;
    size_t digits = 0;
    while (!s.empty() && IsDigit(s.front())) {
      uint64_t digit = static_cast<uint64_t>(s.front() - '0');
      if (whole > (std::numeric_limits<uint64_t>::max() - digit) / 10) whole_overflow = true;
      whole = whole * 10 + digit;
      s.remove_prefix(1);
      ++digits;
    }
    // Fractional digits beyond what a double can hold are read and ignored, as Go does.
    uint64_t fraction = 0;
    double scale = 1;
    if (!s.empty() && s.front() == '.') {
      s.remove_prefix(1);
      while (!s.empty() && IsDigit(s.front())) {
        if (fraction < std::numeric_limits<uint64_t>::max() / 100) {
          fraction = fraction * 10 + static_cast<uint64_t>(s.front() - '0');
          scale *= 10;
        }
        s.remove_prefix(1);
        ++digits;
      }
    }
    if (digits == 0) {
      return Fail(error, "invalid duration " + quoted + ": a \".\" needs digits beside it");
    }
    size_t unit_len = 0;
    while (unit_len < s.size() && !IsDigit(s[unit_len]) && s[unit_len] != '.') ++unit_len;
    std::string_view unit_name = s.substr(0, unit_len);
    s.remove_prefix(unit_len);
    if (unit_name.empty()) {
      return Fail(error, "invalid duration " + quoted +
                             ": missing unit (use ns, us, ms, s, m or h, e.g. \"1s\")");
    }
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.name == unit_name) unit = &candidate;
    }
    if (unit == nullptr) {
      return Fail(error, "invalid duration " + quoted + ": unknown unit \"" +
                             std::string(unit_name) + "\" (use ns, us, ms, s, m or h)");
    }
    const std::string too_large = "invalid duration " + quoted + ": too large";
    if (whole_overflow || whole > limit / unit->nanos) return Fail(error, too_large);
    uint64_t value = whole * unit->nanos;
    if (fraction > 0) {
      double extra = static_cast<double>(fraction) * (static_cast<double>(unit->nanos) / scale);
      if (extra >= static_cast<double>(limit)) return Fail(error, too_large);
      value += static_cast<uint64_t>(extra);
      if (value > limit) return Fail(error, too_large);
    }
    if (value > limit - total) return Fail(error, too_large);
    total += value;
  }
  if (negative) {
    // -2^63 is representable; compute it without overflowing the positive side.
    if (total == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return std::chrono::nanoseconds(std::numeric_limits<int64_t>::min());
    }
    return std::chrono::nanoseconds(-static_cast<int64_t>(total));
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(total));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t count = d.count();
  if (count == 0) return "0s";
  std::string sign = count < 0 ? "-" : "";
  uint64_t n =
      count < 0 ? uint64_t{0} - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
  // Below one second Go uses the largest sub-second unit that keeps an integer part.
  auto with_fraction = [](uint64_t value, uint64_t unit, std::string_view suffix) {
    std::string out = std::to_string(value / unit);
    uint64_t rest = value % unit;
    if (rest != 0) {
      std::string frac = std::to_string(rest);
      size_t width = std::to_string(unit).size() - 1;
      frac.insert(0, width - frac.size(), '0');
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      out += "." + frac;
    }
    return out + std::string(suffix);
  };
  if (n < 1'000) return sign + std::to_string(n) + "ns";
  if (n < 1'000'000) return sign + with_fraction(n, 1'000, "\xC2\xB5s");
  if (n < 1'000'000'000) return sign + with_fraction(n, 1'000'000, "ms");
  uint64_t hours = n / 3'600'000'000'000;
  uint64_t minutes = (n / 60'000'000'000) % 60;
  uint64_t rest = n % 60'000'000'000;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += with_fraction(rest, 1'000'000'000, "s");
  return out;
}

}  // namespace schedhost::config
