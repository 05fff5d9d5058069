// libFuzzer target for host/config: any bytes fed to ParseConfig must either parse or throw
// ConfigError (never crash, hang or throw anything else), and every parsed profile must expand
// or throw ConfigError with a lookup that knows a few plugins. Whatever parses also has its
// plugin arguments walked through the ABI accessors.
//
//   clang++-14 -std=c++20 -fsanitize=fuzzer,address -I. -Isdk/include \
//     tests/fuzz/config_fuzz.cc host/config/*.cc      (from the repository root)
//   ./a.out tests/fuzz/corpus/config
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/config/config_tree.h"
#include "host/config/expand.h"
#include "host/config/host_config.h"

namespace {

using schedhost::config::Point;
using schedhost::config::PointBit;

std::optional<uint32_t> Lookup(std::string_view name) {
  if (name == "PrioritySort") return PointBit(Point::kQueueSort);
  if (name == "DefaultBinder") return PointBit(Point::kBind);
  if (name == "NodeName" || name == "NodeUnschedulable") return PointBit(Point::kFilter);
  if (name == "SchedulingGates") return PointBit(Point::kPreEnqueue);
  if (name == "TaintToleration") {
    return PointBit(Point::kFilter) | PointBit(Point::kPreScore) | PointBit(Point::kScore);
  }
  if (name == "NodeAffinity" || name == "NodeResourcesFit") {
    return PointBit(Point::kPreFilter) | PointBit(Point::kFilter) | PointBit(Point::kPreScore) |
           PointBit(Point::kScore);
  }
  if (name == "NodePorts") return PointBit(Point::kPreFilter) | PointBit(Point::kFilter);
  if (name == "Everything") return schedhost::config::kAllPointsMask;
  if (name == "Nothing") return 0u;
  return std::nullopt;
}

// Walk reads every node of a plugin arguments tree through the ABI accessors.
size_t Walk(const schedhost_config* node, int depth) {
  using namespace schedhost::config;
  size_t seen = 1;
  schedhost_str s{};
  int64_t i = 0;
  double f = 0;
  int32_t b = 0;
  ConfigString(node, &s);
  ConfigInt(node, &i);
  ConfigFloat(node, &f);
  ConfigBool(node, &b);
  seen += ConfigLocation(node).len > 0 ? 1 : 0;
  if (depth > 64) return seen;
  size_t len = ConfigLen(node);
  for (size_t k = 0; k <= len; ++k) {  // one past the end must be NULL
    schedhost_str key{};
    const schedhost_config* child = ConfigAt(node, k, &key);
    if (child == nullptr) continue;
    if (ConfigKind(node) == SCHEDHOST_CONFIG_TABLE && ConfigGet(node, key) == nullptr) {
      __builtin_trap();  // every table key must be found again by ConfigGet
    }
    seen += Walk(child, depth + 1);
  }
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace schedhost::config;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  HostConfig config;
  try {
    config = ParseConfig(text, "fuzz.toml", "/base");
  } catch (const ConfigError&) {
    return 0;
  }
  const std::vector<std::string> known = {"DefaultBinder", "NodeName", "PrioritySort"};
  for (const Profile& profile : config.profiles) {
    for (const auto& [name, tree] : profile.plugin_config) Walk(AsAbi(tree.get()), 0);
    try {
      ExpandedProfile expanded = ExpandProfile(profile, Lookup, known);
      (void)Describe(expanded);
    } catch (const ConfigError&) {
    }
  }
  return 0;
}
