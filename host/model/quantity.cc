#include "host/model/quantity.h"

#include <cstdio>
#include <limits>
#include <vector>

namespace schedhost::model {
namespace {

using Int128 = __int128;
using Uint128 = unsigned __int128;

constexpr Int128 kNanoPerUnit = 1'000'000'000;
constexpr Int128 kNanoPerMilli = 1'000'000;
constexpr Uint128 kMaxNano = static_cast<Uint128>(Quantity::kMaxUnits) * 1'000'000'000u;
// Any number with more integer digits than this (in nano-units) is above kMaxNano.
constexpr int64_t kMaxNanoDigits = 28;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSuffixLetter(char c) {
  for (char s : std::string_view("eEinumkKMGTP")) {
    if (c == s) return true;
  }
  return false;
}

std::string Printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

std::optional<Quantity> Fail(std::string* error, std::string reason) {
  if (error != nullptr) *error = std::move(reason);
  return std::nullopt;
}

// What a suffix means: value * 10^exp10 * 2^exp2.
struct Suffix {
  int64_t exp10 = 0;
  int exp2 = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

std::optional<Suffix> InterpretSuffix(std::string_view s, std::string* why) {
  struct Entry {
    std::string_view text;
    int exp10;
    int exp2;
  };
  static constexpr Entry kTable[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
      {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
      {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
  };
  for (const Entry& e : kTable) {
    if (e.text == s) {
      Suffix out;
      out.exp10 = e.exp10;
      out.exp2 = e.exp2;
      out.format = e.exp2 > 0 ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI;
      return out;
    }
  }
  // An exponent: e or E, an optional sign, then decimal digits fitting in int32.
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view rest = s.substr(1);
    bool negative = false;
    if (rest[0] == '+' || rest[0] == '-') {
      negative = rest[0] == '-';
      rest.remove_prefix(1);
    }
    bool ok = !rest.empty();
    int64_t value = 0;
    for (char c : rest) {
      if (!IsDigit(c)) {
        ok = false;
        break;
      }
      value = value * 10 + (c - '0');
      if (value > int64_t{INT32_MAX} + 1) {
        *why = "exponent \"" + std::string(s) + "\" is out of range";
        return std::nullopt;
      }
    }
    if (ok) {
      if (negative) value = -value;
      if (value > INT32_MAX || value < INT32_MIN) {
        *why = "exponent \"" + std::string(s) + "\" is out of range";
        return std::nullopt;
      }
      Suffix out;
      out.exp10 = value;
      out.format = Quantity::Format::kDecimalExponent;
      return out;
    }
  }
  *why = "unknown suffix \"" + std::string(s) + "\"";
  return std::nullopt;
}

// Multiplies a big-endian decimal digit string by two in place.
void DoubleDigits(std::vector<uint8_t>& digits) {
  int carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    int v = *it * 2 + carry;
    *it = static_cast<uint8_t>(v % 10);
    carry = v / 10;
  }
  if (carry != 0) digits.insert(digits.begin(), static_cast<uint8_t>(carry));
}

Uint128 DigitsValue(const std::vector<uint8_t>& digits, size_t count) {
  Uint128 v = 0;
  for (size_t i = 0; i < count; ++i) v = v * 10 + digits[i];
  return v;
}

Int128 DivideAwayFromZero(Int128 value, Int128 divisor) {
  Int128 q = value / divisor;
  if (value % divisor != 0) q += value < 0 ? -1 : 1;
  return q;
}

int64_t Saturate(Int128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  Uint128 u = negative ? static_cast<Uint128>(-(v + 1)) + 1 : static_cast<Uint128>(v);
  std::string out;
  while (u != 0) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) out.insert(out.begin(), '-');
  return out;
}

}  // namespace

std::optional<Quantity> Quantity::Parse(std::string_view text, std::string* error) {
  if (text.empty()) return Fail(error, "empty quantity");
  if (text.size() > kMaxTextLength) {
    return Fail(error, "longer than " + std::to_string(kMaxTextLength) + " characters");
  }
  size_t pos = 0;
  const size_t end = text.size();
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    ++pos;
  }
  size_t num_begin = pos;
  while (pos < end && IsDigit(text[pos])) ++pos;
  std::string_view num = text.substr(num_begin, pos - num_begin);
  std::string_view denom;
  if (pos < end && text[pos] == '.') {
    size_t denom_begin = ++pos;
    while (pos < end && IsDigit(text[pos])) ++pos;
    denom = text.substr(denom_begin, pos - denom_begin);
  }
  // The suffix: letters from upstream's set, an optional sign, then digits, then the end.
  size_t suffix_begin = pos;
  while (pos < end && IsSuffixLetter(text[pos])) ++pos;
  if (pos < end && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < end && IsDigit(text[pos])) ++pos;
  if (pos < end) {
    return Fail(error, "unexpected character " + Printable(text[pos]) + " at offset " +
                           std::to_string(pos));
  }
  if (num.empty() && denom.empty()) return Fail(error, "no digits before the suffix");
  std::string why;
  std::optional<Suffix> suffix = InterpretSuffix(text.substr(suffix_begin), &why);
  if (!suffix) return Fail(error, why);

