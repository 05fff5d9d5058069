// Kubernetes resource quantities ("500m", "1.5Gi", "2e3"), parsed exactly like upstream's
// resource.ParseQuantity and held as an exact count of nano-units (no floating point).
// The host keeps cpu in millicores (MilliValue) and every other resource in units (Value).
//
//   auto q = Quantity::Parse("1.5Gi");   // q->Value() == 1610612736
#pragma once

#include <boost/container/flat_map.hpp>
#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace schedhost::model {

// Quantity is an exact resource amount; copyable and cheap (16 bytes of value plus a format).
struct Quantity {
 public:
  // Format remembers which notation the text used, for ToString's canonical form.
  enum class Format : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  // Magnitudes above this many units are rejected by Parse (upstream silently capped them).
  static constexpr int64_t kMaxUnits = INT64_MAX;
  // Parse refuses text longer than this many bytes.
  static constexpr size_t kMaxTextLength = 256;

  // Quantity constructs zero.
  Quantity() = default;

  // Parse reads `text` as upstream does (signs, decimals, SI / binary suffixes, exponents) and
  // rounds sub-nano precision away from zero; on failure returns nullopt and says why in *error.
  static std::optional<Quantity> Parse(std::string_view text, std::string* error = nullptr);
  // FromMilli returns `milli` thousandths of a unit (e.g. millicores), in decimal SI format.
  static Quantity FromMilli(int64_t milli);
  // FromUnits returns `units` whole units, in decimal SI format.
  static Quantity FromUnits(int64_t units, Format format = Format::kDecimalSI);

  // MilliValue returns the amount in thousandths, rounded away from zero; saturates at int64.
  int64_t MilliValue() const;
  // Value returns the amount in whole units, rounded away from zero like upstream's Value().
  int64_t Value() const;
  // Sign returns -1, 0 or 1.
  int Sign() const { return nano_ < 0 ? -1 : (nano_ > 0 ? 1 : 0); }
  // IsZero is true for a zero amount.
  bool IsZero() const { return nano_ == 0; }
  // format returns the notation the quantity was written in.
  Format format() const { return format_; }
  // nano returns the exact amount in nano-units; with FromNano it is a lossless encoding.
  __int128 nano() const { return nano_; }
  // FromNano returns `nano` nano-units written in `format` (the inverse of nano() and format()).
  static Quantity FromNano(__int128 nano, Format format) {
    Quantity q;
    q.nano_ = nano;
    q.format_ = format;
    return q;
  }
  // ToString renders the canonical text upstream would serialize ("1500m", "2Gi", "0").
  std::string ToString() const;

  // operator+= adds exactly; the format of the left side is kept.
  Quantity& operator+=(const Quantity& other) {
    nano_ += other.nano_;
    return *this;
  }
  // operator+ returns the exact sum.
  friend Quantity operator+(Quantity a, const Quantity& b) { return a += b; }
  // Comparisons look at the amount only, never at the format.
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nano_ == b.nano_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.nano_ < b.nano_
               ? std::strong_ordering::less
               : (a.nano_ > b.nano_ ? std::strong_ordering::greater : std::strong_ordering::equal);
  }

 private:
  __int128 nano_ = 0;
  Format format_ = Format::kDecimalSI;
};

// ResourceList maps resource names ("cpu", "memory", "nvidia.com/gpu") to quantities, sorted by
// name. A sorted vector: a container lists two or three resources, and a tree would take a
// 64-byte node for each in every pod the host keeps.
using ResourceList = boost::container::flat_map<std::string, Quantity, std::less<>>;

// ResourceValue converts `q` to the host's integer unit for resource `name`: millicores for
// "cpu", whole units (bytes, counts) for everything else.
int64_t ResourceValue(std::string_view name, const Quantity& q);

}  // namespace schedhost::model
