#include "host/model/namespace.h"

#include <utility>

#include "host/model/interner.h"
#include "host/model/view_convert.h"

namespace schedhost::model {

void ApplyNamespaceDefaults(NamespaceData& ns) {
  ns.metadata.namespace_name.clear();
  // The API server overwrites the label on every write, so a manifest cannot fake it.
  ns.metadata.labels.emplace_back(std::string(kNamespaceNameLabel), ns.metadata.name);
  DefaultMeta(ns.metadata);
}

std::shared_ptr<const Namespace> Namespace::Make(NamespaceData data) {
  return std::shared_ptr<const Namespace>(new Namespace(std::move(data)));
}

Namespace::Namespace(NamespaceData data) : data_(std::move(data)) {
  ApplyNamespaceDefaults(data_);
  name_id_ = Interner::Global().Intern(data_.metadata.name);
  labels_ = internal::ConvertLabels(data_.metadata.labels, arena_);
}

}  // namespace schedhost::model
