#include "toml_args.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

namespace schedhost::contrib {

// Node is one value of the document, tables keeping their entries in file order (toml++ keeps
// them sorted by key), so messages and the quota order follow the file as plugin_config does.
struct TomlArgs::Node {
  int32_t kind = SCHEDHOST_CONFIG_NONE;
  std::string key;
  std::vector<Node> children;
  std::string string_value;
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string location;  // "path:line:col"
};

namespace {

using Node = TomlArgs::Node;

// A quota file is a handful of lines; the limit keeps a wrong path (a log, a disk image) from
// being read into memory whole.
constexpr std::uintmax_t kMaxFileBytes = 1u << 20;

std::string Location(const std::string& path, const toml::source_region& region) {
  return path + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

[[noreturn]] void Fail(const std::string& where, const std::string& message) {
  throw ArgsError(where + ": " + message);
}

Node Convert(const std::string& path, const toml::node& node, std::string key) {
  Node out;
  out.key = std::move(key);
  out.location = Location(path, node.source());
  switch (node.type()) {
    case toml::node_type::table: {
      out.kind = SCHEDHOST_CONFIG_TABLE;
      std::vector<std::pair<const toml::key*, const toml::node*>> entries;
      for (auto&& [k, v] : *node.as_table()) entries.emplace_back(&k, &v);
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const toml::source_position& pa = a.first->source().begin;
        const toml::source_position& pb = b.first->source().begin;
        return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
      });
      for (const auto& [k, v] : entries)
        out.children.push_back(Convert(path, *v, std::string(k->str())));
      break;
    }
    case toml::node_type::array:
      out.kind = SCHEDHOST_CONFIG_ARRAY;
      for (const toml::node& child : *node.as_array())
        out.children.push_back(Convert(path, child, ""));
      break;
    case toml::node_type::string:
      out.kind = SCHEDHOST_CONFIG_STRING;
      out.string_value = node.as_string()->get();
      break;
    case toml::node_type::integer:
      out.kind = SCHEDHOST_CONFIG_INT;
      out.int_value = node.as_integer()->get();
      break;
    case toml::node_type::floating_point:
      out.kind = SCHEDHOST_CONFIG_FLOAT;
      out.float_value = node.as_floating_point()->get();
      break;
    case toml::node_type::boolean:
      out.kind = SCHEDHOST_CONFIG_BOOL;
      out.bool_value = node.as_boolean()->get();
      break;
    default:
      Fail(out.location, "dates and times have no meaning here; write the value as a string");
  }
  return out;
}

// The config_* entries of the API table, with the signatures and NULL rules of plugin.h.
const Node* N(const schedhost_config* c) noexcept { return reinterpret_cast<const Node*>(c); }
const schedhost_config* C(const Node* n) noexcept {
  return reinterpret_cast<const schedhost_config*>(n);
}
schedhost_str S(const std::string& s) noexcept { return schedhost_str{s.data(), s.size()}; }
bool IsContainer(const Node* n) noexcept {
  return n != nullptr && (n->kind == SCHEDHOST_CONFIG_TABLE || n->kind == SCHEDHOST_CONFIG_ARRAY);
}

int32_t Kind(const schedhost_config* c) noexcept {
  return c == nullptr ? SCHEDHOST_CONFIG_NONE : N(c)->kind;
}

const schedhost_config* Get(const schedhost_config* c, schedhost_str key) noexcept {
  const Node* n = N(c);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_TABLE) return nullptr;
  const std::string_view wanted =
      key.len == 0 ? std::string_view() : std::string_view(key.data, key.len);
  for (const Node& child : n->children) {
    if (child.key == wanted) return C(&child);
  }
  return nullptr;
}

size_t Len(const schedhost_config* c) noexcept {
  const Node* n = N(c);
  return IsContainer(n) ? n->children.size() : 0;
}

const schedhost_config* At(const schedhost_config* c, size_t index, schedhost_str* key) noexcept {
  if (key != nullptr) *key = schedhost_str{"", 0};
  const Node* n = N(c);
  if (!IsContainer(n) || index >= n->children.size()) return nullptr;
  const Node& child = n->children[index];
  if (key != nullptr && n->kind == SCHEDHOST_CONFIG_TABLE) *key = S(child.key);
  return C(&child);
}

int32_t String(const schedhost_config* c, schedhost_str* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const Node* n = N(c);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_STRING) return SCHEDHOST_E_WRONG_TYPE;
  *out = S(n->string_value);
  return SCHEDHOST_OK;
}

int32_t Int(const schedhost_config* c, int64_t* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const Node* n = N(c);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_INT) return SCHEDHOST_E_WRONG_TYPE;
  *out = n->int_value;
  return SCHEDHOST_OK;
}

int32_t Float(const schedhost_config* c, double* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const Node* n = N(c);
  if (n != nullptr && n->kind == SCHEDHOST_CONFIG_FLOAT) {
    *out = n->float_value;
    return SCHEDHOST_OK;
  }
  if (n != nullptr && n->kind == SCHEDHOST_CONFIG_INT) {
    *out = static_cast<double>(n->int_value);
    return SCHEDHOST_OK;
  }
  return SCHEDHOST_E_WRONG_TYPE;
}

int32_t Bool(const schedhost_config* c, int32_t* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const Node* n = N(c);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_BOOL) return SCHEDHOST_E_WRONG_TYPE;
  *out = n->bool_value ? 1 : 0;
  return SCHEDHOST_OK;
}

schedhost_str LocationOf(const schedhost_config* c) noexcept {
  const Node* n = N(c);
  return n == nullptr ? schedhost_str{"", 0} : S(n->location);
}

}  // namespace

TomlArgs::TomlArgs() = default;
TomlArgs::TomlArgs(TomlArgs&&) noexcept = default;
TomlArgs& TomlArgs::operator=(TomlArgs&&) noexcept = default;
TomlArgs::~TomlArgs() = default;

TomlArgs TomlArgs::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Fail(path, "cannot open: " + std::error_code(errno, std::generic_category()).message());
  }
  // One byte past the limit tells a file at the limit from a larger one.
  std::vector<char> buf(kMaxFileBytes + 1);
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (in.bad()) Fail(path, "cannot read");
  const auto n = static_cast<size_t>(in.gcount());
  if (n > kMaxFileBytes) {
    Fail(path, "larger than " + std::to_string(kMaxFileBytes) + " bytes; not a quota file?");
  }
  TomlArgs out;
  try {
    const toml::table root = toml::parse(std::string_view(buf.data(), n), std::string_view(path));
    out.root_ = std::make_unique<Node>(Convert(path, root, ""));
  } catch (const toml::parse_error& e) {
    Fail(Location(path, e.source()), "invalid TOML: " + std::string(e.description()));
  }
  // Only the configuration entries: Args calls nothing else, and a zeroed entry would fail
  // loudly rather than reach the host with a handle that is not the host's.
  out.api_ = std::make_unique<schedhost_host_api>();
  out.api_->struct_size = sizeof(schedhost_host_api);
  out.api_->config_kind = &Kind;
  out.api_->config_get = &Get;
  out.api_->config_len = &Len;
  out.api_->config_at = &At;
  out.api_->config_string = &String;
  out.api_->config_int = &Int;
  out.api_->config_float = &Float;
  out.api_->config_bool = &Bool;
  out.api_->config_location = &LocationOf;
  return out;
}

Args TomlArgs::root() const noexcept { return Args(api_.get(), C(root_.get())); }

}  // namespace schedhost::contrib
