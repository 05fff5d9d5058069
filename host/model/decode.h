// Decoding Kubernetes manifests (YAML, multi-document, or JSON) into made objects: v1 Pod,
// v1 Node, policy/v1 PodDisruptionBudget, scheduling.k8s.io/v1 PriorityClass and v1 Namespace, also inside a
// `kind: List` (or PodList, NodeList, ...) `items:` list. Unknown fields are ignored; wrong
// types, invalid values (see validation.h) and unknown kinds throw DecodeError naming the
// source, the 1-based document, the object, the field path and the reason. Where a string is
// expected any scalar is taken as written (labels {version: 1.0} give "1.0"); where a number or
// boolean is expected, quoted values are refused as upstream's JSON decoding does:
//
//   demo.yaml: document 3 (Pod default/web-1): spec.containers[0].resources.requests.cpu:
//   invalid quantity "abc": unexpected character 'a' at offset 0
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "host/model/namespace.h"
#include "host/model/node.h"
#include "host/model/pdb.h"
#include "host/model/pod.h"
#include "host/model/priority_class.h"
#include "host/model/value_node.h"

namespace schedhost::model {

// kBuiltinKinds names the kinds the decoder types, as messages list them.
inline constexpr std::string_view kBuiltinKinds =
    "v1 Pod, v1 Node, policy/v1 PodDisruptionBudget, scheduling.k8s.io/v1 PriorityClass, "
    "v1 Namespace";

// Object is one decoded object.
using Object =
    std::variant<std::shared_ptr<const Pod>, std::shared_ptr<const Node>,
                 std::shared_ptr<const PodDisruptionBudget>, std::shared_ptr<const PriorityClass>,
                 std::shared_ptr<const Namespace>>;

// DecodeError is a manifest the decoder refused; what() reads
// "<source>: document <n> (<Kind> <namespace/name>): <path>: <reason>", leaving out the parts
// that are unknown (document 0 means the input as a whole).
class DecodeError : public std::runtime_error {
 public:
  // DecodeError composes what() from its parts.
  DecodeError(std::string source, int document, std::string object, std::string path,
              std::string reason, int line = 0);

  // source returns the source name given to DecodeManifests (e.g. the file path).
  const std::string& source() const { return source_; }
  // document returns the 1-based document index; 0 for errors about the whole input.
  int document() const { return document_; }
  // object returns "<Kind> <namespace/name>" (or just the kind) when known, else "".
  const std::string& object() const { return object_; }
  // path returns the JSON-style field path ("spec.tolerations[1].effect"), or "".
  const std::string& path() const { return path_; }
  // reason returns why the input was refused.
  const std::string& reason() const { return reason_; }
  // line returns the 1-based line of a YAML syntax error; 0 when not known.
  int line() const { return line_; }

 private:
  std::string source_;
  int document_;
  std::string object_;
  std::string path_;
  std::string reason_;
  int line_;
};

// DecodeLimits bound the work and memory one call may use; defaults suit real clusters.
struct DecodeLimits {
  size_t max_input_bytes = size_t{64} * 1024 * 1024;
  size_t max_documents = 100000;
  // Document size, counted after expanding YAML aliases (so alias bombs are refused).
  size_t max_document_nodes = 2'000'000;
  size_t max_document_scalar_bytes = size_t{64} * 1024 * 1024;
};

// DecodeManifests decodes every object in `text` in input order, skipping empty documents;
// throws DecodeError (and changes nothing) on the first problem.
std::vector<Object> DecodeManifests(std::string_view text, std::string_view source_name,
                                    const DecodeLimits& limits = {});

// DecodeFile reads `path` and decodes it with the path as source name; throws DecodeError when
// the file cannot be read or is too large.
std::vector<Object> DecodeFile(const std::string& path, const DecodeLimits& limits = {});

// GenericObject is a document of a kind the model does not type: an object of an API kind that
// a plugin declares (a PodGroup, a PersistentVolumeClaim), kept as a value tree. Whether its kind
// is declared is for the caller to judge; the decoder only reads it.
struct GenericObject {
  // api_version and kind are as written ("scheduling.x-k8s.io/v1alpha1", "PodGroup").
  std::string api_version;
  std::string kind;
  // namespace_name is metadata.namespace as written ("" when absent); name is metadata.name.
  std::string namespace_name;
  std::string name;
  // tree is the whole document; every node's location is the object, "<Kind> <namespace/name>"
  // (a reader adds the field's path, as the SDK's ArgsReader::Document does).
  std::shared_ptr<const ValueNode> tree;
  // source and document say where it was read, for messages ("demo.yaml", 1-based).
  std::string source;
  int document = 0;

  // Describe renders "<Kind> <namespace/name>" (or "<Kind> <name>" without a namespace).
  std::string Describe() const;
};

// DecodeManifests, with documents of kinds the model does not type appended to *generic (in
// input order) instead of refused. Typed kinds decode as above; a generic document must have
// apiVersion, kind and metadata.name.
std::vector<Object> DecodeManifests(std::string_view text, std::string_view source_name,
                                    const DecodeLimits& limits,
                                    std::vector<GenericObject>* generic);
// DecodeFile, with untyped kinds appended to *generic (see above).
std::vector<Object> DecodeFile(const std::string& path, const DecodeLimits& limits,
                               std::vector<GenericObject>* generic);
// IsCheckedStorageKind is true for the kinds whose scheduling fields the generic decoder checks
// as the API server does (v1 PersistentVolumeClaim and PersistentVolume, storage.k8s.io/v1
// StorageClass): a document of one that fails is refused, naming the field.
bool IsCheckedStorageKind(std::string_view api_version, std::string_view kind);

// ValueTreeFromJson converts a JSON value (an API object) into a value tree whose nodes'
// locations are `object` ("<Kind> <namespace/name>"). Integers stay integers, other
// numbers are floats; null values and their keys are left out.
ValueNode ValueTreeFromJson(const std::string& json_text, std::string_view object);

// ValueTreeToJson renders a value tree as compact JSON, tables' keys in their order. With
// `without_identity`, the root's metadata leaves out uid, resourceVersion, creationTimestamp,
// generation and managedFields: what two states of one object compare equal without.
std::string ValueTreeToJson(const ValueNode& tree, bool without_identity = false);

// MetadataString reads metadata.<field> of the object `tree` ("" when absent or not a string).
std::string MetadataString(const ValueNode& tree, std::string_view field);

// SetMetadataString sets metadata.<field> of the object `tree` to `value` (adding metadata and
// the field when absent).
void SetMetadataString(ValueNode& tree, std::string_view field, std::string value);

}  // namespace schedhost::model
