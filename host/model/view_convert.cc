#include "host/model/view_convert.h"

#include <algorithm>

#include "host/model/interner.h"

namespace schedhost::model::internal {
namespace {

schedhost_labels SortedLabels(schedhost_label* items, size_t len) {
  std::sort(items, items + len,
            [](const schedhost_label& a, const schedhost_label& b) { return a.key < b.key; });
  return schedhost_labels{items, len};
}

schedhost_requirement ConvertRequirement(const SelectorRequirement& req, ViewArena& arena) {
  schedhost_requirement out{};
  out.key = Interner::Global().Intern(req.key);
  out.op = static_cast<int32_t>(req.op);
  out.values = InternList(req.values, arena);
  out.values_len = req.values.size();
  return out;
}

}  // namespace

schedhost_labels ConvertLabels(const Labels& labels, ViewArena& arena) {
  auto* items = arena.Array<schedhost_label>(labels.size());
  Interner& interner = Interner::Global();
  for (size_t i = 0; i < labels.size(); ++i) {
    items[i] = {interner.Intern(labels[i].first), interner.Intern(labels[i].second)};
  }
  return SortedLabels(items, labels.size());
}

schedhost_labels ConvertLabelMap(const StringMap& map, ViewArena& arena) {
  auto* items = arena.Array<schedhost_label>(map.size());
  Interner& interner = Interner::Global();
  size_t i = 0;
  for (const auto& [key, value] : map) items[i++] = {interner.Intern(key), interner.Intern(value)};
  return SortedLabels(items, map.size());
}

const schedhost_id* InternList(const std::vector<std::string>& strings, ViewArena& arena) {
  auto* ids = arena.Array<schedhost_id>(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) ids[i] = Interner::Global().Intern(strings[i]);
  return ids;
}

const schedhost_requirement* ConvertRequirements(const std::vector<SelectorRequirement>& reqs,
                                                 ViewArena& arena) {
  auto* items = arena.Array<schedhost_requirement>(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) items[i] = ConvertRequirement(reqs[i], arena);
  return items;
}

const schedhost_label_selector* ConvertSelector(const std::optional<LabelSelector>& selector,
                                                ViewArena& arena) {
  if (!selector) return nullptr;
  size_t len = selector->match_labels.size() + selector->match_expressions.size();
  auto* reqs = arena.Array<schedhost_requirement>(len);
  Interner& interner = Interner::Global();
  size_t i = 0;
  for (const auto& [key, value] : selector->match_labels) {
    auto* value_id = arena.One<schedhost_id>();
    *value_id = interner.Intern(value);
    reqs[i++] = schedhost_requirement{interner.Intern(key), SCHEDHOST_OP_IN, value_id, 1};
  }
  for (const SelectorRequirement& req : selector->match_expressions) {
    reqs[i++] = ConvertRequirement(req, arena);
  }
  auto* out = arena.One<schedhost_label_selector>();
  *out = schedhost_label_selector{reqs, len};
  return out;
}

schedhost_node_selector_term ConvertNodeSelectorTerm(const NodeSelectorTerm& term,
                                                     ViewArena& arena) {
  schedhost_node_selector_term out{};
  out.match_expressions = ConvertRequirements(term.match_expressions, arena);
  out.match_expressions_len = term.match_expressions.size();
  out.match_fields = ConvertRequirements(term.match_fields, arena);
  out.match_fields_len = term.match_fields.size();
  return out;
}

std::vector<schedhost_resource> ToResources(const ResourceList& list) {
  std::vector<schedhost_resource> out;
  out.reserve(list.size());
  for (const auto& [name, quantity] : list) {
    schedhost_resource r{};
    r.name = Interner::Global().Intern(name);
    r.value = ResourceValue(name, quantity);
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const schedhost_resource& a, const schedhost_resource& b) {
    return a.name < b.name;
  });
  return out;
}

}  // namespace schedhost::model::internal
