#include "host/config/toml_util.h"

#include <algorithm>

#include "host/config/suggest.h"

namespace schedhost::config::internal {

SourceLocation At(const Context& ctx, const toml::source_region& region) {
  return SourceLocation{ctx.source, static_cast<int>(region.begin.line),
                        static_cast<int>(region.begin.column)};
}

void Fail(const Context& ctx, const toml::source_region& region, const std::string& message) {
  throw ConfigError(At(ctx, region), message);
}

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::vector<Entry> InFileOrder(const toml::table& table) {
  std::vector<Entry> entries;
  for (auto&& [key, value] : table) entries.emplace_back(&key, &value);
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const toml::source_position& pa = a.first->source().begin;
    const toml::source_position& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return entries;
}

void CheckKeys(const Context& ctx, const toml::table& table, const std::vector<std::string>& known,
               std::string_view where) {
  for (const auto& [key, value] : InFileOrder(table)) {
    const std::string name(key->str());
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string message = "unknown key \"" + name + "\" in " + std::string(where);
    std::optional<std::string> match = ClosestMatch(name, known);
    if (match) {
      message += "; did you mean \"" + *match + "\"?";
    } else {
      message += "; known keys are: " + JoinNames(known);
    }
    Fail(ctx, key->source(), message);
  }
}

const toml::table& ExpectTable(const Context& ctx, const toml::node& node, std::string_view path) {
  if (const toml::table* table = node.as_table()) return *table;
  Fail(ctx, node.source(), std::string(path) + " must be a table, not " + TypeName(node));
}

const toml::array& ExpectArray(const Context& ctx, const toml::node& node, std::string_view path) {
  if (const toml::array* array = node.as_array()) return *array;
  Fail(ctx, node.source(), std::string(path) + " must be an array, not " + TypeName(node));
}

std::optional<std::string> GetString(const Context& ctx, const toml::table& table,
                                     std::string_view key, std::string_view path) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  if (const toml::value<std::string>* s = node->as_string()) return s->get();
  Fail(ctx, node->source(), std::string(path) + " must be a string, not " + TypeName(*node));
}

std::optional<bool> GetBool(const Context& ctx, const toml::table& table, std::string_view key,
                            std::string_view path) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  if (const toml::value<bool>* b = node->as_boolean()) return b->get();
  Fail(ctx, node->source(), std::string(path) + " must be true or false, not " + TypeName(*node));
}

std::optional<int64_t> GetInt(const Context& ctx, const toml::table& table, std::string_view key,
                              std::string_view path, int64_t min, int64_t max) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  const toml::value<int64_t>* i = node->as_integer();
  if (i == nullptr) {
    Fail(ctx, node->source(), std::string(path) + " must be an integer, not " + TypeName(*node));
  }
  int64_t v = i->get();
  if (v < min || v > max) {
    Fail(ctx, node->source(),
         std::string(path) + " must be between " + std::to_string(min) + " and " +
             std::to_string(max) + ", not " + std::to_string(v));
  }
  return v;
}

ConfigNode ToConfigNode(const Context& ctx, const toml::node& node, std::string key) {
  ConfigNode out;
  out.key = std::move(key);
  out.location = At(ctx, node.source()).ToString();
  switch (node.type()) {
    case toml::node_type::table:
      out.kind = SCHEDHOST_CONFIG_TABLE;
      for (const auto& [child_key, child] : InFileOrder(*node.as_table())) {
        out.children.push_back(ToConfigNode(ctx, *child, std::string(child_key->str())));
        out.children.back().key_location = At(ctx, child_key->source()).ToString();
      }
      break;
    case toml::node_type::array:
      out.kind = SCHEDHOST_CONFIG_ARRAY;
      for (const toml::node& child : *node.as_array()) {
        out.children.push_back(ToConfigNode(ctx, child, ""));
      }
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
      Fail(ctx, node.source(),
           "plugin arguments cannot hold " + TypeName(node) + "; write it as a string");
  }
  return out;
}

toml::table ParseToml(const Context& ctx, std::string_view text) {
  try {
    return toml::parse(text, std::string_view(ctx.source));
  } catch (const toml::parse_error& e) {
    Fail(ctx, e.source(), "invalid TOML: " + std::string(e.description()));
  }
}

}  // namespace schedhost::config::internal

namespace schedhost::config {

std::shared_ptr<const ConfigNode> ParsePluginArgs(std::string_view toml_text,
                                                  std::string_view source_name) {
  internal::Context ctx{std::string(source_name), {}};
  toml::table root = internal::ParseToml(ctx, toml_text);
  return std::make_shared<const ConfigNode>(internal::ToConfigNode(ctx, root, ""));
}

}  // namespace schedhost::config
