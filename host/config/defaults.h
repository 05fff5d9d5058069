// The default profile and how a user's multi_point lists merge with it.
//
// The defaults are upstream kube-scheduler's default profile, all enabled through multi_point.
// A profile's multi_point is the defaults with the user's `disabled` names removed ("*" removes
// them all), each user `enabled` entry that names a remaining default replacing it in place,
// and the other enabled entries appended in order. Specific points have no defaults.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "host/config/host_config.h"

namespace schedhost::config {

// kWildcard is the plugin name that, in a `disabled` list, stands for every plugin.
inline constexpr std::string_view kWildcard = "*";

// DefaultPlugin is one plugin of the default profile with its score weight (0: not a scorer).
struct DefaultPlugin {
  std::string_view name;
  int32_t weight = 0;
};

// DefaultMultiPointPlugins returns the default profile's multi_point plugins in upstream order.
std::vector<DefaultPlugin> DefaultMultiPointPlugins();

// DefaultMultiPointEntries returns DefaultMultiPointPlugins as entries located at `where`.
std::vector<PluginEntry> DefaultMultiPointEntries(const SourceLocation& where);

// MergeWithDefaults returns the enabled list `defaults` turns into under the user's `user` set.
std::vector<PluginEntry> MergeWithDefaults(const std::vector<PluginEntry>& defaults,
                                           const PluginSet& user);

}  // namespace schedhost::config
