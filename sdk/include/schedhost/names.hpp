// Kubernetes name syntax for plugin argument validation: DNS-1123 subdomains, label values and
// qualified names (label keys, resource names). Header-only, part of the SDK, no host calls.
//
//   if (!schedhost::names::IsQualifiedName(key)) throw schedhost::ArgsError(...);
#pragma once

#include <algorithm>
#include <string_view>

namespace schedhost::names {

/// IsAlnum tells whether `c` is an ASCII letter or digit.
constexpr bool IsAlnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// IsDnsSubdomain tells whether `s` is a DNS-1123 subdomain: at most 253 characters of
/// dot-separated lowercase labels that start and end with an alphanumeric.
inline bool IsDnsSubdomain(std::string_view s) noexcept {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || !IsAlnum(label.front()) || !IsAlnum(label.back())) return false;
    for (char c : label) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

/// IsLabelValue tells whether `s` is a label value: empty, or at most 63 alphanumerics, '-', '_'
/// or '.', with an alphanumeric at both ends.
inline bool IsLabelValue(std::string_view s) noexcept {
  if (s.empty()) return true;
  if (s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

/// IsQualifiedName tells whether `s` is a qualified name ([DNS subdomain "/"] name, the name a
/// non-empty label value): the syntax of label keys and resource names.
inline bool IsQualifiedName(std::string_view s) noexcept {
  size_t slash = s.find('/');
  std::string_view name = slash == std::string_view::npos ? s : s.substr(slash + 1);
  if (slash != std::string_view::npos &&
      (s.find('/', slash + 1) != std::string_view::npos || !IsDnsSubdomain(s.substr(0, slash)))) {
    return false;
  }
  return !name.empty() && IsLabelValue(name);
}

}  // namespace schedhost::names
