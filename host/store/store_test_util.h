// Test helpers for host/store: small object data builders and an error-code matcher.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "host/store/store.h"

namespace schedhost::store::testing {

inline model::PodData PodData(const std::string& name, const std::string& ns = "default") {
  model::PodData d;
  d.metadata.name = name;
  d.metadata.namespace_name = ns;
  model::Container c;
  c.name = "app";
  c.image = "nginx";
  d.spec.containers.push_back(c);
  return d;
}

inline model::NodeData NodeData(const std::string& name) {
  model::NodeData d;
  d.metadata.name = name;
  return d;
}

inline model::PriorityClassData ClassData(const std::string& name, int32_t value,
                                          bool global_default = false) {
  model::PriorityClassData d;
  d.metadata.name = name;
  d.value = value;
  d.global_default = global_default;
  return d;
}

inline model::PodDisruptionBudgetData PdbData(const std::string& name,
                                              const std::string& ns = "default") {
  model::PodDisruptionBudgetData d;
  d.metadata.name = name;
  d.metadata.namespace_name = ns;
  return d;
}

// Store::Limits without the built-in classes, so versions start at 1 for the test's objects.
inline Store::Limits Bare() {
  Store::Limits limits;
  limits.system_priority_classes = false;
  return limits;
}

// ErrorOf runs `fn` and returns the StoreError it threw; fails the test when it did not throw.
template <class Fn>
StoreError ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const StoreError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a StoreError";
  return StoreError(ErrorCode::kInvalid, "<no error>");
}

}  // namespace schedhost::store::testing
