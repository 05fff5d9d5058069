#include "storage_objects.h"

#include <algorithm>
#include <charconv>
#include <schedhost/args.hpp>
#include <schedhost/units.hpp>

namespace schedhost::plugins::storage {
namespace {

// Failure of a field: "<object>: <path>: <what>".
[[noreturn]] void Fail(const Args& object, std::string_view path, std::string_view what) {
  throw ArgsError(object.location() + ": " + std::string(path) + ": " + std::string(what));
}

std::string Text(const Args& object, const Args& node, std::string_view path) {
  if (!node.present()) return {};
  if (node.kind() != SCHEDHOST_CONFIG_STRING) Fail(object, path, "expected a string");
  return node.String("");
}

std::vector<std::string> Texts(const Args& object, const Args& node, std::string_view path) {
  std::vector<std::string> out;
  if (!node.present()) return out;
  if (node.kind() != SCHEDHOST_CONFIG_ARRAY) Fail(object, path, "expected a list");
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(Text(object, node.At(i), std::string(path) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

StringMap Strings(const Args& object, const Args& node, std::string_view path) {
  StringMap out;
  if (!node.present()) return out;
  if (node.kind() != SCHEDHOST_CONFIG_TABLE) Fail(object, path, "expected an object");
  for (size_t i = 0; i < node.size(); ++i) {
    std::string_view key;
    const Args value = node.At(i, &key);
    out.emplace(std::string(key), Text(object, value, std::string(path) + "." + std::string(key)));
  }
  return out;
}

// Quantity reads a quantity written as a string ("10Gi") or a plain number.
std::optional<int64_t> Quantity(const Args& object, const Args& node, std::string_view path) {
  if (!node.present()) return std::nullopt;
  if (node.kind() == SCHEDHOST_CONFIG_INT) return node.Int(0);
  if (node.kind() != SCHEDHOST_CONFIG_STRING) Fail(object, path, "expected a quantity");
  std::string why;
  std::optional<int64_t> v = ParseQuantity(node.String(""), QuantityUnit::kUnits, &why);
  if (!v) Fail(object, path, why);
  return v;
}

std::vector<Requirement> Requirements(const Args& object, const Args& node,
                                      const std::string& path) {
  std::vector<Requirement> out;
  if (!node.present()) return out;
  if (node.kind() != SCHEDHOST_CONFIG_ARRAY) Fail(object, path, "expected a list");
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const Args r = node.At(i);
    out.push_back({Text(object, r["key"], at + ".key"), Text(object, r["operator"], at + ".operator"),
                   Texts(object, r["values"], at + ".values")});
  }
  return out;
}

std::vector<SelectorTerm> Terms(const Args& object, const Args& node, const std::string& path) {
  std::vector<SelectorTerm> out;
  if (!node.present()) return out;
  if (node.kind() != SCHEDHOST_CONFIG_ARRAY) Fail(object, path, "expected a list");
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const Args t = node.At(i);
    out.push_back({Requirements(object, t["matchExpressions"], at + ".matchExpressions"),
                   Requirements(object, t["matchFields"], at + ".matchFields")});
  }
  return out;
}

std::optional<LabelSelector> Selector(const Args& object, const Args& node,
                                      const std::string& path) {
  if (!node.present()) return std::nullopt;
  if (node.kind() != SCHEDHOST_CONFIG_TABLE) Fail(object, path, "expected an object");
  return LabelSelector{Strings(object, node["matchLabels"], path + ".matchLabels"),
                       Requirements(object, node["matchExpressions"], path + ".matchExpressions")};
}

uint64_t Version(const Args& meta) {
  const std::string text = meta["resourceVersion"].present() &&
                                   meta["resourceVersion"].kind() == SCHEDHOST_CONFIG_STRING
                               ? meta["resourceVersion"].String("")
                               : std::string();
  uint64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Matches evaluates one requirement against a label lookup; nullopt when it is malformed
// (an unknown operator, Gt/Lt without exactly one integer, In/NotIn without values).
template <class Lookup>
std::optional<bool> Matches(const Requirement& r, const Lookup& lookup) {
  const std::optional<std::string_view> value = lookup(r.key);
  if (r.key.empty()) return std::nullopt;
  if (r.op == "In" || r.op == "NotIn") {
    if (r.values.empty()) return std::nullopt;
    const bool in =
        value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
    return r.op == "In" ? in : !in;
  }
  if (r.op == "Exists" || r.op == "DoesNotExist") {
    if (!r.values.empty()) return std::nullopt;
    return (r.op == "Exists") == value.has_value();
  }
  if (r.op == "Gt" || r.op == "Lt") {
    if (r.values.size() != 1) return std::nullopt;
    const std::optional<int64_t> bound = ParseInt(r.values[0]);
    if (!bound) return std::nullopt;
    if (!value) return false;
    const std::optional<int64_t> have = ParseInt(*value);
    if (!have) return false;
    return r.op == "Gt" ? *have > *bound : *have < *bound;
  }
  return std::nullopt;
}

template <class Lookup>
bool MatchesSelectorWith(const LabelSelector& selector, const Lookup& lookup) {
  for (const auto& [key, want] : selector.match_labels) {
    const std::optional<std::string_view> have = lookup(key);
    if (!have || *have != want) return false;
  }
  for (const Requirement& r : selector.expressions) {
    const std::optional<bool> ok = Matches(r, lookup);
    if (!ok || !*ok) return false;
  }
  return true;
}

}  // namespace

uint64_t ResourceVersion(const Args& object) { return Version(object["metadata"]); }

std::optional<std::pair<std::string, bool>> ClaimNameOf(const Args& volume,
                                                        std::string_view pod_name) {
  if (const Args pvc = volume["persistentVolumeClaim"]; pvc.present()) {
    return std::pair{pvc["claimName"].String(""), false};
  }
  if (volume["ephemeral"].present()) {
    return std::pair{std::string(pod_name) + "-" + volume["name"].String(""), true};
  }
  return std::nullopt;
}

bool PodUsesClaim(const Host& host, const Pod& pod, const Claim& claim, bool ephemeral) {
  if (claim.namespace_name != pod.namespace_name()) return false;
  const Args volumes = host.Volumes(pod);
  for (size_t i = 0; i < volumes.size(); ++i) {
    const auto name = ClaimNameOf(volumes.At(i), pod.name());
    if (name && name->first == claim.name && (ephemeral || !name->second)) return true;
  }
  return false;
}

bool Volume::BoundTo(const Claim& claim) const {
  if (!has_claim_ref) return false;
  if (claim_name != claim.name || claim_namespace != claim.namespace_name) return false;
  return claim_uid.empty() || claim_uid == claim.uid;
}

Claim DecodeClaim(const Args& object) {
  Claim c;
  const Args meta = object["metadata"];
  const Args spec = object["spec"];
  c.namespace_name = Text(object, meta["namespace"], "metadata.namespace");
  if (c.namespace_name.empty()) c.namespace_name = "default";
  c.name = Text(object, meta["name"], "metadata.name");
  c.uid = Text(object, meta["uid"], "metadata.uid");
  c.resource_version = Version(meta);
  c.deleting = meta["deletionTimestamp"].present();
  const StringMap annotations = Strings(object, meta["annotations"], "metadata.annotations");
  c.has_annotations = !annotations.empty();
  c.bind_completed = annotations.contains(kAnnBindCompleted);
  if (auto it = annotations.find(kAnnSelectedNode); it != annotations.end()) {
    c.selected_node = it->second;
  }
  if (auto it = annotations.find(kAnnBetaStorageClass); it != annotations.end()) {
    c.has_class = true;
    c.class_name = it->second;
  } else if (spec["storageClassName"].present()) {
    c.has_class = true;
    c.class_name = Text(object, spec["storageClassName"], "spec.storageClassName");
  }
  c.volume_name = Text(object, spec["volumeName"], "spec.volumeName");
  c.phase = Text(object, object["status"]["phase"], "status.phase");
  c.access_modes = Texts(object, spec["accessModes"], "spec.accessModes");
  c.request_bytes = Quantity(object, spec["resources"]["requests"]["storage"],
                             "spec.resources.requests.storage");
  c.volume_mode = Text(object, spec["volumeMode"], "spec.volumeMode");
  if (c.volume_mode.empty()) c.volume_mode = "Filesystem";
  c.attributes_class =
      Text(object, spec["volumeAttributesClassName"], "spec.volumeAttributesClassName");
  c.selector = Selector(object, spec["selector"], "spec.selector");
  const Args owners = meta["ownerReferences"];
  for (size_t i = 0; i < owners.size(); ++i) {
    const Args o = owners.At(i);
    if (o["controller"].present() && o["controller"].kind() == SCHEDHOST_CONFIG_BOOL &&
        o["controller"].Bool(false)) {
      c.controller_uid = Text(object, o["uid"], "metadata.ownerReferences.uid");
    }
  }
  return c;
}

Volume DecodeVolume(const Args& object) {
  Volume v;
  const Args meta = object["metadata"];
  const Args spec = object["spec"];
  v.name = Text(object, meta["name"], "metadata.name");
  v.resource_version = Version(meta);
  v.deleting = meta["deletionTimestamp"].present();
  v.labels = Strings(object, meta["labels"], "metadata.labels");
  const StringMap annotations = Strings(object, meta["annotations"], "metadata.annotations");
  if (auto it = annotations.find(kAnnBetaStorageClass); it != annotations.end()) {
    v.class_name = it->second;
  } else {
    v.class_name = Text(object, spec["storageClassName"], "spec.storageClassName");
  }
  const Args ref = spec["claimRef"];
  if (ref.present()) {
    v.has_claim_ref = true;
    v.claim_namespace = Text(object, ref["namespace"], "spec.claimRef.namespace");
    v.claim_name = Text(object, ref["name"], "spec.claimRef.name");
    v.claim_uid = Text(object, ref["uid"], "spec.claimRef.uid");
  }
  v.phase = Text(object, object["status"]["phase"], "status.phase");
  v.capacity_bytes =
      Quantity(object, spec["capacity"]["storage"], "spec.capacity.storage").value_or(0);
  v.access_modes = Texts(object, spec["accessModes"], "spec.accessModes");
  v.volume_mode = Text(object, spec["volumeMode"], "spec.volumeMode");
  if (v.volume_mode.empty()) v.volume_mode = "Filesystem";
  v.attributes_class =
      Text(object, spec["volumeAttributesClassName"], "spec.volumeAttributesClassName");
  const Args required = spec["nodeAffinity"]["required"];
  if (spec["nodeAffinity"].present() && required.present()) {
    v.node_affinity = Terms(object, required["nodeSelectorTerms"],
                            "spec.nodeAffinity.required.nodeSelectorTerms");
  }
  if (const Args csi = spec["csi"]; csi.present()) {
    v.csi = true;
    v.csi_driver = Text(object, csi["driver"], "spec.csi.driver");
    v.csi_volume_handle = Text(object, csi["volumeHandle"], "spec.csi.volumeHandle");
  }
  return v;
}

StorageClass DecodeStorageClass(const Args& object) {
  StorageClass c;
  c.name = Text(object, object["metadata"]["name"], "metadata.name");
  c.provisioner = Text(object, object["provisioner"], "provisioner");
  if (object["volumeBindingMode"].present()) {
    c.binding_mode = Text(object, object["volumeBindingMode"], "volumeBindingMode");
  }
  const Args topologies = object["allowedTopologies"];
  for (size_t i = 0; i < topologies.size(); ++i) {
    const std::string at = "allowedTopologies[" + std::to_string(i) + "].matchLabelExpressions";
    const Args exprs = topologies.At(i)["matchLabelExpressions"];
    std::vector<Requirement> term;
    for (size_t j = 0; j < exprs.size(); ++j) {
      const std::string e = at + "[" + std::to_string(j) + "]";
      term.push_back({Text(object, exprs.At(j)["key"], e + ".key"), "In",
                      Texts(object, exprs.At(j)["values"], e + ".values")});
    }
    c.allowed_topologies.push_back(std::move(term));
  }
  return c;
}

Capacity DecodeCapacity(const Args& object) {
  Capacity c;
  const Args meta = object["metadata"];
  c.namespace_name = Text(object, meta["namespace"], "metadata.namespace");
  c.name = Text(object, meta["name"], "metadata.name");
  c.class_name = Text(object, object["storageClassName"], "storageClassName");
  c.capacity_bytes = Quantity(object, object["capacity"], "capacity");
  c.maximum_volume_size_bytes = Quantity(object, object["maximumVolumeSize"], "maximumVolumeSize");
  try {
    c.node_topology = Selector(object, object["nodeTopology"], "nodeTopology");
  } catch (const ArgsError&) {
    c.topology_valid = false;  // upstream logs it and treats the capacity as inaccessible
  }
  if (c.node_topology) {
    for (const Requirement& r : c.node_topology->expressions) {
      const bool set_op = r.op == "In" || r.op == "NotIn";
      const bool exists_op = r.op == "Exists" || r.op == "DoesNotExist";
      if (r.key.empty() || (!set_op && !exists_op) || (set_op && r.values.empty()) ||
          (exists_op && !r.values.empty())) {
        c.topology_valid = false;
      }
    }
  }
  return c;
}

bool CSIDriverStorageCapacity(const Args& object) {
  const Args v = object["spec"]["storageCapacity"];
  return v.present() && v.kind() == SCHEDHOST_CONFIG_BOOL && v.Bool(false);
}

std::vector<CSINodeDriver> DecodeCSINodeDrivers(const Args& object) {
  std::vector<CSINodeDriver> out;
  const Args drivers = object["spec"]["drivers"];
  if (!drivers.present()) return out;
  if (drivers.kind() != SCHEDHOST_CONFIG_ARRAY) Fail(object, "spec.drivers", "expected a list");
  for (size_t i = 0; i < drivers.size(); ++i) {
    const std::string at = "spec.drivers[" + std::to_string(i) + "]";
    const Args d = drivers.At(i);
    CSINodeDriver driver{Text(object, d["name"], at + ".name"), std::nullopt};
    const Args count = d["allocatable"]["count"];
    if (count.present()) {
      if (count.kind() != SCHEDHOST_CONFIG_INT) {
        Fail(object, at + ".allocatable.count", "expected an integer");
      }
      driver.allocatable_count = count.Int(0);
    }
    out.push_back(std::move(driver));
  }
  return out;
}

VolumeAttachment DecodeVolumeAttachment(const Args& object) {
  VolumeAttachment va;
  const Args spec = object["spec"];
  va.name = Text(object, object["metadata"]["name"], "metadata.name");
  va.attacher = Text(object, spec["attacher"], "spec.attacher");
  va.node_name = Text(object, spec["nodeName"], "spec.nodeName");
  if (const Args pv = spec["source"]["persistentVolumeName"]; pv.present()) {
    va.persistent_volume_name = Text(object, pv, "spec.source.persistentVolumeName");
  }
  return va;
}

bool CSIDriverPreventsSchedulingIfMissing(const Args& object) {
  const Args v = object["spec"]["preventPodSchedulingIfMissing"];
  return v.present() && v.kind() == SCHEDHOST_CONFIG_BOOL && v.Bool(false);
}

std::optional<std::string_view> NodeLabels::Get(std::string_view key) const {
  const Id key_id = host->LookupId(key);
  if (key_id == 0) return std::nullopt;
  const std::optional<Id> value = node.labels().Get(key_id);
  if (!value) return std::nullopt;
  return host->IdString(*value);
}

bool MatchesTerms(const std::vector<SelectorTerm>& terms, const NodeLabels& node) {
  const auto lookup = [&node](std::string_view key) { return node.Get(key); };
  // A PV's node affinity is matched against a node made of its labels only (upstream's
  // CheckNodeAffinity), so a field requirement sees metadata.name as "".
  const auto fields = [](std::string_view key) {
    return key == "metadata.name" ? std::optional<std::string_view>("") : std::nullopt;
  };
  const auto all = [](const std::vector<Requirement>& rs, const auto& look, bool fields_only) {
    for (const Requirement& r : rs) {
      if (fields_only && r.op != "In" && r.op != "NotIn") return false;
      const std::optional<bool> ok = Matches(r, look);
      if (!ok || !*ok) return false;
    }
    return true;
  };
  for (const SelectorTerm& term : terms) {
    if (term.expressions.empty() && term.fields.empty()) continue;  // selects nothing
    if (all(term.expressions, lookup, false) && all(term.fields, fields, true)) return true;
  }
  return false;
}

bool MatchesTopology(const std::vector<std::vector<Requirement>>& terms, const NodeLabels& node) {
  if (terms.empty()) return true;
  for (const std::vector<Requirement>& term : terms) {
    if (term.empty()) continue;  // selects nothing
    bool all = true;
    for (const Requirement& r : term) {
      const std::optional<std::string_view> value = node.Get(r.key);
      if (!value || std::find(r.values.begin(), r.values.end(), *value) == r.values.end()) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

bool MatchesSelector(const LabelSelector& selector, const StringMap& labels) {
  return MatchesSelectorWith(selector, [&labels](std::string_view key) {
    auto it = labels.find(key);
    return it == labels.end() ? std::nullopt : std::optional<std::string_view>(it->second);
  });
}

bool MatchesSelectorOnNode(const LabelSelector& selector, const NodeLabels& node) {
  return MatchesSelectorWith(selector, [&node](std::string_view key) { return node.Get(key); });
}

}  // namespace schedhost::plugins::storage
