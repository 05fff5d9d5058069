#pragma once
// SHA-256 (FIPS 180-4), used to name and pin plugin libraries by content.
//
// Hand-written (about a hundred lines) rather than taken from OpenSSL's libcrypto: the loader
// hashes a few files at load time, so speed does not matter, and a second crypto library would
// be one more runtime dependency for every host build and package.
//
//   Sha256 h;
//   h.Update(bytes);
//   std::string hex = Sha256::ToHex(h.Final());

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace schedhost::loader {

/// Sha256 computes a SHA-256 digest incrementally; not thread-safe.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  /// Sha256 starts an empty message.
  Sha256() noexcept;
  /// Update appends `data` to the message.
  void Update(std::span<const uint8_t> data) noexcept;
  /// Final pads the message and returns its digest; the object must not be used afterwards.
  Digest Final() noexcept;
  /// ToHex renders a digest as 64 lowercase hex digits.
  static std::string ToHex(const Digest& digest);

 private:
  void Block(const uint8_t* block) noexcept;

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

/// Sha256Hex returns the lowercase hex SHA-256 of `data`.
std::string Sha256Hex(std::span<const uint8_t> data);

}  // namespace schedhost::loader
