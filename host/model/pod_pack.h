// A compact, lossless byte encoding of what a made Pod's view leaves out: its spec and status,
// and its owner references' apiVersions. A made Pod keeps these only in this form (a pending
// pod's fields are mostly empty containers, and the bytes are a fifth of the decoded structs'
// size) and decodes them when someone asks for data(). The encoding is private to one process:
// it is never written out, so it has no version.
//
//   std::string bytes = internal::PackPodState(spec, status, meta.owner_references);
//   PodSpec spec2;
//   PodStatus status2;
//   std::vector<OwnerReference> owners2;  // gets the apiVersions, the rest left default
//   internal::UnpackPodState(bytes, spec2, status2, owners2);  // spec2 == spec, ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "host/model/pod.h"

namespace schedhost::model::internal {

// PackPodState encodes the owners' apiVersions, then every field of `spec` and `status`
// (varint lengths and integers, raw string bytes, a byte for each optional's presence).
std::string PackPodState(const PodSpec& spec, const PodStatus& status,
                         const std::vector<OwnerReference>& owners);

// UnpackPodState decodes what PackPodState wrote into `spec` and `status` (overwriting them),
// and resizes `owners` to the packed count, setting each one's api_version (nothing else).
// Bytes it did not write are a bug, not input: they throw std::logic_error.
void UnpackPodState(std::string_view bytes, PodSpec& spec, PodStatus& status,
                    std::vector<OwnerReference>& owners);

// PackedOwnerPart returns the leading bytes of `bytes` that hold the owners' apiVersions: two
// pods' parts are equal exactly when their owners' apiVersions are.
std::string_view PackedOwnerPart(std::string_view bytes);

}  // namespace schedhost::model::internal
