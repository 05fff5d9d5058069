// PromoteShadowText: line ranges from toml++'s source regions. A [[profile]] block runs from
// its header to the line before the next header that belongs to something else (another
// profile, a top-level table), less the comments and blank lines just above that header, which
// belong to it.
#include "host/config/promote.h"

#include <algorithm>
#include <vector>

#include "host/config/toml_util.h"

namespace schedhost::config {
namespace {

using internal::Context;
using internal::Fail;

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      if (at < text.size()) out.emplace_back(text.substr(at));
      break;
    }
    out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// HeaderLines adds the first line (1-based) of every table written with a header under `node`
// (itself included) to `out`.
void HeaderLines(const toml::node& node, std::vector<uint32_t>& out) {
  if (const toml::table* t = node.as_table()) {
    if (!t->is_inline() && t->source().begin.line != 0) out.push_back(t->source().begin.line);
    for (const auto& [key, child] : *t) HeaderLines(child, out);
  } else if (const toml::array* a = node.as_array()) {
    for (const toml::node& child : *a) HeaderLines(child, out);
  }
}

// Quote writes `s` as a TOML basic string.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct Block {
  size_t first = 0;  // 0-based, inclusive
  size_t last = 0;   // inclusive
};

// KeyLine returns the 0-based line of `key` in `table`, checking that the line is that key's.
size_t KeyLine(const Context& ctx, const toml::table& table, std::string_view key,
               const std::vector<std::string>& lines, const std::string& where) {
  const toml::node* value = table.get(key);
  const uint32_t line = value->source().begin.line;
  const size_t i = line - 1;
  const std::string_view text = Trim(lines.at(i));
  // TOML puts one key = value of a table per line; a value spanning lines, or a line that does
  // not start with the key (a dotted or quoted key), is left to the operator.
  const bool alone = value->source().end.line == line && text.rfind(key, 0) == 0;
  if (!alone) {
    Fail(ctx, value->source(),
         where + ": `" + std::string(key) +
             "` is not written as one line `" + std::string(key) +
             " = \"...\"`; promote rewrites that line: write it so, or edit the file by hand");
  }
  return i;
}

}  // namespace

std::string PromoteShadowText(std::string_view text, std::string_view source,
                              std::string_view shadow) {
  const Context ctx{std::string(source), {}};
  const toml::table root = internal::ParseToml(ctx, text);
  const HostConfig parsed = ParseConfig(text, source, {});
  const Profile* s = parsed.FindProfile(shadow);
  if (s == nullptr || s->shadow_of.empty()) {
    std::string shadows;
    for (const Profile& p : parsed.profiles) {
      if (!p.shadow_of.empty()) shadows += (shadows.empty() ? "" : ", ") + p.name;
    }
    throw ConfigError(SourceLocation{std::string(source), 0, 0},
                      "no shadow profile named \"" + std::string(shadow) + "\" (shadows: " +
                          (shadows.empty() ? "none" : shadows) + ")");
  }
  const std::string live = s->shadow_of;
  const std::vector<std::string> lines = Lines(text);
  const toml::array& profiles = *root.get("profile")->as_array();
  // Every header of the file, and each profile's own.
  std::vector<uint32_t> all;
  HeaderLines(root, all);
  std::sort(all.begin(), all.end());
  auto block_of = [&](std::string_view name) {
    for (const toml::node& node : profiles) {
      const toml::table& t = *node.as_table();
      const toml::node* n = t.get("name");
      if (n == nullptr || n->value_or(std::string_view()) != name) continue;
      if (t.is_inline()) {
        Fail(ctx, t.source(),
             "profile \"" + std::string(name) +
                 "\" is an inline table; promote rewrites [[profile]] blocks: edit the file by "
                 "hand");
      }
      std::vector<uint32_t> own;
      HeaderLines(t, own);
      Block b;
      b.first = t.source().begin.line - 1;
      b.last = lines.size() - 1;
      for (uint32_t h : all) {
        if (h - 1 > b.first && std::find(own.begin(), own.end(), h) == own.end()) {
          b.last = h - 2;
          break;
        }
      }
      while (b.last > b.first) {
        const std::string_view l = Trim(lines[b.last]);
        if (!l.empty() && l.front() != '#') break;
        --b.last;
      }
      return std::make_pair(b, &t);
    }
    throw ConfigError(SourceLocation{std::string(source), 0, 0},
                      "profile \"" + std::string(name) + "\" is not a [[profile]] of the file");
  };
  const auto [live_block, live_table] = block_of(live);
  const auto [shadow_block, shadow_table] = block_of(shadow);
  const std::string where = "profile \"" + std::string(shadow) + "\"";
  const size_t name_line = KeyLine(ctx, *shadow_table, "name", lines, where);
  const size_t of_line = KeyLine(ctx, *shadow_table, "shadow_of", lines, where);
  std::vector<std::string> promoted;
  for (size_t i = shadow_block.first; i <= shadow_block.last; ++i) {
    if (i == of_line) continue;
    if (i == name_line) {
      const size_t indent = lines[i].find_first_not_of(" \t");
      promoted.push_back(lines[i].substr(0, indent) + "name = " + Quote(live));
      continue;
    }
    promoted.push_back(lines[i]);
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i >= shadow_block.first && i <= shadow_block.last) continue;
    if (i == live_block.first) {
      for (const std::string& l : promoted) out += l + "\n";
    }
    if (i >= live_block.first && i <= live_block.last) continue;
    out += lines[i] + "\n";
  }
  // The result must say what was meant: the live name with the shadow's definition, no shadow.
  const HostConfig check = ParseConfig(out, source, {});
  const Profile* now = check.FindProfile(live);
  if (now == nullptr || !now->shadow_of.empty() || check.FindProfile(shadow) != nullptr) {
    throw ConfigError(SourceLocation{std::string(source), 0, 0},
                      "promote could not rewrite the file's profiles; edit it by hand");
  }
  return out;
}

}  // namespace schedhost::config
