// PodDisruptionBudgets (policy/v1): PodDisruptionBudgetData mirrors the fields preemption uses;
// PodDisruptionBudget is the immutable made object with a ready schedhost_pdb_view.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "host/model/labels.h"
#include "host/model/meta.h"
#include "host/model/view_arena.h"
#include "schedhost/plugin.h"

namespace schedhost::model {

// IntOrString mirrors intstr.IntOrString: an integer, or a string such as "50%".
struct IntOrString {
  bool is_string = false;
  int32_t int_value = 0;
  std::string string_value;

  // ToString renders the integer or returns the string.
  std::string ToString() const { return is_string ? string_value : std::to_string(int_value); }
};

// PodDisruptionBudgetSpec mirrors policy/v1 PodDisruptionBudgetSpec.
struct PodDisruptionBudgetSpec {
  std::optional<LabelSelector> selector;  // Absent: selects no pod.
  std::optional<IntOrString> min_available;
  std::optional<IntOrString> max_unavailable;
};

// PodDisruptionBudgetStatus mirrors the part of the status preemption reads.
struct PodDisruptionBudgetStatus {
  int32_t disruptions_allowed = 0;
  // has_disruptions_allowed tells whether the object carried status.disruptionsAllowed. Without
  // a disruption controller, preemption computes the value from the spec when it is absent.
  bool has_disruptions_allowed = false;
};

// PodDisruptionBudgetData is a whole PDB as plain data.
struct PodDisruptionBudgetData {
  ObjectMeta metadata;  // namespace defaults to "default".
  PodDisruptionBudgetSpec spec;
  PodDisruptionBudgetStatus status;
};

// ApplyPdbDefaults sets namespace "default" when empty, normalizes labels and fills the uid.
void ApplyPdbDefaults(PodDisruptionBudgetData& pdb);

// PodDisruptionBudget is an immutable PDB shared as shared_ptr<const PodDisruptionBudget>.
class PodDisruptionBudget {
 public:
  // Make applies the defaults and builds the view.
  static std::shared_ptr<const PodDisruptionBudget> Make(PodDisruptionBudgetData data);

  PodDisruptionBudget(const PodDisruptionBudget&) = delete;
  PodDisruptionBudget& operator=(const PodDisruptionBudget&) = delete;

  // data returns the (defaulted) plain data.
  const PodDisruptionBudgetData& data() const { return data_; }
  // metadata returns data().metadata (every made object has it, as Pod does).
  const ObjectMeta& metadata() const { return data_.metadata; }
  // view returns the ABI view with struct_size == sizeof(schedhost_pdb_view).
  const schedhost_pdb_view* view() const { return &holder_.view; }
  // FromView returns the PDB whose view() is `v`; nullptr for null (and, via a tag
  // stored beside the view, for most views it did not make: pass only views the host made).
  static const PodDisruptionBudget* FromView(const schedhost_pdb_view* v);

  // name returns metadata.name.
  const std::string& name() const { return data_.metadata.name; }
  // uid returns metadata.uid.
  const std::string& uid() const { return data_.metadata.uid; }
  // resource_version returns metadata.resourceVersion (0 when unknown).
  uint64_t resource_version() const { return data_.metadata.resource_version; }
  // creation_timestamp_ns returns metadata.creationTimestamp in Unix ns (0 when unknown).
  int64_t creation_timestamp_ns() const { return data_.metadata.creation_timestamp_ns; }
  // namespace_name returns metadata.namespace.
  const std::string& namespace_name() const { return data_.metadata.namespace_name; }

 private:
  explicit PodDisruptionBudget(PodDisruptionBudgetData data);

  PodDisruptionBudgetData data_;
  internal::InlineViewArena arena_;
  internal::ViewHolder<schedhost_pdb_view, PodDisruptionBudget> holder_{};
};

}  // namespace schedhost::model
