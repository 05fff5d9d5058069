#include "host/queue/object_compare.h"

#include <map>
#include <optional>
#include <string>

namespace schedhost::queue::internal {
namespace {

// Every overload is declared before the templates so that the templates' unqualified calls find
// them (the model types live in another namespace, so argument-dependent lookup would not).
bool Same(const model::OwnerReference& a, const model::OwnerReference& b);
bool Same(const model::SelectorRequirement& a, const model::SelectorRequirement& b);
bool Same(const model::LabelSelector& a, const model::LabelSelector& b);
bool Same(const model::NodeSelectorTerm& a, const model::NodeSelectorTerm& b);
bool Same(const model::NodeSelector& a, const model::NodeSelector& b);
bool Same(const model::PreferredSchedulingTerm& a, const model::PreferredSchedulingTerm& b);
bool Same(const model::NodeAffinity& a, const model::NodeAffinity& b);
bool Same(const model::PodAffinityTerm& a, const model::PodAffinityTerm& b);
bool Same(const model::WeightedPodAffinityTerm& a, const model::WeightedPodAffinityTerm& b);
bool Same(const model::PodAffinity& a, const model::PodAffinity& b);
bool Same(const model::Affinity& a, const model::Affinity& b);
bool Same(const model::Toleration& a, const model::Toleration& b);
bool Same(const model::Taint& a, const model::Taint& b);
bool Same(const model::TopologySpreadConstraint& a, const model::TopologySpreadConstraint& b);
bool Same(const model::ContainerPort& a, const model::ContainerPort& b);
bool Same(const model::ResourceRequirements& a, const model::ResourceRequirements& b);
bool Same(const model::Container& a, const model::Container& b);

// Scalars, strings, enums, label lists, string maps and ResourceLists have operator==.
template <typename T>
bool Same(const T& a, const T& b) {
  return a == b;
}

template <typename T>
bool Same(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || Same(*a, *b);
}

template <typename T>
bool Same(const model::Box<T>& a, const model::Box<T>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || Same(*a, *b);
}

template <typename T>
bool Same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Same(a[i], b[i])) return false;
  }
  return true;
}

bool Same(const model::OwnerReference& a, const model::OwnerReference& b) {
  const auto& [a1, a2, a3, a4, a5] = a;
  const auto& [b1, b2, b3, b4, b5] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5);
}

bool Same(const model::SelectorRequirement& a, const model::SelectorRequirement& b) {
  const auto& [a1, a2, a3] = a;
  const auto& [b1, b2, b3] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3);
}

bool Same(const model::LabelSelector& a, const model::LabelSelector& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::NodeSelectorTerm& a, const model::NodeSelectorTerm& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::NodeSelector& a, const model::NodeSelector& b) {
  const auto& [a1] = a;
  const auto& [b1] = b;
  return Same(a1, b1);
}

bool Same(const model::PreferredSchedulingTerm& a, const model::PreferredSchedulingTerm& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::NodeAffinity& a, const model::NodeAffinity& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::PodAffinityTerm& a, const model::PodAffinityTerm& b) {
  const auto& [a1, a2, a3, a4, a5, a6] = a;
  const auto& [b1, b2, b3, b4, b5, b6] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5) &&
         Same(a6, b6);
}

bool Same(const model::WeightedPodAffinityTerm& a, const model::WeightedPodAffinityTerm& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::PodAffinity& a, const model::PodAffinity& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::Affinity& a, const model::Affinity& b) {
  const auto& [a1, a2, a3] = a;
  const auto& [b1, b2, b3] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3);
}

bool Same(const model::Toleration& a, const model::Toleration& b) {
  const auto& [a1, a2, a3, a4, a5] = a;
  const auto& [b1, b2, b3, b4, b5] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5);
}

bool Same(const model::Taint& a, const model::Taint& b) {
  const auto& [a1, a2, a3] = a;
  const auto& [b1, b2, b3] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3);
}

bool Same(const model::TopologySpreadConstraint& a, const model::TopologySpreadConstraint& b) {
  const auto& [a1, a2, a3, a4, a5, a6, a7, a8] = a;
  const auto& [b1, b2, b3, b4, b5, b6, b7, b8] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5) &&
         Same(a6, b6) && Same(a7, b7) && Same(a8, b8);
}

bool Same(const model::ContainerPort& a, const model::ContainerPort& b) {
  const auto& [a1, a2, a3, a4, a5] = a;
  const auto& [b1, b2, b3, b4, b5] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5);
}

bool Same(const model::ResourceRequirements& a, const model::ResourceRequirements& b) {
  const auto& [a1, a2] = a;
  const auto& [b1, b2] = b;
  return Same(a1, b1) && Same(a2, b2);
}

bool Same(const model::Container& a, const model::Container& b) {
  const auto& [a1, a2, a3, a4, a5] = a;
  const auto& [b1, b2, b3, b4, b5] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5);
}

}  // namespace

bool SameMetaExceptVersion(const model::ObjectMeta& a, const model::ObjectMeta& b) {
  const auto& [name_a, ns_a, uid_a, labels_a, annotations_a, owners_a, created_a, rv_a] = a;
  const auto& [name_b, ns_b, uid_b, labels_b, annotations_b, owners_b, created_b, rv_b] = b;
  (void)rv_a;
  (void)rv_b;
  return Same(name_a, name_b) && Same(ns_a, ns_b) && Same(uid_a, uid_b) &&
         Same(labels_a, labels_b) && Same(annotations_a, annotations_b) &&
         Same(owners_a, owners_b) && Same(created_a, created_b);
}

bool SamePodSpec(const model::PodSpec& a, const model::PodSpec& b) {
  const auto& [a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13] = a;
  const auto& [b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13] = b;
  return Same(a1, b1) && Same(a2, b2) && Same(a3, b3) && Same(a4, b4) && Same(a5, b5) &&
         Same(a6, b6) && Same(a7, b7) && Same(a8, b8) && Same(a9, b9) && Same(a10, b10) &&
         Same(a11, b11) && Same(a12, b12) && Same(a13, b13);
}

bool SameTolerations(const std::vector<model::Toleration>& a,
                     const std::vector<model::Toleration>& b) {
  return Same(a, b);
}

bool SameTaints(const std::vector<model::Taint>& a, const std::vector<model::Taint>& b) {
  return Same(a, b);
}

bool SameConditions(const std::vector<model::NodeCondition>& a,
                    const std::vector<model::NodeCondition>& b) {
  auto as_map = [](const std::vector<model::NodeCondition>& conditions) {
    std::map<std::string, std::string> m;
    for (const auto& c : conditions) {
      const auto& [type, status] = c;
      m[type] = status;
    }
    return m;
  };
  return as_map(a) == as_map(b);
}

}  // namespace schedhost::queue::internal
