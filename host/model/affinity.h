// Node affinity, pod (anti-)affinity, taints and tolerations as plain data mirroring core/v1.
// Optional blocks are std::optional so "absent" stays distinct from "present but empty", as
// the scheduler treats them differently (e.g. a nil label selector matches nothing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/model/enums.h"
#include "host/model/labels.h"

namespace schedhost::model {

// NodeSelectorTerm is ANDed label requirements plus field requirements (metadata.name only).
struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;

  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

// NodeSelector is a list of ORed terms (requiredDuringSchedulingIgnoredDuringExecution).
struct NodeSelector {
  std::vector<NodeSelectorTerm> node_selector_terms;

  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

// PreferredSchedulingTerm is a weighted (1..100) node selector term.
struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;

  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

// NodeAffinity mirrors core/v1 NodeAffinity.
struct NodeAffinity {
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;

  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

// PodAffinityTerm mirrors core/v1 PodAffinityTerm.
struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
  std::optional<LabelSelector> namespace_selector;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;

  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

// WeightedPodAffinityTerm is a preferred (1..100) pod affinity term.
struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm pod_affinity_term;

  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};

// PodAffinity holds the required and preferred terms of podAffinity or podAntiAffinity.
struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;

  friend bool operator==(const PodAffinity&, const PodAffinity&) = default;
};

// Affinity mirrors core/v1 Affinity.
struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;

  friend bool operator==(const Affinity&, const Affinity&) = default;
};

// Taint mirrors core/v1 Taint (timeAdded is not kept).
struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;

  friend bool operator==(const Taint&, const Taint&) = default;
};

// Toleration mirrors core/v1 Toleration; an empty key with kExists tolerates every taint.
struct Toleration {
  std::string key;
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  TaintEffect effect = TaintEffect::kNone;
  std::optional<int64_t> toleration_seconds;

  friend bool operator==(const Toleration&, const Toleration&) = default;
};

}  // namespace schedhost::model
