// Internal building blocks of validation.cc and validate_objects.cc: field path helpers, the
// exception that carries the first FieldError out of nested checks, and shared checks for
// metadata, label sets, selectors and resource lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "host/model/affinity.h"
#include "host/model/labels.h"
#include "host/model/meta.h"
#include "host/model/quantity.h"
#include "host/model/validation.h"

namespace schedhost::model::internal {

// ValidationFailure carries a FieldError out of nested checks.
struct ValidationFailure {
  FieldError error;
};

// Fail throws the first problem found.
[[noreturn]] void Fail(const std::string& path, std::string reason);

// Child returns "path.field" (or "field" at the root).
std::string Child(const std::string& path, std::string_view field);
// Index returns "path[i]".
std::string Index(const std::string& path, size_t i);
// Quote renders a value for an error message, escaping quotes and control characters.
std::string Quote(std::string_view s);

// CheckListSize fails when `n` exceeds `max`.
void CheckListSize(const std::string& path, size_t n, size_t max = kMaxListItems);
// CheckSubdomainField, CheckLabelField and CheckQualifiedField fail with "invalid value".
void CheckSubdomainField(const std::string& path, std::string_view value);
void CheckDnsLabelField(const std::string& path, std::string_view value);
void CheckQualifiedField(const std::string& path, std::string_view value);
void CheckLabelValueField(const std::string& path, std::string_view value);

// CheckMeta validates metadata; `namespaced` objects must carry a DNS-label namespace.
void CheckMeta(const ObjectMeta& meta, bool namespaced);
// CheckLabelMap validates keys and values of a string map such as nodeSelector.
void CheckLabelMap(const std::string& path, const StringMap& map);
// CheckLabelSelector validates a metav1.LabelSelector (In/NotIn/Exists/DoesNotExist only).
void CheckLabelSelector(const std::string& path, const LabelSelector& selector);
// CheckNodeSelectorTerm validates node selector requirements and field requirements.
void CheckNodeSelectorTerm(const std::string& path, const NodeSelectorTerm& term);
// CheckResourceList validates resource names and that no quantity is negative.
void CheckResourceList(const std::string& path, const ResourceList& list);

}  // namespace schedhost::model::internal
