// The `get` tables per kind, in kubectl's columns where the host keeps the data:
//   pods             NAME STATUS NODE NOMINATED NODE AGE      (wide: + PRIORITY SCHEDULER)
//   nodes            NAME STATUS AGE                          (wide: + CPU MEMORY PODS TAINTS)
//   pdbs             NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE
//   priorityclasses  NAME VALUE GLOBAL-DEFAULT AGE            (wide: + PREEMPTIONPOLICY)
//   namespaces       NAME STATUS AGE
// with a leading NAMESPACE column for namespaced kinds under -A.
#pragma once

#include <string>
#include <vector>

#include "host/cli/printers.h"
#include "host/cli/resources.h"

namespace schedhost::cli {

// PodStatus is a pod's STATUS: "Scheduled" once spec.nodeName is set (schedhost runs no
// kubelet, so it never knows Running), "SchedulingGated" while a scheduling gate holds it
// (kubectl's word), else "Pending".
std::string PodStatus(const Json& pod);

// NodeStatus is a node's STATUS as kubectl prints it: "Ready" (or "NotReady" when a Ready
// condition says otherwise; a node without conditions counts as ready, as the host schedules
// onto it), with ",SchedulingDisabled" when cordoned.
std::string NodeStatus(const Json& node);

// MakeTable builds the table of `items` (manifests of kind `r`).
Table MakeTable(const Resource& r, const std::vector<Json>& items, bool wide, bool with_namespace);

}  // namespace schedhost::cli
