// Labels, annotations and label selectors as plain data. A label set is a vector of
// (key, value) pairs sorted by key with unique keys; selectors mirror metav1.LabelSelector
// (matchLabels plus matchExpressions) and core/v1 node selector requirements.
#pragma once

#include <boost/container/flat_map.hpp>
#include <string>
#include <utility>
#include <vector>

#include "host/model/enums.h"

namespace schedhost::model {

// Labels is a sorted, key-unique list of (key, value) pairs (labels or annotations).
using Labels = std::vector<std::pair<std::string, std::string>>;

// StringMap is a small string-to-string map (a nodeSelector, a selector's matchLabels): a
// sorted vector, one block for all its entries instead of a tree node per entry.
using StringMap = boost::container::flat_map<std::string, std::string, std::less<>>;

// NormalizeLabels sorts `labels` by key and drops earlier duplicates, so the last value wins.
void NormalizeLabels(Labels& labels);

// FindLabel returns the value of `key` in a normalized label set, or nullptr.
const std::string* FindLabel(const Labels& labels, std::string_view key);

// SelectorRequirement is one matchExpressions / matchFields entry: key, operator, values.
struct SelectorRequirement {
  std::string key;
  SelectorOp op = SelectorOp::kIn;
  std::vector<std::string> values;

  friend bool operator==(const SelectorRequirement&, const SelectorRequirement&) = default;
};

// LabelSelector mirrors metav1.LabelSelector; an empty selector matches everything.
struct LabelSelector {
  StringMap match_labels;
  std::vector<SelectorRequirement> match_expressions;

  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

}  // namespace schedhost::model
