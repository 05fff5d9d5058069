#pragma once
// The schedhost_manifest: the text a plugin library carries in an ELF section so the loader can
// check its ABI version and list its plugins before running any of its code. The format is
// documented in sdk/include/schedhost/plugin.h: NUL-terminated "key value" lines, e.g.
//
//   schedhost-manifest 1
//   abi 1.0
//   min-host-minor 0
//   sdk 1.0.0
//   compiler gcc 12.2.0 libstdc++
//   plugin NodeName 1.0.0
//
// Unknown keys are ignored, so a newer SDK may add lines without breaking older hosts.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::loader {

/// ManifestError reports malformed manifest text; what() says which line and why.
class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// ManifestPlugin is one "plugin <Name> <version>" line.
struct ManifestPlugin {
  std::string name;
  std::string version;
};

/// Manifest is the parsed manifest of one library.
struct Manifest {
  uint32_t abi_major = 0;  // "abi M.m": the ABI the library was built against
  uint32_t abi_minor = 0;
  uint32_t min_host_minor = 0;  // "min-host-minor N": the oldest host minor it works with
  std::string sdk_version;      // "sdk V"
  std::string compiler;         // "compiler ...": the rest of the line
  std::vector<ManifestPlugin> plugins;
};

/// kManifestFormat is the only "schedhost-manifest" format version this host reads.
inline constexpr uint32_t kManifestFormat = 1;

/// ParseManifest parses manifest text (without its NUL); throws ManifestError naming the line
/// when the format line is missing or unsupported, a required key (abi, min-host-minor, sdk,
/// compiler) is missing or repeated, a value is malformed, or a plugin name repeats.
Manifest ParseManifest(std::string_view text);

/// ParseManifestSection parses the raw section bytes: the text up to the first NUL, followed by
/// nothing but NUL padding; throws ManifestError when the NUL is missing or a second manifest
/// follows (two manifests linked into one library).
Manifest ParseManifestSection(std::span<const uint8_t> section);

}  // namespace schedhost::loader
