#include "host/framework/selectors.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "host/model/interner.h"

namespace schedhost::framework {
namespace {

std::optional<schedhost_id> Find(schedhost_labels labels, schedhost_id key) {
  const schedhost_label* begin = labels.items;
  const schedhost_label* end = labels.items + labels.len;
  if (labels.len == 0) return std::nullopt;
  auto it = std::lower_bound(begin, end, key,
                             [](const schedhost_label& l, schedhost_id k) { return l.key < k; });
  if (it == end || it->key != key) return std::nullopt;
  return it->value;
}

bool Contains(const schedhost_requirement& r, schedhost_id v) {
  for (size_t i = 0; i < r.values_len; ++i) {
    if (r.values[i] == v) return true;
  }
  return false;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return out;
}

bool RequirementMatches(const schedhost_requirement& r, std::optional<schedhost_id> value) {
  switch (r.op) {
    case SCHEDHOST_OP_IN: return value && Contains(r, *value);
    case SCHEDHOST_OP_NOT_IN: return !value || !Contains(r, *value);
    case SCHEDHOST_OP_EXISTS: return value.has_value();
    case SCHEDHOST_OP_DOES_NOT_EXIST: return !value.has_value();
    case SCHEDHOST_OP_GT:
    case SCHEDHOST_OP_LT: {
      if (!value || r.values_len != 1) return false;
      const auto& interner = model::Interner::Global();
      auto have = ParseInt(interner.Str(*value));
      auto want = ParseInt(interner.Str(r.values[0]));
      if (!have || !want) return false;
      return r.op == SCHEDHOST_OP_GT ? *have > *want : *have < *want;
    }
    default: return false;
  }
}

}  // namespace

bool LabelSelectorMatches(const schedhost_label_selector* selector, schedhost_labels labels) {
  if (selector == nullptr) return false;
  for (size_t i = 0; i < selector->len; ++i) {
    const auto& r = selector->requirements[i];
    if (r.op == SCHEDHOST_OP_GT || r.op == SCHEDHOST_OP_LT) return false;
    if (!RequirementMatches(r, Find(labels, r.key))) return false;
  }
  return true;
}

bool NodeSelectorTermMatches(const schedhost_node_selector_term& term, const schedhost_node_view& node) {
  if (term.match_expressions_len == 0 && term.match_fields_len == 0) return false;
  for (size_t i = 0; i < term.match_expressions_len; ++i) {
    const auto& r = term.match_expressions[i];
    if (!RequirementMatches(r, Find(node.labels, r.key))) return false;
  }
  for (size_t i = 0; i < term.match_fields_len; ++i) {
    const auto& r = term.match_fields[i];
    if (r.key != SCHEDHOST_ID_FIELD_METADATA_NAME) return false;
    if (r.op != SCHEDHOST_OP_IN && r.op != SCHEDHOST_OP_NOT_IN) return false;
    if (!RequirementMatches(r, node.name_id)) return false;
  }
  return true;
}

}  // namespace schedhost::framework
