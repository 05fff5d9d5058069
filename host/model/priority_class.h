// PriorityClasses (scheduling.k8s.io/v1): PriorityClassData mirrors the object; PriorityClass
// is the immutable made object with a ready schedhost_priority_class_view. Cluster-scoped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "host/model/enums.h"
#include "host/model/meta.h"
#include "host/model/view_arena.h"
#include "schedhost/plugin.h"

namespace schedhost::model {

// The highest value a PriorityClass not named "system-..." may have.
inline constexpr int32_t kHighestUserDefinablePriority = 1'000'000'000;
// The built-in system classes and their fixed values.
inline constexpr std::string_view kSystemClusterCritical = "system-cluster-critical";
inline constexpr int32_t kSystemClusterCriticalPriority = 2'000'000'000;
inline constexpr std::string_view kSystemNodeCritical = "system-node-critical";
inline constexpr int32_t kSystemNodeCriticalPriority = 2'000'001'000;

// PriorityClassData mirrors scheduling.k8s.io/v1 PriorityClass.
struct PriorityClassData {
  ObjectMeta metadata;
  int32_t value = 0;
  bool global_default = false;
  std::optional<PreemptionPolicy> preemption_policy;  // Unset means PreemptLowerPriority.
  std::string description;
};

// PriorityClass is an immutable PriorityClass shared as shared_ptr<const PriorityClass>.
class PriorityClass {
 public:
  // Make normalizes the metadata (uid, labels) and builds the view.
  static std::shared_ptr<const PriorityClass> Make(PriorityClassData data);

  PriorityClass(const PriorityClass&) = delete;
  PriorityClass& operator=(const PriorityClass&) = delete;

  // data returns the plain data.
  const PriorityClassData& data() const { return data_; }
  // metadata returns data().metadata (every made object has it, as Pod does).
  const ObjectMeta& metadata() const { return data_.metadata; }
  // view returns the ABI view with struct_size == sizeof(schedhost_priority_class_view).
  const schedhost_priority_class_view* view() const { return &holder_.view; }
  // FromView returns the class whose view() is `v`; nullptr for null (and, via a tag
  // stored beside the view, for most views it did not make: pass only views the host made).
  static const PriorityClass* FromView(const schedhost_priority_class_view* v);

  // name returns metadata.name.
  const std::string& name() const { return data_.metadata.name; }
  // namespace_name returns metadata.namespace ("": the kind is cluster-scoped).
  const std::string& namespace_name() const { return data_.metadata.namespace_name; }
  // uid returns metadata.uid.
  const std::string& uid() const { return data_.metadata.uid; }
  // resource_version returns metadata.resourceVersion (0 when unknown).
  uint64_t resource_version() const { return data_.metadata.resource_version; }
  // creation_timestamp_ns returns metadata.creationTimestamp in Unix ns (0 when unknown).
  int64_t creation_timestamp_ns() const { return data_.metadata.creation_timestamp_ns; }
  // value returns the priority value pods of this class get.
  int32_t value() const { return data_.value; }

 private:
  explicit PriorityClass(PriorityClassData data);

  PriorityClassData data_;
  internal::ViewHolder<schedhost_priority_class_view, PriorityClass> holder_{};
};

}  // namespace schedhost::model