  Quantity q;
  q.format_ = suffix->format;
  std::vector<uint8_t> digits;
  digits.reserve(num.size() + denom.size() + 20);
  for (std::string_view part : {num, denom}) {
    for (char c : part) {
      if (digits.empty() && c == '0') continue;  // Leading zeros carry no value.
      digits.push_back(static_cast<uint8_t>(c - '0'));
    }
  }
  if (digits.empty()) return q;  // Zero, whatever the sign and suffix.
  for (int i = 0; i < suffix->exp2; ++i) DoubleDigits(digits);

  // The amount in nano-units is digits * 10^shift, rounded away from zero.
  const int64_t shift = suffix->exp10 - static_cast<int64_t>(denom.size()) + 9;
  const int64_t n = static_cast<int64_t>(digits.size());
  const std::string out_of_range =
      "value out of range (magnitude above " + std::to_string(kMaxUnits) + " units)";
  Uint128 magnitude = 0;
  if (shift >= 0) {
    if (n + shift > kMaxNanoDigits + 1) return Fail(error, out_of_range);
    magnitude = DigitsValue(digits, digits.size());
    for (int64_t i = 0; i < shift; ++i) magnitude *= 10;
  } else {
    const int64_t kept = n + shift;  // Digits left of the nano point.
    if (kept > kMaxNanoDigits + 1) return Fail(error, out_of_range);
    bool fraction = false;
    size_t first_dropped = kept > 0 ? static_cast<size_t>(kept) : 0;
    for (size_t i = first_dropped; i < digits.size(); ++i) fraction |= digits[i] != 0;
    magnitude = kept > 0 ? DigitsValue(digits, static_cast<size_t>(kept)) : 0;
    if (fraction) ++magnitude;
  }
  if (magnitude > kMaxNano) return Fail(error, out_of_range);
  q.nano_ = negative ? -static_cast<Int128>(magnitude) : static_cast<Int128>(magnitude);
  return q;
}

Quantity Quantity::FromMilli(int64_t milli) {
  Quantity q;
  q.nano_ = static_cast<Int128>(milli) * kNanoPerMilli;
  return q;
}

Quantity Quantity::FromUnits(int64_t units, Format format) {
  Quantity q;
  q.nano_ = static_cast<Int128>(units) * kNanoPerUnit;
  q.format_ = format;
  return q;
}

int64_t Quantity::MilliValue() const { return Saturate(DivideAwayFromZero(nano_, kNanoPerMilli)); }

int64_t Quantity::Value() const { return Saturate(DivideAwayFromZero(nano_, kNanoPerUnit)); }

std::string Quantity::ToString() const {
  if (nano_ == 0) return "0";
  if (format_ == Format::kBinarySI && nano_ % kNanoPerUnit == 0) {
    Int128 units = nano_ / kNanoPerUnit;
    if (units >= 1024 || units <= -1024) {
      static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      size_t k = 0;
      while (k + 1 < std::size(kBinary) && units % 1024 == 0) {
        units /= 1024;
        ++k;
      }
      return Int128ToString(units) + std::string(kBinary[k]);
    }
  }
  // Decimal: the largest power-of-1000 suffix that keeps the mantissa an integer.
  static constexpr std::string_view kDecimal[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  Int128 mantissa = nano_;
  size_t k = 0;
  while (k + 1 < std::size(kDecimal) && mantissa % 1000 == 0) {
    mantissa /= 1000;
    ++k;
  }
  std::string suffix(kDecimal[k]);
  if (format_ == Format::kDecimalExponent) {
    int exp10 = static_cast<int>(k) * 3 - 9;
    suffix = exp10 == 0 ? "" : "e" + std::to_string(exp10);
  }
  return Int128ToString(mantissa) + suffix;
}

int64_t ResourceValue(std::string_view name, const Quantity& q) {
  return name == "cpu" ? q.MilliValue() : q.Value();
}

}  // namespace schedhost::model
