// Selector matching over interned views: label selectors and node selector terms, with
// Kubernetes' semantics (NotIn and DoesNotExist match absent keys; Gt/Lt compare integers;
// an empty node selector term matches nothing; a nil label selector matches nothing).
#pragma once

#include <schedhost/plugin.h>

namespace schedhost::framework {

/// LabelSelectorMatches tells whether `labels` satisfy `selector` (nullptr: no match).
bool LabelSelectorMatches(const schedhost_label_selector* selector, schedhost_labels labels);

/// NodeSelectorTermMatches tells whether `node` satisfies every requirement of `term`.
bool NodeSelectorTermMatches(const schedhost_node_selector_term& term, const schedhost_node_view& node);

}  // namespace schedhost::framework
