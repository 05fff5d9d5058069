// In-process test plugins for the end-to-end tests, written against the raw C ABI so that they
// exercise the host functions a real plugin library would call.
//
// Gang (Permit): pods whose name starts with "g" are gang members; it holds them until `quorum` of them wait, then allows them all through
// waiting_pods_iterate / waiting_pod_allow; each waits at most `timeout_ms`. A pod whose name
// starts with "abort" rejects every waiting pod (waiting_pod_reject) and itself. It registers
// for pod additions only, so its rejected pods wait for a new pod.
#pragma once

#include <schedhost/plugin.h>

namespace schedhost::integration {

/// GangDescriptor returns the Gang plugin's descriptor (static).
const schedhost_plugin_descriptor* GangDescriptor();

}  // namespace schedhost::integration
