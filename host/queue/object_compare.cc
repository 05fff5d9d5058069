#include "host/queue/object_compare.h"

#include <map>
#include <string>

namespace schedhost::queue::internal {

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
