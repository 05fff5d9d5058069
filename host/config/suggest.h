// "Did you mean" help for misspelt keys, points and plugin names in error messages.
//
// A candidate is suggested when it differs from what was written by a small edit distance
// (case-insensitive), so `paralelism` suggests `parallelism` but `foo` suggests nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::config {

// EditDistance returns the Levenshtein distance between `a` and `b`, ignoring ASCII case.
size_t EditDistance(std::string_view a, std::string_view b);

// ClosestMatch returns the candidate closest to `word` when it is close enough to be a typo.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

// DidYouMean returns "; did you mean \"x\"?" for the closest candidate, or "" when none is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// JoinNames returns the names separated by ", ", e.g. "A, B, C" (and "(none)" when empty).
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace schedhost::config
