#include "host/model/meta.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>
#include <mutex>
#include <random>

#include "host/model/uid_key.h"

namespace schedhost::model {
namespace {

bool ReadDigits(std::string_view s, size_t pos, size_t count, int64_t* out) {
  if (pos + count > s.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date; counts March-based years so the leap
// day falls at the end of each 400-year era's year.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t year_of_era = y - era * 400;
  int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

}  // namespace

std::string GenerateUid() {
  static std::mutex mu;
  static std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  uint64_t hi;
  uint64_t lo;
  {
    std::lock_guard lock(mu);
    hi = rng();
    lo = rng();
  }
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // Version 4.
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant.
  return FormatUuid(hi, lo);
}

void DefaultMeta(ObjectMeta& meta) {
  NormalizeLabels(meta.labels);
  NormalizeLabels(meta.annotations);
  if (meta.uid.empty()) meta.uid = GenerateUid();
}

std::optional<int64_t> ParseRfc3339(std::string_view s) {
  int64_t year, month, day, hour, minute, second;
  if (!ReadDigits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !ReadDigits(s, 5, 2, &month) ||
      s[7] != '-' || !ReadDigits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !ReadDigits(s, 11, 2, &hour) || s[13] != ':' || !ReadDigits(s, 14, 2, &minute) ||
      s[16] != ':' || !ReadDigits(s, 17, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits >= 9) return std::nullopt;
      nanos = nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (size_t i = digits; i < 9; ++i) nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int64_t oh, om;
    if (!ReadDigits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !ReadDigits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_seconds = (oh * 60 + om) * 60 * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  // int64 nanoseconds cover 1677-09-21 .. 2262-04-11.
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds) return std::nullopt;
  return seconds * 1'000'000'000 + nanos;
}

std::string FormatRfc3339(int64_t unix_ns) {
  int64_t seconds = unix_ns / 1'000'000'000;
  int64_t nanos = unix_ns % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --seconds;
  }
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  if (nanos != 0) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09lld", static_cast<long long>(nanos));
    std::string f(frac);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "Z";
}

std::string FormatMicroTime(int64_t unix_ns) {
  int64_t seconds = unix_ns / 1'000'000'000;
  int64_t micros = unix_ns % 1'000'000'000 / 1000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  std::string out = FormatRfc3339(seconds * 1'000'000'000);  // "...:05Z"
  out.pop_back();
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(micros));
  return out + frac + "Z";
}

int64_t NowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace schedhost::model
