// The storage kinds the host takes in embedded mode (core/v1 PersistentVolumeClaim and
// PersistentVolume, storage.k8s.io/v1 StorageClass), checked as the API server validates the
// fields volume scheduling reads, and StorageClass's volumeBindingMode defaulted as it defaults
// it. A document that fails is refused with the field named, as a Pod's would be; the plugins
// that read these kinds then never see a quantity that does not parse.
#include <algorithm>
#include <initializer_list>
#include <memory>

#include "host/model/decode_util.h"

namespace schedhost::model {
namespace internal {
namespace {

void OneOf(const YamlNode* node, const std::string& path,
           std::initializer_list<std::string_view> allowed) {
  if (IsAbsent(node)) return;
  const std::string value = ReadString(node, path);
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + Quote(a);
  Fail(path, "unsupported value " + Quote(value) + ": supported values: " + list);
}

void AccessModes(const MapReader& spec) {
  ReadList(spec.Get("accessModes"), spec.Path("accessModes"),
           [](const YamlNode* item, const std::string& p) {
             OneOf(item, p, {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"});
           });
}

void NonNegativeQuantity(const YamlNode* node, const std::string& path) {
  if (ReadQuantity(node, path).Value() < 0) Fail(path, "must be greater than or equal to 0");
}

// NodeSelectorTerms checks a PV's required node affinity as the API server does.
void NodeSelectorTerms(const MapReader& selector) {
  const YamlNode* terms = selector.Get("nodeSelectorTerms");
  if (IsAbsent(terms)) Fail(selector.Path("nodeSelectorTerms"), "Required value");
  ReadList(terms, selector.Path("nodeSelectorTerms"), [](const YamlNode* t, const std::string& tp) {
    MapReader term(t, tp);
    for (const char* list : {"matchExpressions", "matchFields"}) {
      ReadList(term.Get(list), term.Path(list), [](const YamlNode* r, const std::string& rp) {
        MapReader req(r, rp);
        if (ReadString(req.Get("key"), req.Path("key")).empty()) Fail(req.Path("key"), "Required value");
        const std::string op = ReadString(req.Get("operator"), req.Path("operator"));
        OneOf(req.Get("operator"), req.Path("operator"),
              {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"});
        const std::vector<std::string> values = ReadStringList(req.Get("values"), req.Path("values"));
        if ((op == "In" || op == "NotIn") && values.empty()) {
          Fail(req.Path("values"), "must be specified when `operator` is 'In' or 'NotIn'");
        }
        if ((op == "Exists" || op == "DoesNotExist") && !values.empty()) {
          Fail(req.Path("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        }
        if ((op == "Gt" || op == "Lt") && values.size() != 1) {
          Fail(req.Path("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'");
        }
      });
    }
  });
}

}  // namespace

}  // namespace internal

bool IsCheckedStorageKind(std::string_view api_version, std::string_view kind) {
  return (api_version == "v1" && (kind == "PersistentVolumeClaim" || kind == "PersistentVolume")) ||
         (api_version == "storage.k8s.io/v1" && kind == "StorageClass");
}

namespace internal {

bool CheckStorageObject(const YamlNode* object, const std::string& prefix,
                        std::string_view api_version, std::string_view kind) {
  if (!IsCheckedStorageKind(api_version, kind)) return false;
  MapReader top(object, prefix);
  MapReader spec(top.Get("spec"), top.Path("spec"));
  if (api_version == "v1" && kind == "PersistentVolumeClaim") {
    AccessModes(spec);
    MapReader resources(spec.Get("resources"), spec.Path("resources"));
    MapReader requests(resources.Get("requests"), resources.Path("requests"));
    NonNegativeQuantity(requests.Get("storage"), requests.Path("storage"));
    OneOf(spec.Get("volumeMode"), spec.Path("volumeMode"), {"Filesystem", "Block"});
    return false;
  }
  if (api_version == "v1" && kind == "PersistentVolume") {
    AccessModes(spec);
    MapReader capacity(spec.Get("capacity"), spec.Path("capacity"));
    NonNegativeQuantity(capacity.Get("storage"), capacity.Path("storage"));
    OneOf(spec.Get("volumeMode"), spec.Path("volumeMode"), {"Filesystem", "Block"});
    MapReader affinity(spec.Get("nodeAffinity"), spec.Path("nodeAffinity"));
    if (!IsAbsent(affinity.Get("required"))) {
      NodeSelectorTerms(MapReader(affinity.Get("required"), affinity.Path("required")));
    }
    return false;
  }
  if (api_version == "storage.k8s.io/v1" && kind == "StorageClass") {
    if (ReadString(top.Get("provisioner"), top.Path("provisioner")).empty()) {
      Fail(top.Path("provisioner"), "Required value");
    }
    OneOf(top.Get("volumeBindingMode"), top.Path("volumeBindingMode"),
          {"Immediate", "WaitForFirstConsumer"});
    return IsAbsent(top.Get("volumeBindingMode"));
  }
  return false;
}

void DefaultStorageObject(GenericObject& object) {
  // The API server defaults a StorageClass's volumeBindingMode to Immediate.
  auto tree = std::make_shared<ValueNode>(*object.tree);
  ValueNode mode;
  mode.kind = SCHEDHOST_CONFIG_STRING;
  mode.key = "volumeBindingMode";
  mode.string_value = "Immediate";
  mode.location = tree->location;
  tree->children.push_back(std::move(mode));
  object.tree = std::move(tree);
}

}  // namespace internal
}  // namespace schedhost::model
