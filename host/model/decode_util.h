// Internal: typed readers over the YAML tree for the manifest decoder. Each reader takes the
// node (nullptr or a null node when the field is absent) and the field's JSON-style path, and
// fails through internal::Fail with that path when the type or value is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/model/affinity.h"
#include "host/model/decode.h"
#include "host/model/decode_api.h"
#include "host/model/labels.h"
#include "host/model/meta.h"
#include "host/model/namespace.h"
#include "host/model/pod.h"
#include "host/model/quantity.h"
#include "host/model/validation_util.h"
#include "host/model/yaml_tree.h"

namespace schedhost::model::internal {

// DecodeGeneric reads an object of a kind the model does not type into a GenericObject (its
// source and document left for the caller); fails through Fail when metadata.name is missing or
// a map is malformed. `prefix` is the path of the object in its document ("" or "items[3]").
GenericObject DecodeGeneric(const YamlNode* object, const std::string& prefix,
                            const std::string& api_version, const std::string& kind);

// CheckStorageObject checks a PersistentVolumeClaim, PersistentVolume or StorageClass document
// (other kinds pass) as the API server validates the fields volume scheduling reads; fails
// through Fail naming the field. Returns whether the document needs DefaultStorageObject (a
// StorageClass without volumeBindingMode).
bool CheckStorageObject(const YamlNode* object, const std::string& prefix,
                        std::string_view api_version, std::string_view kind);
// DefaultStorageObject fills in what the API server defaults (volumeBindingMode: Immediate).
void DefaultStorageObject(GenericObject& object);

// ValueJson renders a value (a volume, a part of an object) as compact JSON, typed as the API
// server would read it (see decode_generic.cc); fails through Fail when it is malformed.
std::string ValueJson(const YamlNode* node, const std::string& path);

// Describe names a node's type for error messages ("a list", "an object", "string \"x\"").
std::string Describe(const YamlNode* node);
// IsAbsent is true for a missing field or an explicit null.
inline bool IsAbsent(const YamlNode* node) {
  return node == nullptr || node->kind == YamlNode::Kind::kNull;
}

// MapReader indexes an object's fields; YAML merge keys ("<<") are applied, duplicates refused.
class MapReader {
 public:
  // MapReader fails unless `node` is an object (absent reads as an empty object).
  MapReader(const YamlNode* node, std::string path);

  // Get returns the field's node, or nullptr when absent or null.
  const YamlNode* Get(std::string_view key) const;
  // Path returns the path of a field of this object.
  std::string Path(std::string_view key) const { return Child(path_, key); }
  // path returns this object's path.
  const std::string& path() const { return path_; }
  // entries returns the fields sorted by key.
  const std::vector<std::pair<std::string_view, const YamlNode*>>& entries() const {
    return entries_;
  }

 private:
  void Collect(const YamlNode* node, bool merged, int depth);

  std::string path_;
  std::vector<std::pair<std::string_view, const YamlNode*>> entries_;
};

// ReadString returns a scalar's text ("" when absent); fails for lists and objects.
std::string ReadString(const YamlNode* node, const std::string& path);
// ReadInt returns an integer in [min, max] (nullopt when absent); quoted numbers are refused.
std::optional<int64_t> ReadInt(const YamlNode* node, const std::string& path, int64_t min,
                               int64_t max);
// ReadInt32 is ReadInt over the int32 range.
std::optional<int32_t> ReadInt32(const YamlNode* node, const std::string& path);
// ReadBool returns true/false (nullopt when absent).
std::optional<bool> ReadBool(const YamlNode* node, const std::string& path);
// ReadQuantity parses a quantity (string or number); an absent value is zero.
Quantity ReadQuantity(const YamlNode* node, const std::string& path);
// ReadResourceList reads a map of resource names to quantities.
ResourceList ReadResourceList(const YamlNode* node, const std::string& path);
// ReadStringList reads a list of scalars.
std::vector<std::string> ReadStringList(const YamlNode* node, const std::string& path);
// ReadStringMap reads an object of scalar values (null values read as "").
StringMap ReadStringMap(const YamlNode* node, const std::string& path);
// ReadList calls fn(item_node, item_path) for each item of a list.
template <class Fn>
void ReadList(const YamlNode* node, const std::string& path, Fn&& fn) {
  if (IsAbsent(node)) return;
  if (node->kind != YamlNode::Kind::kSequence) Fail(path, "expected a list, got " + Describe(node));
  for (size_t i = 0; i < node->items.size(); ++i) fn(node->items[i], Index(path, i));
}
// ReadEnum reads a string and maps it through `parse`; `allowed` lists the spellings.
template <class E, class Parse>
std::optional<E> ReadEnum(const YamlNode* node, const std::string& path, Parse parse,
                          std::string_view allowed) {
  if (IsAbsent(node)) return std::nullopt;
  std::string s = ReadString(node, path);
  std::optional<E> value = parse(s);
  if (!value) {
    Fail(path, "unsupported value " + Quote(s) + ": supported values: " + std::string(allowed));
  }
  return value;
}

// ReadMeta reads metadata (name, namespace, uid, labels, annotations, ownerReferences,
// creationTimestamp, resourceVersion).
ObjectMeta ReadMeta(const YamlNode* node, const std::string& path);
// ReadLabelSelector reads a metav1.LabelSelector (nullopt when absent).
std::optional<LabelSelector> ReadLabelSelector(const YamlNode* node, const std::string& path);
// ReadNodeSelectorTerm reads a node selector term.
NodeSelectorTerm ReadNodeSelectorTerm(const YamlNode* node, const std::string& path);
// ReadAffinity reads a pod's affinity block (nullopt when absent).
std::optional<Affinity> ReadAffinity(const YamlNode* node, const std::string& path);

// DecodePod, DecodeNode, DecodePdb and DecodePriorityClass read one object's fields (the
// caller has checked apiVersion and kind); validation happens afterwards.
PodData DecodePod(const MapReader& object);
NodeData DecodeNode(const MapReader& object);
PodDisruptionBudgetData DecodePdb(const MapReader& object);
PriorityClassData DecodePriorityClass(const MapReader& object);
// DecodeNamespace reads a v1 Namespace's metadata (spec and status are ignored).
NamespaceData DecodeNamespace(const MapReader& object);

// DecodeApiTree decodes one object an API server sent, already a tree, as `kind`: its fields,
// defaults and validation, as manifests get them (decode.cc); throws DecodeError (source
// "api") naming the object and the field.
ApiObject DecodeApiTree(const YamlNode* root, ApiKind kind);

}  // namespace schedhost::model::internal
