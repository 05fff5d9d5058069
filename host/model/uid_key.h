// UidKey: an object's uid kept as a map key in 24 bytes. A canonical UUID (36 characters,
// lower-case hex, dashes at 8, 13, 18 and 23: what GenerateUid makes, and what an API server
// assigns) is kept as its 16 bytes; any other uid as an owned copy of its text. A std::string
// key of a UUID takes 32 bytes plus a 48-byte heap block, and maps keyed by uid hold one entry
// per pod.
//
//   std::map<UidKey, Entry, std::less<>> m;
//   m.emplace(UidKey(pod.uid()), Entry{});
//   auto it = m.find(UidKey::Probe(pod.uid()));  // no allocation
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace schedhost::model {

// FormatUuid writes the 128 bits hi:lo as a canonical UUID (GenerateUid's form).
std::string FormatUuid(uint64_t hi, uint64_t lo);

class UidKey {
 public:
  // Probe is a uid read for a lookup, without copying it.
  struct Probe {
    explicit Probe(std::string_view uid);
    bool canonical = false;
    uint64_t hi = 0;
    uint64_t lo = 0;
    std::string_view text;  // the uid, for one that is not canonical
  };

  explicit UidKey(std::string_view uid);

  // str returns the uid's text (formatted again for a canonical one).
  std::string str() const;

  // Canonical uids order before the others, by their bytes; the others by their text.
  friend std::strong_ordering operator<=>(const UidKey& a, const UidKey& b) {
    return Compare(a.View(), b.View());
  }
  friend std::strong_ordering operator<=>(const UidKey& a, const Probe& b) {
    return Compare(a.View(), b);
  }
  friend bool operator==(const UidKey& a, const UidKey& b) { return a <=> b == 0; }
  friend bool operator==(const UidKey& a, const Probe& b) { return a <=> b == 0; }

 private:
  static std::strong_ordering Compare(const Probe& a, const Probe& b);
  Probe View() const;

  uint64_t hi_ = 0;
  uint64_t lo_ = 0;
  std::unique_ptr<const std::string> text_;  // set for a uid that is not canonical
};

}  // namespace schedhost::model
