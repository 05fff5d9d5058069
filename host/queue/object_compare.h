// Equality of model objects, for deciding what an update changed: the model's structs compare
// field by field (defaulted operator==; quantities by amount), node conditions as a type ->
// status map. A pod's metadata compares from its view (Pod::SameMetadataExceptVersion).
#pragma once

#include <vector>

#include "host/model/node.h"
#include "host/model/pod.h"

namespace schedhost::queue::internal {

/// SamePodSpec compares two PodSpecs field by field.
bool SamePodSpec(const model::PodSpec& a, const model::PodSpec& b);
/// SameTolerations compares two toleration lists in order.
bool SameTolerations(const std::vector<model::Toleration>& a,
                     const std::vector<model::Toleration>& b);
/// SameTaints compares two taint lists in order.
bool SameTaints(const std::vector<model::Taint>& a, const std::vector<model::Taint>& b);
/// SameConditions compares two node condition lists as type -> status maps (order ignored).
bool SameConditions(const std::vector<model::NodeCondition>& a,
                    const std::vector<model::NodeCondition>& b);

}  // namespace schedhost::queue::internal
