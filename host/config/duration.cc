#include "host/config/duration.h"

#include <schedhost/units.hpp>

namespace schedhost::config {

// One implementation for the host's settings and plugin arguments (the SDK's ArgsReader).
std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text, std::string* error) {
  return schedhost::ParseDuration(text, error);
}

std::string FormatDuration(std::chrono::nanoseconds d) { return schedhost::FormatDuration(d); }

}  // namespace schedhost::config
