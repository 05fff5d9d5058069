#include "host/model/priority_class.h"

#include <utility>

namespace schedhost::model {
namespace {

constexpr uint64_t kPriorityClassViewMagic = 0x7363687063303031ULL;  // "schpc001"

}  // namespace

std::shared_ptr<const PriorityClass> PriorityClass::Make(PriorityClassData data) {
  return std::shared_ptr<const PriorityClass>(new PriorityClass(std::move(data)));
}

PriorityClass::PriorityClass(PriorityClassData data) : data_(std::move(data)) {
  data_.metadata.namespace_name.clear();
  DefaultMeta(data_.metadata);
  holder_.magic = kPriorityClassViewMagic;
  holder_.owner = this;
  schedhost_priority_class_view& v = holder_.view;
  v.struct_size = sizeof(schedhost_priority_class_view);
  v.name = internal::ToStr(data_.metadata.name);
  v.value = data_.value;
  v.global_default = data_.global_default ? 1 : 0;
  v.preemption_policy = static_cast<int32_t>(
      data_.preemption_policy.value_or(PreemptionPolicy::kPreemptLowerPriority));
}

const PriorityClass* PriorityClass::FromView(const schedhost_priority_class_view* v) {
  return internal::OwnerFromView<PriorityClass>(v, kPriorityClassViewMagic);
}

}  // namespace schedhost::model
