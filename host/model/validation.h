// Validation of decoded objects: what the API server would reject and the scheduler relies on
// (names, label syntax, enum combinations, ranges, selector shapes) plus explicit size limits.
// Each Validate* returns the first problem as a JSON-style field path and a reason, so callers
// can report "spec.containers[0].ports[0].containerPort: must be between 1 and 65535, got 0".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "host/model/namespace.h"
#include "host/model/node.h"
#include "host/model/pdb.h"
#include "host/model/pod.h"
#include "host/model/priority_class.h"

namespace schedhost::model {

// FieldError names the offending field (e.g. "spec.tolerations[1].operator") and why.
struct FieldError {
  std::string path;
  std::string reason;
};

// Limits every validated object must respect.
inline constexpr size_t kMaxLabels = 65536;                // per label set or node selector
inline constexpr size_t kMaxAnnotationBytes = size_t{256} * 1024;// keys plus values, as upstream
inline constexpr size_t kMaxContainers = 1024;             // containers plus init containers
inline constexpr size_t kMaxListItems = 65536;             // any other list in an object

// CheckDnsSubdomain returns why `s` is not an RFC 1123 subdomain (<= 253 chars), or nullopt.
std::optional<std::string> CheckDnsSubdomain(std::string_view s);
// CheckDnsLabel returns why `s` is not an RFC 1123 label (<= 63 chars), or nullopt.
std::optional<std::string> CheckDnsLabel(std::string_view s);
// CheckQualifiedName returns why `s` is not a qualified name ("[prefix/]name"), or nullopt.
std::optional<std::string> CheckQualifiedName(std::string_view s);
// CheckLabelValue returns why `s` is not a valid label value (may be empty), or nullopt.
std::optional<std::string> CheckLabelValue(std::string_view s);

// ValidatePod checks a defaulted pod (see ApplyPodDefaults); nullopt when it is valid.
std::optional<FieldError> ValidatePod(const PodData& pod);
// ValidateNode checks a node; nullopt when it is valid.
std::optional<FieldError> ValidateNode(const NodeData& node);
// ValidatePdb checks a defaulted PodDisruptionBudget; nullopt when it is valid.
std::optional<FieldError> ValidatePdb(const PodDisruptionBudgetData& pdb);
// ValidatePriorityClass checks a PriorityClass, including the reserved "system-" names.
std::optional<FieldError> ValidatePriorityClass(const PriorityClassData& pc);
// ValidateNamespace checks a Namespace: its name must be an RFC 1123 label, as upstream.
std::optional<FieldError> ValidateNamespace(const NamespaceData& ns);

}  // namespace schedhost::model
