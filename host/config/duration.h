// Go-style durations ("500ms", "1s", "1m30s", "2h"), as kube-scheduler's config writes them.
//
// A duration is an optional sign followed by one or more decimal numbers, each with an optional
// fraction and a unit: ns, us (or µs), ms, s, m, h. "0" alone needs no unit. Values are kept
// in nanoseconds and must fit in a signed 64-bit count, as in Go.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace schedhost::config {

// ParseDuration returns the duration `text` spells, or nullopt with the reason in *error.
std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text,
                                                      std::string* error = nullptr);

// FormatDuration spells `d` the way Go prints it ("1m30s", "500ms", "0s").
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace schedhost::config
