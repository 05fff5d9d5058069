// Kubernetes resource quantities ("500m", "1.5Gi", "2e3") and Go durations ("250ms", "1m30s")
// for plugin arguments. Header-only, part of the SDK, no host calls; exact integer arithmetic,
// no floating point for quantities.
//
//   std::string why;
//   std::optional<int64_t> milli = schedhost::ParseQuantity("1.5", QuantityUnit::kMilli, &why);
//   // *milli == 1500
//   std::optional<std::chrono::nanoseconds> d = schedhost::ParseDuration("1m30s", &why);
//   schedhost::FormatDuration(*d) == "1m30s";
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace schedhost {

/// QuantityUnit is the integer unit a quantity is read in: whole units (bytes, counts; upstream's
/// Quantity.Value) or thousandths (millicores; upstream's MilliValue).
enum class QuantityUnit { kUnits, kMilli };

namespace units_detail {

// Cat joins `parts`. Messages are built with it rather than with `"literal" + std::string(...)`,
// which GCC 12 at -O3 misreads as overlapping copies (-Wrestrict) in code that includes this.
inline std::string Cat(std::initializer_list<std::string_view> parts) {
  size_t size = 0;
  for (std::string_view p : parts) size += p.size();
  std::string out;
  out.reserve(size);
  for (std::string_view p : parts) out.append(p);
  return out;
}

constexpr bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }

// MultiplyDecimal multiplies the decimal digit string `digits` by `factor` in place.
inline void MultiplyDecimal(std::string& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    const uint64_t v = static_cast<uint64_t>(digits[i] - '0') * factor + carry;
    digits[i] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  for (; carry > 0; carry /= 10) digits.insert(digits.begin(), static_cast<char>('0' + carry % 10));
}

// ToInt64 reads a digit string without leading zeros; nullopt when above INT64_MAX.
inline std::optional<int64_t> ToInt64(std::string_view digits) {
  if (digits.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(v);
}

// TakeSign removes a leading '+' or '-' from `s` and tells whether it was '-'.
inline bool TakeSign(std::string_view& s) {
  if (s.empty() || (s.front() != '+' && s.front() != '-')) return false;
  const bool negative = s.front() == '-';
  s.remove_prefix(1);
  return negative;
}

inline std::nullopt_t Fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return std::nullopt;
}

}  // namespace units_detail

/// ParseQuantity reads a Kubernetes quantity as upstream's resource.ParseQuantity does: a sign,
/// digits with an optional fraction ("1.5", ".5", "5."), then a suffix — decimal (n, u, m, "",
/// k, M, G, T, P, E), binary (Ki, Mi, Gi, Ti, Pi, Ei) or an exponent (e3, E-2). It returns the
/// amount in `unit`, rounded away from zero like upstream's Value and MilliValue ("0.1m" is 1
/// millicore), or nullopt with why in *error when the text is not a quantity or the amount
/// does not fit in int64.
inline std::optional<int64_t> ParseQuantity(std::string_view text,
                                            QuantityUnit unit = QuantityUnit::kUnits,
                                            std::string* error = nullptr) {
  using units_detail::Cat;
  using units_detail::Fail;
  using units_detail::IsDigit;
  const std::string quoted = Cat({"\"", text, "\""});
  std::string_view s = text;
  const bool negative = units_detail::TakeSign(s);
  std::string digits;  // every digit, the fraction's too; the value is digits * 10^exp10
  int64_t exp10 = 0;
  bool dot = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '.' && !dot) {
      dot = true;
    } else if (IsDigit(s[i])) {
      digits.push_back(s[i]);
      if (dot) --exp10;
    } else {
      break;
    }
  }
  if (digits.empty())
    return Fail(error, Cat({quoted, " is not a quantity (want e.g. 2, 500m, 1.5, 4Gi)"}));
  const std::string_view suffix = s.substr(i);
  // Suffixes as literals in the code rather than a table: a static array in an inline function
  // would be a GNU_UNIQUE symbol in a host built with default visibility.
  int binary = 0;  // powers of 1024
  bool known = true;
  if (suffix.size() == 2 && suffix[1] == 'i') {
    const std::string_view letters = "KMGTPE";
    const size_t at = letters.find(suffix[0]);
    known = at != std::string_view::npos;
    binary = static_cast<int>(at) + 1;
  } else if (suffix.size() <= 1) {
    // The decimal prefixes, 10^3 apart; '_' holds the place of the empty suffix.
    const std::string_view letters = "num_kMGTPE";
    const size_t at =
        suffix.empty() ? 3 : (suffix[0] == '_' ? suffix.npos : letters.find(suffix[0]));
    known = at != std::string_view::npos;
    exp10 += (static_cast<int64_t>(at) - 3) * 3;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view exp = suffix.substr(1);
    const bool exp_negative = units_detail::TakeSign(exp);
    known = !exp.empty();
    int64_t e = 0;
    for (char c : exp) {
      if (!IsDigit(c)) known = false;
      if (e < 1'000'000) e = e * 10 + (c - '0');  // beyond that, only the sign matters
    }
    exp10 += exp_negative ? -e : e;
  } else {
    known = false;
  }
  if (!known) {
    return Fail(error, Cat({quoted, " is not a quantity: unknown suffix \"", suffix,
                            "\" (want m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent "
                            "such as e3)"}));
  }
  if (unit == QuantityUnit::kMilli) exp10 += 3;
  digits.erase(0, digits.find_first_not_of('0'));
  if (digits.empty()) return 0;
  for (; binary > 0; --binary) units_detail::MultiplyDecimal(digits, 1024);
  std::optional<int64_t> v;
  const std::string too_large = Cat({quoted, " is too large"});
  if (exp10 >= 0) {
    if (static_cast<int64_t>(digits.size()) + exp10 > 19) return Fail(error, too_large);
    digits.append(static_cast<size_t>(exp10), '0');
    v = units_detail::ToInt64(digits);
  } else if (-exp10 >= static_cast<int64_t>(digits.size())) {
    v = 1;  // a non-zero amount below the unit rounds up to one
  } else {
    const size_t whole = digits.size() - static_cast<size_t>(-exp10);
    const bool fraction = digits.find_first_not_of('0', whole) != std::string::npos;
    v = units_detail::ToInt64(std::string_view(digits).substr(0, whole));
    if (v && fraction) {
      if (*v == std::numeric_limits<int64_t>::max()) return Fail(error, too_large);
      ++*v;
    }
  }
  if (!v) return Fail(error, too_large);
  return negative ? -*v : *v;
}

