// Namespaces (v1): NamespaceData mirrors the object's metadata (the scheduler reads only the
// name and labels); Namespace is the immutable made object with interned labels ready for
// plugins (InterPodAffinity's namespaceSelector). Cluster-scoped.
#pragma once

#include <memory>
#include <string>

#include "host/model/meta.h"
#include "host/model/view_arena.h"
#include "schedhost/plugin.h"

namespace schedhost::model {

// kNamespaceNameLabel is the label the API server puts on every Namespace, valued with its
// name (since Kubernetes 1.21), so selectors can pick namespaces by name.
inline constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";

// NamespaceData mirrors v1 Namespace (spec.finalizers and status are not kept).
struct NamespaceData {
  ObjectMeta metadata;
};

// ApplyNamespaceDefaults clears the namespace field, sets the kubernetes.io/metadata.name label
// to the name as the API server does, normalizes labels and fills a missing uid; idempotent.
void ApplyNamespaceDefaults(NamespaceData& ns);

// Namespace is an immutable Namespace shared as shared_ptr<const Namespace>.
class Namespace {
 public:
  // Make applies the defaults and interns the name and labels.
  static std::shared_ptr<const Namespace> Make(NamespaceData data);

  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  // data returns the plain data.
  const NamespaceData& data() const { return data_; }
  // metadata returns data().metadata (every made object has it, as Pod does).
  const ObjectMeta& metadata() const { return data_.metadata; }
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
  // name_id returns the interned name (what pod views carry as namespace_id).
  schedhost_id name_id() const { return name_id_; }
  // labels returns the interned labels, sorted by key id; valid as long as this object.
  schedhost_labels labels() const { return labels_; }

 private:
  explicit Namespace(NamespaceData data);

  NamespaceData data_;
  schedhost_id name_id_ = 0;
  internal::InlineViewArena arena_;
  schedhost_labels labels_{};
};

}  // namespace schedhost::model
