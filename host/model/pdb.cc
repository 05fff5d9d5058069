#include "host/model/pdb.h"

#include <utility>

#include "host/model/interner.h"
#include "host/model/view_convert.h"

namespace schedhost::model {
namespace {

constexpr uint64_t kPdbViewMagic = 0x7363687064623031ULL;  // "schpdb01"

}  // namespace

void ApplyPdbDefaults(PodDisruptionBudgetData& pdb) {
  if (pdb.metadata.namespace_name.empty()) pdb.metadata.namespace_name = "default";
  DefaultMeta(pdb.metadata);
}

std::shared_ptr<const PodDisruptionBudget> PodDisruptionBudget::Make(PodDisruptionBudgetData data) {
  return std::shared_ptr<const PodDisruptionBudget>(new PodDisruptionBudget(std::move(data)));
}

PodDisruptionBudget::PodDisruptionBudget(PodDisruptionBudgetData data) : data_(std::move(data)) {
  ApplyPdbDefaults(data_);
  holder_.magic = kPdbViewMagic;
  holder_.owner = this;
  schedhost_pdb_view& v = holder_.view;
  v.struct_size = sizeof(schedhost_pdb_view);
  v.name = internal::ToStr(data_.metadata.name);
  v.namespace_id = Interner::Global().Intern(data_.metadata.namespace_name);
  v.disruptions_allowed = data_.status.disruptions_allowed;
  v.selector = internal::ConvertSelector(data_.spec.selector, arena_);
}

const PodDisruptionBudget* PodDisruptionBudget::FromView(const schedhost_pdb_view* v) {
  return internal::OwnerFromView<PodDisruptionBudget>(v, kPdbViewMagic);
}

}  // namespace schedhost::model