/// ParseDuration reads a Go duration as time.ParseDuration does: an optional sign, then one or
/// more decimal numbers, each with an optional fraction and a unit (ns, us or µs, ms, s, m, h),
/// e.g. "250ms", "1m30s", "-1.5h"; "0" alone needs no unit. It returns nullopt with why in
/// *error when the text is not a duration or does not fit in int64 nanoseconds.
inline std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text,
                                                             std::string* error = nullptr) {
  using units_detail::Cat;
  using units_detail::Fail;
  using units_detail::IsDigit;
  const std::string quoted = Cat({"\"", text, "\""});
  std::string_view s = text;
  const bool negative = units_detail::TakeSign(s);
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) {
    return Fail(error,
                Cat({"invalid duration ", quoted, ": expected a number and a unit like \"1s\""}));
  }
  // The magnitude limit: 2^63 - 1 for positive values, 2^63 for negative ones.
  const uint64_t limit =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  uint64_t total = 0;
  while (!s.empty()) {
    if (!IsDigit(s.front()) && s.front() != '.') {
      return Fail(error, Cat({"invalid duration ", quoted, ": expected a number at \"", s, "\""}));
    }
    uint64_t whole = 0;
    bool whole_overflow = false;
    size_t digits = 0;
    while (!s.empty() && IsDigit(s.front())) {
      const auto digit = static_cast<uint64_t>(s.front() - '0');
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
      return Fail(error, Cat({"invalid duration ", quoted, ": a \".\" needs digits beside it"}));
    }
    size_t unit_len = 0;
    while (unit_len < s.size() && !IsDigit(s[unit_len]) && s[unit_len] != '.') ++unit_len;
    const std::string_view unit = s.substr(0, unit_len);
    s.remove_prefix(unit_len);
    if (unit.empty()) {
      return Fail(error, Cat({"invalid duration ", quoted,
                              ": missing unit (use ns, us, ms, s, m or h, e.g. \"1s\")"}));
    }
    uint64_t nanos = 0;
    if (unit == "ns") {
      nanos = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {  // U+00B5, U+03BC
      nanos = 1'000;
    } else if (unit == "ms") {
      nanos = 1'000'000;
    } else if (unit == "s") {
      nanos = 1'000'000'000;
    } else if (unit == "m") {
      nanos = 60'000'000'000;
    } else if (unit == "h") {
      nanos = 3'600'000'000'000;
    } else {
      return Fail(error, Cat({"invalid duration ", quoted, ": unknown unit \"", unit,
                              "\" (use ns, us, ms, s, m or h)"}));
    }
    const std::string too_large = Cat({"invalid duration ", quoted, ": too large"});
    if (whole_overflow || whole > limit / nanos) return Fail(error, too_large);
    uint64_t value = whole * nanos;
    if (fraction > 0) {
      const double extra = static_cast<double>(fraction) * (static_cast<double>(nanos) / scale);
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

/// FormatDuration spells `d` the way Go's Duration.String does ("1m30s", "250ms", "1h0m0s", "0s").
inline std::string FormatDuration(std::chrono::nanoseconds d) {
  const int64_t count = d.count();
  if (count == 0) return "0s";
  const std::string sign = count < 0 ? "-" : "";
  const uint64_t n =
      count < 0 ? uint64_t{0} - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
  // Below one second Go uses the largest sub-second unit that keeps an integer part.
  auto with_fraction = [](uint64_t value, uint64_t unit, std::string_view suffix) {
    std::string out = std::to_string(value / unit);
    const uint64_t rest = value % unit;
    if (rest != 0) {
      std::string frac = std::to_string(rest);
      const size_t width = std::to_string(unit).size() - 1;
      frac.insert(0, width - frac.size(), '0');
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      out.append(".").append(frac);
    }
    return out.append(suffix);
  };
  if (n < 1'000) return units_detail::Cat({sign, std::to_string(n), "ns"});
  if (n < 1'000'000) return units_detail::Cat({sign, with_fraction(n, 1'000, "\xC2\xB5s")});
  if (n < 1'000'000'000) return units_detail::Cat({sign, with_fraction(n, 1'000'000, "ms")});
  const uint64_t hours = n / 3'600'000'000'000;
  const uint64_t minutes = (n / 60'000'000'000) % 60;
  const uint64_t rest = n % 60'000'000'000;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += with_fraction(rest, 1'000'000'000, "s");
  return out;
}

}  // namespace schedhost
