#include "host/store/volume_controller.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "host/model/quantity.h"
#include "host/model/value_node.h"
#include "host/store/object_write.h"
#include "host/store/store.h"
#include "host/store/store_error.h"

namespace schedhost::store {
namespace {

using model::ValueNode;
using Json = nlohmann::json;

constexpr std::string_view kClaims = "persistentvolumeclaims";
constexpr std::string_view kVolumes = "persistentvolumes";
constexpr std::string_view kClasses = "storageclasses.storage.k8s.io";
constexpr std::string_view kBindCompleted = "pv.kubernetes.io/bind-completed";
constexpr std::string_view kBoundByController = "pv.kubernetes.io/bound-by-controller";
constexpr std::string_view kSelectedNode = "volume.kubernetes.io/selected-node";
constexpr std::string_view kBetaClass = "volume.beta.kubernetes.io/storage-class";
constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";
// A pass that keeps finding work after this many writes is a loop, not a cluster.
constexpr int kMaxStepsPerReconcile = 100000;

const ValueNode* At(const ValueNode* node, std::initializer_list<std::string_view> path) {
  for (std::string_view key : path) {
    if (node == nullptr) return nullptr;
    node = node->Find(key);
  }
  return node;
}

std::string Text(const ValueNode* node, std::initializer_list<std::string_view> path) {
  const ValueNode* v = At(node, path);
  return v != nullptr && v->kind == SCHEDHOST_CONFIG_STRING ? v->string_value : std::string();
}

bool Has(const ValueNode* node, std::initializer_list<std::string_view> path) {
  return At(node, path) != nullptr;
}

int64_t Bytes(const ValueNode* node, std::initializer_list<std::string_view> path) {
  const ValueNode* v = At(node, path);
  if (v == nullptr) return 0;
  if (v->kind == SCHEDHOST_CONFIG_INT) return v->int_value;
  if (v->kind != SCHEDHOST_CONFIG_STRING) return 0;
  const std::optional<model::Quantity> q = model::Quantity::Parse(v->string_value);
  return q ? q->Value() : 0;
}

std::vector<std::string> Texts(const ValueNode* node, std::initializer_list<std::string_view> path) {
  std::vector<std::string> out;
  const ValueNode* v = At(node, path);
  if (v == nullptr || v->kind != SCHEDHOST_CONFIG_ARRAY) return out;
  for (const ValueNode& c : v->children) {
    if (c.kind == SCHEDHOST_CONFIG_STRING) out.push_back(c.string_value);
  }
  return out;
}

std::string ClaimClass(const ValueNode* claim) {
  if (Has(claim, {"metadata", "annotations", kBetaClass})) {
    return Text(claim, {"metadata", "annotations", kBetaClass});
  }
  return Text(claim, {"spec", "storageClassName"});
}

std::string VolumeClass(const ValueNode* volume) {
  if (Has(volume, {"metadata", "annotations", kBetaClass})) {
    return Text(volume, {"metadata", "annotations", kBetaClass});
  }
  return Text(volume, {"spec", "storageClassName"});
}

std::string VolumeMode(const ValueNode* object) {
  const std::string mode = Text(object, {"spec", "volumeMode"});
  return mode.empty() ? "Filesystem" : mode;
}

}  // namespace

VolumeController::VolumeController(ObjectStore& objects, HostnameFn hostname_of)
    : objects_(objects), hostname_of_(std::move(hostname_of)) {
  watch_ = objects_.Watch([this](const ObjectEvent& event) {
    if (event.key == kClaims || event.key == kVolumes || event.key == kClasses) Reconcile();
  });
}

VolumeController::~VolumeController() { objects_.Unwatch(watch_); }

void VolumeController::Reconcile() {
  // The watch calls back for the controller's own writes: the outer loop picks them up.
  if (reconciling_) return;
  reconciling_ = true;
  try {
    for (int i = 0; i < kMaxStepsPerReconcile && Step(); ++i) {
    }
  } catch (...) {
    reconciling_ = false;
    throw;
  }
  reconciling_ = false;
}

bool VolumeController::Step() {
  const std::optional<KindInfo> claim_kind = objects_.FindKey(kClaims);
  const std::optional<KindInfo> volume_kind = objects_.FindKey(kVolumes);
  if (!claim_kind || !volume_kind) return false;
  const auto snapshot = objects_.Snapshot();
  const KindObjects* claims = snapshot->Find(kClaims);
  const KindObjects* volumes = snapshot->Find(kVolumes);
  const KindObjects* classes = snapshot->Find(kClasses);
  if (claims == nullptr || volumes == nullptr) return false;
  const auto write = [this](const KindInfo& kind, std::string_view ns, std::string_view name,
                            const Json& patch, ObjectWriteOp op = ObjectWriteOp::kMergePatch) {
    WriteObject(objects_, kind, op, ns, name, patch.dump());
    ++writes_;
    return true;
  };

  // A volume's phase, as the controller gives it.
  for (const auto& v : volumes->items()) {
    const ValueNode* pv = v->tree.get();
    if (Has(pv, {"status", "phase"})) continue;
    const StoredObject* claim =
        Has(pv, {"spec", "claimRef"})
            ? claims->Get(Text(pv, {"spec", "claimRef", "namespace"}),
                          Text(pv, {"spec", "claimRef", "name"}))
            : nullptr;
    const bool bound =
        claim != nullptr && Text(claim->tree.get(), {"spec", "volumeName"}) == v->name;
    return write(*volume_kind, "", v->name, {{"status", {{"phase", bound ? "Bound" : "Available"}}}});
  }

  // Bindings a volume's claimRef asks for.
  for (const auto& v : volumes->items()) {
    const ValueNode* pv = v->tree.get();
    if (!Has(pv, {"spec", "claimRef"})) continue;
    const std::string ns = Text(pv, {"spec", "claimRef", "namespace"});
    const std::string name = Text(pv, {"spec", "claimRef", "name"});
    const std::string uid = Text(pv, {"spec", "claimRef", "uid"});
    const StoredObject* claim = claims->Get(ns.empty() ? "default" : ns, name);
    if (claim == nullptr || Has(claim->tree.get(), {"metadata", "deletionTimestamp"})) continue;
    if (!uid.empty() && uid != claim->uid) continue;
    const ValueNode* pvc = claim->tree.get();
    const std::string volume_name = Text(pvc, {"spec", "volumeName"});
    if (!volume_name.empty() && volume_name != v->name) continue;
    if (volume_name == v->name && Has(pvc, {"metadata", "annotations", kBindCompleted})) {
      if (Text(pv, {"status", "phase"}) != "Bound" || uid.empty()) {
        return write(*volume_kind, "", v->name,
                     {{"spec", {{"claimRef", {{"uid", claim->uid}}}}},
                      {"status", {{"phase", "Bound"}}}});
      }
      continue;
    }
    return write(*claim_kind, claim->namespace_name, claim->name,
                 {{"metadata",
                   {{"annotations",
                     {{std::string(kBindCompleted), "yes"},
                      {std::string(kBoundByController), "yes"}}}}},
                  {"spec", {{"volumeName", v->name}}},
                  {"status", {{"phase", "Bound"}}}});
  }

  // Claims to bind or provision.
  for (const auto& c : claims->items()) {
    const ValueNode* pvc = c->tree.get();
    if (!Text(pvc, {"spec", "volumeName"}).empty()) continue;
    if (Has(pvc, {"metadata", "deletionTimestamp"})) continue;
    const std::string class_name = ClaimClass(pvc);
    const StoredObject* sc = classes != nullptr && !class_name.empty()
                                 ? classes->Get("", class_name)
                                 : nullptr;
    const bool delayed =
        sc != nullptr && Text(sc->tree.get(), {"volumeBindingMode"}) == "WaitForFirstConsumer";
    const std::string provisioner = sc != nullptr ? Text(sc->tree.get(), {"provisioner"}) : "";
    const bool selected = Has(pvc, {"metadata", "annotations", kSelectedNode});
    const int64_t requested = Bytes(pvc, {"spec", "resources", "requests", "storage"});
    if (!delayed) {
      // Immediate: the smallest available volume of the class that fits.
      const StoredObject* best = nullptr;
      int64_t best_size = 0;
      const std::vector<std::string> modes = Texts(pvc, {"spec", "accessModes"});
      for (const auto& v : volumes->items()) {
        const ValueNode* pv = v->tree.get();
        if (Has(pv, {"spec", "claimRef"}) || Text(pv, {"status", "phase"}) != "Available") continue;
        if (VolumeClass(pv) != class_name || VolumeMode(pv) != VolumeMode(pvc)) continue;
        const int64_t size = Bytes(pv, {"spec", "capacity", "storage"});
        if (size < requested) continue;
        const std::vector<std::string> has = Texts(pv, {"spec", "accessModes"});
        bool all = true;
        for (const std::string& m : modes) all = all && std::find(has.begin(), has.end(), m) != has.end();
        if (!all) continue;
        if (best == nullptr || size < best_size) {
          best = v.get();
          best_size = size;
        }
      }
      if (best != nullptr) {
        return write(*volume_kind, "", best->name,
                     {{"spec",
                       {{"claimRef",
                         {{"kind", "PersistentVolumeClaim"},
                          {"apiVersion", "v1"},
                          {"namespace", c->namespace_name},
                          {"name", c->name},
                          {"uid", c->uid}}}}}});
      }
    }
    if (provisioner.empty() || provisioner == kNoProvisioner || (delayed && !selected)) continue;
    const std::string volume_name = "pvc-" + (c->uid.empty() ? c->namespace_name + "-" + c->name : c->uid);
    if (volumes->Get("", volume_name) != nullptr) continue;  // made; the binding follows
    Json volume = {
        {"apiVersion", "v1"},
        {"kind", "PersistentVolume"},
        {"metadata",
         {{"name", volume_name},
          {"annotations",
           {{"pv.kubernetes.io/provisioned-by", provisioner}, {"schedhost.io/simulated", "true"}}}}},
        {"spec",
         {{"capacity", {{"storage", std::to_string(requested)}}},
          {"accessModes", Texts(pvc, {"spec", "accessModes"})},
          {"volumeMode", VolumeMode(pvc)},
          {"storageClassName", class_name},
          {"persistentVolumeReclaimPolicy", "Delete"},
          {"claimRef",
           {{"kind", "PersistentVolumeClaim"},
            {"apiVersion", "v1"},
            {"namespace", c->namespace_name},
            {"name", c->name},
            {"uid", c->uid}}}}},
        {"status", {{"phase", "Bound"}}}};
    if (selected) {
      const std::string node = Text(pvc, {"metadata", "annotations", kSelectedNode});
      if (const std::optional<std::string> host = hostname_of_ ? hostname_of_(node) : std::nullopt) {
        Json requirement = {{"key", "kubernetes.io/hostname"},
                            {"operator", "In"},
                            {"values", Json::array({*host})}};
        Json term = {{"matchExpressions", Json::array({std::move(requirement)})}};
        volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] =
            Json::array({std::move(term)});
      }
    }
    return write(*volume_kind, "", volume_name, volume, ObjectWriteOp::kCreate);
  }
  return false;
}

VolumeController::HostnameFn NodeHostnames(const Store& store) {
  return [&store](std::string_view node) -> std::optional<std::string> {
    const std::shared_ptr<const model::Node> n = store.Get<model::Node>("", node);
    if (n == nullptr) return std::nullopt;
    for (const auto& [key, value] : n->metadata().labels) {
      if (key == "kubernetes.io/hostname") return value;
    }
    return std::nullopt;
  };
}

}  // namespace schedhost::store
