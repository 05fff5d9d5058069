// Decoding objects an API server sent (Kubernetes mode): one JSON object, already parsed, of a
// kind the caller asked for. The API server validated it already, so this is lenient where
// manifests are strict: fields the model does not know are ignored, the kind and apiVersion may
// be absent (list items), metadata.resourceVersion is left to the caller (it is opaque) and
// metadata.managedFields is never looked at. What the model cannot represent still throws
// DecodeError naming the object and the field, so the caller can log it and skip the object.
//
//   model::ApiObject data = model::DecodeApiObject(json, model::ApiKind::kPod);
//   store.MirrorApply(std::get<model::PodData>(std::move(data)));
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string_view>
#include <variant>

#include "host/model/decode.h"

namespace schedhost::model {

// ApiKind is a kind the API decoder reads.
enum class ApiKind { kPod, kNode, kPodDisruptionBudget, kPriorityClass, kNamespace };

// ApiObject is one decoded object's data, defaults applied, validated.
using ApiObject = std::variant<PodData, NodeData, PodDisruptionBudgetData, PriorityClassData,
                               NamespaceData>;

// DecodeApiObject decodes `object` as `kind`; throws DecodeError (source "api").
ApiObject DecodeApiObject(const nlohmann::json& object, ApiKind kind);

// ValueTreeFromJson converts an API object of a declared kind into a value tree whose nodes'
// locations are `object` ("<Kind> <namespace/name>"), as ValueTreeFromJson of its text does.
ValueNode ValueTreeFromJson(const nlohmann::json& json, std::string_view object);

}  // namespace schedhost::model
