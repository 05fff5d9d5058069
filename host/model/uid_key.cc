#include "host/model/uid_key.h"

#include <array>
#include <cstdio>

namespace schedhost::model {
namespace {

constexpr size_t kUuidLength = 36;
constexpr std::array<size_t, 4> kDashes = {8, 13, 18, 23};

// HexDigit returns the value of a lower-case hex digit, or -1 (upper case is not canonical: its
// text would not be the one GenerateUid gives back, and two spellings must not share a key).
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

UidKey::Probe::Probe(std::string_view uid) : text(uid) {
  if (uid.size() != kUuidLength) return;
  uint64_t words[2] = {0, 0};
  int nibbles = 0;
  size_t dash = 0;
  for (size_t i = 0; i < uid.size(); ++i) {
    if (dash < kDashes.size() && i == kDashes[dash]) {
      if (uid[i] != '-') return;
      ++dash;
      continue;
    }
    const int d = HexDigit(uid[i]);
    if (d < 0) return;
    uint64_t& w = words[nibbles / 16];
    w = (w << 4) | static_cast<uint64_t>(d);
    ++nibbles;
  }
  canonical = true;
  hi = words[0];
  lo = words[1];
  text = {};
}

UidKey::UidKey(std::string_view uid) {
  const Probe p(uid);
  if (p.canonical) {
    hi_ = p.hi;
    lo_ = p.lo;
  } else {
    text_ = std::make_unique<const std::string>(uid);
  }
}

UidKey::Probe UidKey::View() const {
  Probe p{std::string_view()};
  if (text_ != nullptr) {
    p.text = *text_;
  } else {
    p.canonical = true;
    p.hi = hi_;
    p.lo = lo_;
  }
  return p;
}

std::string UidKey::str() const { return text_ != nullptr ? *text_ : FormatUuid(hi_, lo_); }

std::string FormatUuid(uint64_t hi, uint64_t lo) {
  char buf[kUuidLength + 1];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::strong_ordering UidKey::Compare(const Probe& a, const Probe& b) {
  if (a.canonical != b.canonical) {
    return a.canonical ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  if (!a.canonical) return a.text <=> b.text;
  if (a.hi != b.hi) return a.hi <=> b.hi;
  return a.lo <=> b.lo;
}

}  // namespace schedhost::model
