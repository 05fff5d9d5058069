#include "host/queue/object_compare.h"

#include <map>
#include <string>

namespace schedhost::queue::internal {

bool SameMetaExceptVersion(const model::ObjectMeta& a, const model::ObjectMeta& b) {
  // The structured binding names every field, so a field added to ObjectMeta fails to compile
  // here until it is decided whether it counts.
  const auto& [name_a, ns_a, uid_a, labels_a, annotations_a, owners_a, created_a, rv_a] = a;
  const auto& [name_b, ns_b, uid_b, labels_b, annotations_b, owners_b, created_b, rv_b] = b;
  (void)rv_a;
  (void)rv_b;
  return name_a == name_b && ns_a == ns_b && uid_a == uid_b && labels_a == labels_b &&
         annotations_a == annotations_b && owners_a == owners_b && created_a == created_b;
}

bool SamePodSpec(const model::PodSpec& a, const model::PodSpec& b) { return a == b; }

bool SameTolerations(const std::vector<model::Toleration>& a,
                     const std::vector<model::Toleration>& b) {
  return a == b;
}

bool SameTaints(const std::vector<model::Taint>& a, const std::vector<model::Taint>& b) {
  return a == b;
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
