// Internal conversions from the plain-data model to ABI view arrays: interning label sets
// (sorted by key id), selectors, node selector terms and resource lists (cpu in millicores).
// Every returned pointer lives in the given arena; strings point into the caller's data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "host/model/affinity.h"
#include "host/model/labels.h"
#include "host/model/quantity.h"
#include "host/model/view_arena.h"
#include "schedhost/plugin.h"

namespace schedhost::model::internal {

// ConvertLabels interns a label set into pairs sorted by key id.
schedhost_labels ConvertLabels(const Labels& labels, ViewArena& arena);
// ConvertLabelMap interns a string map (e.g. nodeSelector) into pairs sorted by key id.
schedhost_labels ConvertLabelMap(const StringMap& map, ViewArena& arena);
// InternList interns each string, keeping order; nullptr for an empty list.
const schedhost_id* InternList(const std::vector<std::string>& strings, ViewArena& arena);
// ConvertRequirements interns requirements in order; nullptr for an empty list.
const schedhost_requirement* ConvertRequirements(const std::vector<SelectorRequirement>& reqs,
                                                 ViewArena& arena);
// ConvertSelector turns matchLabels into In requirements followed by matchExpressions;
// nullptr when the selector is absent.
const schedhost_label_selector* ConvertSelector(const std::optional<LabelSelector>& selector,
                                                ViewArena& arena);
// ConvertNodeSelectorTerm converts one node selector term.
schedhost_node_selector_term ConvertNodeSelectorTerm(const NodeSelectorTerm& term,
                                                     ViewArena& arena);
// ToResources converts a resource list into entries sorted by name id (cpu in millicores).
std::vector<schedhost_resource> ToResources(const ResourceList& list);

}  // namespace schedhost::model::internal
