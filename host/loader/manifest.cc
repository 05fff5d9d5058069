#include "host/loader/manifest.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace schedhost::loader {
namespace {

[[noreturn]] void Fail(size_t line, std::string_view what) {
  throw ManifestError("line " + std::to_string(line) + ": " + std::string(what));
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > pos) out.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

// ParseNumber accepts plain decimal digits only (no sign, no spaces) that fit in 32 bits.
bool ParseNumber(std::string_view s, uint32_t& out) {
  if (s.empty() || s.size() > 10) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::string Quote(std::string_view s) { return "'" + std::string(s.substr(0, 80)) + "'"; }

bool Printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c != 0x7f; });
}

}  // namespace

Manifest ParseManifest(std::string_view text) {
  Manifest m;
  std::set<std::string, std::less<>> seen_keys;
  std::set<std::string, std::less<>> plugin_names;
  size_t line_no = 0;
  bool have_format = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!Printable(line)) Fail(line_no, "control characters in the manifest text");
    const std::vector<std::string_view> f = Fields(line);
    if (f.empty()) continue;
    const std::string_view key = f[0];
    if (!have_format) {
      uint32_t format = 0;
      if (key != "schedhost-manifest" || f.size() != 2 || !ParseNumber(f[1], format)) {
        Fail(line_no, "expected 'schedhost-manifest 1' first, got " + Quote(line));
      }
      if (format != kManifestFormat) {
        Fail(line_no, "manifest format " + std::to_string(format) +
                          " is not supported (this host " + "reads format " +
                          std::to_string(kManifestFormat) + ")");
      }
      have_format = true;
      continue;
    }
    if (key == "plugin") {
      if (f.size() != 3) Fail(line_no, "expected 'plugin <Name> <version>', got " + Quote(line));
      if (!plugin_names.insert(std::string(f[1])).second) {
        Fail(line_no, "plugin " + std::string(f[1]) + " is listed twice");
      }
      m.plugins.push_back({std::string(f[1]), std::string(f[2])});
      continue;
    }
    const bool known = key == "abi" || key == "min-host-minor" || key == "sdk" ||
                       key == "compiler" || key == "schedhost-manifest";
    if (!known) continue;  // a newer SDK's key: ignore it
    if (!seen_keys.insert(std::string(key)).second) {
      Fail(line_no, "'" + std::string(key) + "' appears twice");
    }
    if (key == "abi") {
      const std::string_view v = f.size() == 2 ? f[1] : std::string_view();
      const size_t dot = v.find('.');
      if (f.size() != 2 || dot == std::string_view::npos ||
          !ParseNumber(v.substr(0, dot), m.abi_major) ||
          !ParseNumber(v.substr(dot + 1), m.abi_minor)) {
        Fail(line_no, "expected 'abi <major>.<minor>', got " + Quote(line));
      }
    } else if (key == "min-host-minor") {
      if (f.size() != 2 || !ParseNumber(f[1], m.min_host_minor)) {
        Fail(line_no, "expected 'min-host-minor <number>', got " + Quote(line));
      }
    } else if (key == "sdk") {
      if (f.size() != 2) Fail(line_no, "expected 'sdk <version>', got " + Quote(line));
      m.sdk_version = std::string(f[1]);
    } else if (key == "compiler") {
      if (f.size() < 2) Fail(line_no, "expected 'compiler <description>', got " + Quote(line));
      std::string_view rest = line.substr(static_cast<size_t>(f[1].data() - line.data()));
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
      m.compiler = std::string(rest);
    } else {
      Fail(line_no, "'schedhost-manifest' may only be the first line");
    }
  }
  if (!have_format) throw ManifestError("empty manifest (expected 'schedhost-manifest 1' first)");
  for (const char* required : {"abi", "min-host-minor", "sdk", "compiler"}) {
    if (!seen_keys.contains(std::string_view(required))) {
      throw ManifestError(std::string("missing '") + required + "' line");
    }
  }
  return m;
}

Manifest ParseManifestSection(std::span<const uint8_t> section) {
  const auto nul = std::find(section.begin(), section.end(), uint8_t{0});
  if (nul == section.end()) throw ManifestError("the manifest text is not NUL-terminated");
  if (std::any_of(nul, section.end(), [](uint8_t b) { return b != 0; })) {
    throw ManifestError(
        "the section holds more than one manifest (was SCHEDHOST_PLUGIN_LIBRARY or "
        "SCHEDHOST_C_MANIFEST used twice in one library?)");
  }
  const auto len = static_cast<size_t>(nul - section.begin());
  return ParseManifest(std::string_view(reinterpret_cast<const char*>(section.data()), len));
}

}  // namespace schedhost::loader
