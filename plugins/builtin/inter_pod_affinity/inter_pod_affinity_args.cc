// InterPodAffinity's arguments: hard_pod_affinity_weight (0..100, as upstream's validation)
// and ignore_preferred_terms_of_existing_pods; unknown keys are refused.
#include <string>

#include "inter_pod_affinity.h"

namespace schedhost::plugins {
namespace {

constexpr std::string_view kPrefix = "plugin_config.InterPodAffinity";
constexpr std::string_view kHardWeight = "hard_pod_affinity_weight";
constexpr std::string_view kIgnorePreferred = "ignore_preferred_terms_of_existing_pods";
constexpr int64_t kMaxHardWeight = 100;

[[noreturn]] void Fail(const Args& at, std::string_view key, const std::string& msg) {
  const std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) +
                  (key.empty() ? std::string() : "." + std::string(key)) + ": " + msg);
}

}  // namespace

InterPodAffinityArgs ParseInterPodAffinityArgs(const Args& args) {
  InterPodAffinityArgs out;
  if (!args.present()) return out;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) Fail(args, "", "expected a table");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    const Args child = args.At(i, &key);
    if (key == kHardWeight) {
      if (child.kind() != SCHEDHOST_CONFIG_INT) Fail(child, key, "expected an integer");
      const int64_t v = child.Int(out.hard_pod_affinity_weight);
      if (v < 0 || v > kMaxHardWeight) {
        Fail(child, key, "must be in the range 0..100 (got " + std::to_string(v) + ")");
      }
      out.hard_pod_affinity_weight = static_cast<int32_t>(v);
    } else if (key == kIgnorePreferred) {
      if (child.kind() != SCHEDHOST_CONFIG_BOOL) Fail(child, key, "expected a boolean");
      out.ignore_preferred_terms_of_existing_pods = child.Bool(false);
    } else {
      Fail(child, key,
           "unknown key (known keys: hard_pod_affinity_weight, "
           "ignore_preferred_terms_of_existing_pods)");
    }
  }
  return out;
}

}  // namespace schedhost::plugins
