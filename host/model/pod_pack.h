// A compact, lossless byte encoding of a pod's spec and status. A made Pod keeps its spec and
// status only in this form (a pending pod's fields are mostly empty containers, and the bytes
// are a fifth of the decoded structs' size) and decodes them when someone asks for data().
// The encoding is private to one process: it is never written out, so it has no version.
//
//   std::string bytes = internal::PackPodState(spec, status);
//   PodSpec spec2;
//   PodStatus status2;
//   internal::UnpackPodState(bytes, spec2, status2);  // spec2 == spec, status2 == status
#pragma once

#include <string>
#include <string_view>

#include "host/model/pod.h"

namespace schedhost::model::internal {

// PackPodState encodes every field of `spec` and `status` (varint lengths and integers, raw
// string bytes, a byte for each optional's presence).
std::string PackPodState(const PodSpec& spec, const PodStatus& status);

// UnpackPodState decodes what PackPodState wrote into `spec` and `status` (overwriting them).
// Bytes it did not write are a bug, not input: they throw std::logic_error.
void UnpackPodState(std::string_view bytes, PodSpec& spec, PodStatus& status);

}  // namespace schedhost::model::internal
