// Encoding model objects back into Kubernetes JSON: the inverse of the model decoder, so a
// manifest the host returns decodes to the same object (field names and shapes as core/v1,
// policy/v1 and scheduling.k8s.io/v1; empty fields left out as the API server's JSON does).
//
//   std::string json = api::EncodeJson(store.Get<model::Pod>("default", "web"));
#pragma once

#include <string>

#include "host/model/decode.h"

namespace schedhost::api {

// EncodeJson renders `object` as one compact Kubernetes JSON manifest (apiVersion, kind,
// metadata, spec, status), keys in the order kubectl prints them.
std::string EncodeJson(const model::Object& object);

// EncodeJsonWithoutIdentity renders `object` like EncodeJson without uid, resourceVersion and
// creationTimestamp, so two versions compare equal when their content is (Apply's UNCHANGED).
std::string EncodeJsonWithoutIdentity(const model::Object& object);

}  // namespace schedhost::api
