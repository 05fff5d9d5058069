#include "host/config/suggest.h"

#include <schedhost/args.hpp>

namespace schedhost::config {

// The SDK's ArgsReader suggests keys with the same rule, so plugin arguments and the host's own
// keys get the same help.
size_t EditDistance(std::string_view a, std::string_view b) {
  return schedhost::EditDistance(a, b);
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  return schedhost::ClosestMatch(word, candidates);
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> match = ClosestMatch(word, candidates);
  return match ? "; did you mean \"" + *match + "\"?" : "";
}

std::string JoinNames(const std::vector<std::string>& names) {
  if (names.empty()) return "(none)";
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace schedhost::config
