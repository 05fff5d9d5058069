#include "volume_binding.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>

namespace schedhost::plugins {
namespace {

using storage::Capacity;
using storage::Claim;
using storage::NodeLabels;
using storage::Quoted;
using storage::StorageClass;
using storage::Volume;

// Upstream's Filter reasons, in the order it reports them.
constexpr std::string_view kNodeConflict = "node(s) didn't match PersistentVolume's node affinity";
constexpr std::string_view kBindConflict =
    "node(s) didn't find available persistent volumes to bind";
constexpr std::string_view kNotEnoughSpace = "node(s) did not have enough free storage";
constexpr std::string_view kVolumeMissing =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

// How often PreBind looks at the objects while it waits for the PV controller.
constexpr std::chrono::milliseconds kPollInterval{100};

// StateRef is the cycle state's value: clones share the claims, as upstream's Clone does.
struct StateRef {
  std::shared_ptr<VolumeBinding::PodClaims> claims;
};

// JsonString renders `s` as a JSON string (names and uids need no escaping, but a value read
// from an object is not trusted to be a name).
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

bool FullyBound(const Claim& c) { return !c.volume_name.empty() && c.bind_completed; }

// FindMatchingVolume is the PV controller's matching as upstream's FindMatchingVolume with a
// node (delayed binding, VolumeAttributesClass on): a volume pre-bound to the claim wins (when
// it reaches the node), else the smallest available one that fits.
const Volume* FindMatchingVolume(const Claim& claim, const std::vector<Volume>& volumes,
                                 const NodeLabels& node, const std::set<std::string>& excluded) {
  const int64_t requested = claim.request_bytes.value_or(0);
  const Volume* smallest = nullptr;
  for (const Volume& v : volumes) {
    if (excluded.contains(v.name)) continue;
    if (v.has_claim_ref && !v.BoundTo(claim)) continue;
    if (v.capacity_bytes < requested) continue;
    if (v.volume_mode != claim.volume_mode) continue;
    if (v.attributes_class != claim.attributes_class) continue;
    if (v.deleting) continue;
    const bool reaches = !v.node_affinity || storage::MatchesTerms(*v.node_affinity, node);
    if (v.BoundTo(claim)) return reaches ? &v : nullptr;
    if (v.phase != "Available") continue;
    if (claim.selector && !storage::MatchesSelector(*claim.selector, v.labels)) continue;
    if (v.class_name != claim.class_name) continue;
    if (!reaches) continue;
    const bool modes = std::all_of(claim.access_modes.begin(), claim.access_modes.end(),
                                   [&v](const std::string& m) {
                                     return std::find(v.access_modes.begin(), v.access_modes.end(),
                                                      m) != v.access_modes.end();
                                   });
    if (!modes) continue;
    if (smallest == nullptr || smallest->capacity_bytes > v.capacity_bytes) smallest = &v;
  }
  return smallest;
}

// BrokenLinear is upstream's broken linear function over the shape (scores already scaled).
int64_t BrokenLinear(const std::vector<ShapePoint>& shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      return shape[i - 1].score + (shape[i].score - shape[i - 1].score) *
                                      (p - shape[i - 1].utilization) /
                                      (shape[i].utilization - shape[i - 1].utilization);
    }
  }
  return shape.back().score;
}

}  // namespace

VolumeBinding::VolumeBinding(const Host& host, const Args& args)
    : Plugin(host),
      args_(ParseVolumeBindingArgs(args)),
      state_key_(host.Intern("VolumeBinding/PodClaims")) {
  for (ShapePoint& p : args_.shape) p.score *= SCHEDHOST_MAX_NODE_SCORE / 10;
  // Upstream's events: a claim, class, volume or capacity added or changed, a node added or
  // relabelled. CSINode events matter to upstream only for in-tree volumes migrated to CSI, and
  // CSIDriver events only for inline CSI volumes, which need no plugin here (see README).
  events_ = {
      {{SCHEDHOST_KIND_EVENT(kClasses), SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE},
       &VolumeBinding::Hint},
      {{SCHEDHOST_KIND_EVENT(kClaims), SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE},
       &VolumeBinding::Hint},
      {{SCHEDHOST_KIND_EVENT(kVolumes), SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE}, nullptr},
      {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL},
       nullptr},
      {{SCHEDHOST_KIND_EVENT(kCapacities), SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE},
       &VolumeBinding::Hint},
  };
}

std::span<const schedhost_event_registration> VolumeBinding::EventsToRegister() {
  return events_;
}

int32_t VolumeBinding::Hint(void* instance, const schedhost_pod_view* pod,
                            const schedhost_cluster_event* event,
                            const schedhost_event_object* old_obj,
                            const schedhost_event_object* new_obj) noexcept {
  try {
    auto* self = static_cast<VolumeBinding*>(instance);
    if (event == nullptr || pod == nullptr) return SCHEDHOST_QUEUE;
    const Host& host = self->host();
    const Args before = EventObject(old_obj).object(host);
    const Args after = EventObject(new_obj).object(host);
    if (event->resource == SCHEDHOST_KIND_EVENT(kClaims)) {
      // Only a claim this pod uses (a claim volume or an ephemeral volume's) can make it
      // schedulable.
      return storage::PodUsesClaim(host, Pod(pod), storage::DecodeClaim(after), true)
                 ? SCHEDHOST_QUEUE
                 : SCHEDHOST_QUEUE_SKIP;
    }
    if (event->resource == SCHEDHOST_KIND_EVENT(kClasses)) {
      if (!before.present()) return SCHEDHOST_QUEUE;  // a new class
      const StorageClass a = storage::DecodeStorageClass(before);
      const StorageClass b = storage::DecodeStorageClass(after);
      const auto flat = [](const StorageClass& c) {
        std::vector<std::tuple<std::string, std::vector<std::string>>> out;
        for (const auto& term : c.allowed_topologies) {
          for (const auto& r : term) out.emplace_back(r.key, r.values);
          out.emplace_back("", std::vector<std::string>{});
        }
        return out;
      };
      return flat(a) != flat(b) ? SCHEDHOST_QUEUE : SCHEDHOST_QUEUE_SKIP;
    }
    if (event->resource == SCHEDHOST_KIND_EVENT(kCapacities)) {
      if (!before.present()) return SCHEDHOST_QUEUE;  // a new capacity
      const std::optional<int64_t> was = storage::DecodeCapacity(before).Limit();
      const std::optional<int64_t> now = storage::DecodeCapacity(after).Limit();
      return now && (!was || *now > *was) ? SCHEDHOST_QUEUE : SCHEDHOST_QUEUE_SKIP;
    }
    return SCHEDHOST_QUEUE;
  } catch (...) {
    return SCHEDHOST_QUEUE;  // when in doubt, retry the pod
  }
}

void VolumeBinding::Overlay(Volume& volume) {
  std::lock_guard lock(assumed_mu_);
  auto it = assumed_volumes_.find(volume.name);
  if (it == assumed_volumes_.end()) return;
  if (it->second.base_version != volume.resource_version) {
    assumed_volumes_.erase(it);  // the host's copy moved on: it wins
    return;
  }
  volume.has_claim_ref = true;
  volume.claim_namespace = it->second.claim_namespace;
  volume.claim_name = it->second.claim_name;
  volume.claim_uid = it->second.claim_uid;
}

void VolumeBinding::Overlay(Claim& claim) {
  std::lock_guard lock(assumed_mu_);
  auto it = assumed_claims_.find(claim.Key());
  if (it == assumed_claims_.end()) return;
  if (it->second.base_version != claim.resource_version) {
    assumed_claims_.erase(it);
    return;
  }
  claim.selected_node = it->second.node;
  claim.has_annotations = true;
}

std::optional<Status> VolumeBinding::ReadClaims(const CycleState& state, const Pod& pod,
                                                PodClaims& out) {
  const auto unavailable = [this](uint32_t kind, std::string_view what) {
    std::string why;
    host().KindAvailable(kind, &why);
    return Status::UnschedulableAndUnresolvable(std::string(what) + " cannot be read: " + why);
  };
  // The claims first, each checked as upstream's podHasPVCs checks them.
  std::vector<Claim> claims;
  const Args volumes = host().Volumes(pod);
  for (size_t i = 0; i < volumes.size(); ++i) {
    const auto name = storage::ClaimNameOf(volumes.At(i), pod.name());
    if (!name) continue;
    const auto& [claim_name, ephemeral] = *name;
    out.has_claims = true;
    int32_t rc = SCHEDHOST_OK;
    const Args object = host().GetObject(state, kClaims, pod.namespace_name(), claim_name, &rc);
    if (rc == SCHEDHOST_E_NOT_FOUND) {
      return Status::UnschedulableAndUnresolvable(
          ephemeral ? "waiting for ephemeral volume controller to create the "
                      "persistentvolumeclaim " + Quoted(claim_name)
                    : "persistentvolumeclaim " + Quoted(claim_name) + " not found");
    }
    if (rc != SCHEDHOST_OK) return unavailable(kClaims, "persistentvolumeclaims");
    Claim c = storage::DecodeClaim(object);
    Overlay(c);
    if (c.phase == "Lost") {
      return Status::UnschedulableAndUnresolvable(
          "persistentvolumeclaim " + Quoted(c.name) + " bound to non-existent persistentvolume " +
          Quoted(c.volume_name));
    }
    if (c.deleting) {
      return Status::UnschedulableAndUnresolvable("persistentvolumeclaim " + Quoted(c.name) +
                                                  " is being deleted");
    }
    if (ephemeral && c.controller_uid != pod.uid()) {
      return Status::UnschedulableAndUnresolvable(
          "PVC " + c.Key() + " was not created for pod " + std::string(pod.namespace_name()) +
          "/" + std::string(pod.name()) + " (pod is not owner)");
    }
    claims.push_back(std::move(c));
  }
  if (!out.has_claims) return std::nullopt;

  // Then sorted as upstream's GetPodVolumeClaims sorts them.
  bool immediate = false;
  for (Claim& c : claims) {
    if (FullyBound(c)) {
      int32_t rc = SCHEDHOST_OK;
      const Args pv = host().GetObject(state, kVolumes, "", c.volume_name, &rc);
      if (rc == SCHEDHOST_OK) {
        Volume v = storage::DecodeVolume(pv);
        Overlay(v);
        out.bound_volumes.insert_or_assign(v.name, std::move(v));
      } else if (rc != SCHEDHOST_E_NOT_FOUND) {
        return unavailable(kVolumes, "persistentvolumes");
      }
      out.bound.push_back(std::move(c));
      continue;
    }
    bool delayed = false;
    if (!c.class_name.empty()) {
      int32_t rc = SCHEDHOST_OK;
      const Args object = host().GetObject(state, kClasses, "", c.class_name, &rc);
      if (rc == SCHEDHOST_OK) {
        StorageClass sc = storage::DecodeStorageClass(object);
        if (!sc.binding_mode) {
          return Status::Error("VolumeBindingMode not set for StorageClass " +
                               Quoted(c.class_name));
        }
        delayed = *sc.binding_mode == "WaitForFirstConsumer";
        out.classes.insert_or_assign(sc.name, std::move(sc));
      } else if (rc != SCHEDHOST_E_NOT_FOUND) {
        return unavailable(kClasses, "storageclasses");
      }
    }
    if (delayed && c.volume_name.empty()) {
      out.delayed.push_back(std::move(c));
    } else {
      immediate = true;
    }
  }
  for (const Claim& c : out.bound) {
    auto it = out.bound_volumes.find(c.volume_name);
    out.bound_in_order.push_back(it == out.bound_volumes.end() ? nullptr : &it->second);
  }
  if (immediate) {
    return Status::UnschedulableAndUnresolvable("pod has unbound immediate PersistentVolumeClaims");
  }
  if (out.delayed.empty()) return std::nullopt;

  // What Filter matches and provisions the delayed claims against: the volumes of their
  // classes, the CSI drivers of their provisioners, and the capacities those publish.
  std::set<std::string, std::less<>> classes;
  for (const Claim& c : out.delayed) classes.insert(c.class_name);
  std::optional<std::string> failed;
  const int32_t rc = host().ListObjects(state, kVolumes, "", [&](Args object) {
    Volume v = storage::DecodeVolume(object);
    if (!classes.contains(v.class_name)) return true;
    Overlay(v);
    out.volumes_by_class[v.class_name].push_back(std::move(v));
    return true;
  });
  if (rc != SCHEDHOST_OK) return unavailable(kVolumes, "persistentvolumes");
  bool any_capacity = false;
  for (const auto& [name, sc] : out.classes) {
    if (sc.provisioner.empty() || out.driver_capacity.contains(sc.provisioner)) continue;
    int32_t drc = SCHEDHOST_OK;
    const Args driver = host().GetObject(state, kDrivers, "", sc.provisioner, &drc);
    if (drc != SCHEDHOST_OK && drc != SCHEDHOST_E_NOT_FOUND) {
      return unavailable(kDrivers, "csidrivers");
    }
    const bool checks = drc == SCHEDHOST_OK && storage::CSIDriverStorageCapacity(driver);
    out.driver_capacity.emplace(sc.provisioner, checks);
    any_capacity = any_capacity || checks;
  }
  if (any_capacity) {
    const int32_t crc = host().ListObjects(state, kCapacities, "", [&](Args object) {
      out.capacities.push_back(storage::DecodeCapacity(object));
      return true;
    });
    if (crc != SCHEDHOST_OK) return unavailable(kCapacities, "csistoragecapacities");
  }
  return std::nullopt;
}

Status VolumeBinding::PreFilter(CycleState& state, const Pod& pod, PreFilterResult& /*result*/) {
  // Most pods have no volume a plugin evaluates: nothing to read, nothing to keep.
  if (pod.volumes() == nullptr) return Status::Skip();
  auto claims = std::make_shared<PodClaims>();
  try {
    if (std::optional<Status> held = ReadClaims(state, pod, *claims)) return std::move(*held);
  } catch (const ArgsError& e) {
    return Status::UnschedulableAndUnresolvable(e.what());  // an object it cannot read
  }
  const bool has_claims = claims->has_claims;
  state.Write(state_key_, std::make_unique<StateRef>(StateRef{std::move(claims)}));
  return has_claims ? Status::Success() : Status::Skip();
}

std::vector<std::string> VolumeBinding::FindVolumes(const PodClaims& claims, const NodeInfo& ni,
                                                    NodeVolumes& out) const {
  const NodeLabels node{&host(), ni.node()};
  const std::string_view node_name = ni.node().name();
  bool bound_ok = true;
  bool unbound_ok = true;
  bool enough_space = true;
  bool volumes_exist = true;
  for (const storage::Volume* v : claims.bound_in_order) {
    if (v == nullptr) {
      volumes_exist = false;
      break;
    }
    if (v->node_affinity && !storage::MatchesTerms(*v->node_affinity, node)) {
      bound_ok = false;
      break;
    }
  }
  const auto reasons = [&]() {
    std::vector<std::string> r;
    if (!bound_ok) r.emplace_back(kNodeConflict);
    if (!unbound_ok) r.emplace_back(kBindConflict);
    if (!enough_space) r.emplace_back(kNotEnoughSpace);
    if (!volumes_exist) r.emplace_back(kVolumeMissing);
    return r;
  };
  if (claims.delayed.empty()) return reasons();

  std::vector<const Claim*> to_match;
  std::vector<const Claim*> to_provision;
  for (const Claim& c : claims.delayed) {
    if (c.selected_node) {
      if (*c.selected_node != node_name) {
        unbound_ok = false;
        return reasons();
      }
      to_provision.push_back(&c);
    } else {
      to_match.push_back(&c);
    }
  }
  if (!to_match.empty()) {
    // Smallest claims first, as the PV controller matches them.
    std::stable_sort(to_match.begin(), to_match.end(), [](const Claim* a, const Claim* b) {
      return a->request_bytes.value_or(0) < b->request_bytes.value_or(0);
    });
    std::set<std::string> chosen;
    static const std::vector<Volume> kNone;
    for (const Claim* c : to_match) {
      auto it = claims.volumes_by_class.find(c->class_name);
      const Volume* v =
          FindMatchingVolume(*c, it == claims.volumes_by_class.end() ? kNone : it->second, node,
                             chosen);
      if (v == nullptr) {
        to_provision.push_back(c);
        unbound_ok = false;
        continue;
      }
      chosen.insert(v->name);
      out.bindings.push_back({*v, *c});
    }
  }
  if (to_provision.empty()) return reasons();
  // upstream's checkVolumeProvisions: its verdict replaces the matching's.
  unbound_ok = true;
  for (const Claim* c : to_provision) {
    if (c->class_name.empty()) throw std::runtime_error("no class for claim " + Quoted(c->Key()));
    auto sc = claims.classes.find(c->class_name);
    if (sc == claims.classes.end()) {
      throw std::runtime_error("failed to find storage class " + Quoted(c->class_name));
    }
    const std::string& provisioner = sc->second.provisioner;
    if (provisioner.empty() || provisioner == storage::kNotSupportedProvisioner ||
        !storage::MatchesTopology(sc->second.allowed_topologies, node)) {
      unbound_ok = false;
      out.provisions.clear();
      return reasons();
    }
    Provision p{*c, std::nullopt};
    auto driver = claims.driver_capacity.find(provisioner);
    if (c->request_bytes && driver != claims.driver_capacity.end() && driver->second) {
      const Capacity* fits = nullptr;
      for (const Capacity& cap : claims.capacities) {
        const std::optional<int64_t> limit = cap.Limit();
        if (cap.class_name == sc->second.name && limit && *limit >= *c->request_bytes &&
            cap.topology_valid && cap.node_topology &&
            storage::MatchesSelectorOnNode(*cap.node_topology, node)) {
          fits = &cap;
          break;
        }
      }
      if (fits == nullptr) {
        enough_space = false;
        out.provisions.clear();
        return reasons();
      }
      p.capacity = *fits;
    }
    out.provisions.push_back(std::move(p));
  }
  return reasons();
}

Status VolumeBinding::Filter(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni) {
  auto* ref = state.Read<StateRef>(state_key_);
  if (ref == nullptr) return Status::Error("VolumeBinding: no PreFilter state for the pod");
  PodClaims& claims = *ref->claims;
  NodeVolumes found;
  std::vector<std::string> reasons;
  try {
    reasons = FindVolumes(claims, ni, found);
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
  if (!reasons.empty()) return {Code::kUnschedulableAndUnresolvable, std::move(reasons)};
  // With every claim bound there is nothing to choose per node: Reserve and PreBind have
  // nothing to do, and Score gives 0 (PreScore skips).
  if (claims.delayed.empty()) return Status::Success();
  std::lock_guard lock(claims.mu);
  claims.has_static_bindings = claims.has_static_bindings || !found.bindings.empty();
  claims.by_node.insert_or_assign(std::string(ni.node().name()), std::move(found));
  return Status::Success();
}

Status VolumeBinding::PreScore(CycleState& state, const Pod& /*pod*/,
                               const NodeInfoList& /*nodes*/) {
  // Only unbound claims can score a node other than 0 (upstream scores bound ones 0).
  auto* ref = state.Read<StateRef>(state_key_);
  if (ref == nullptr || ref->claims->delayed.empty()) return Status::Skip();
  return Status::Success();
}

Status VolumeBinding::Score(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni,
                            int64_t& score) {
  score = 0;
  auto* ref = state.Read<StateRef>(state_key_);
  if (ref == nullptr) return Status::Success();
  PodClaims& claims = *ref->claims;
  std::lock_guard lock(claims.mu);
  auto it = claims.by_node.find(ni.node().name());
  if (it == claims.by_node.end()) return Status::Success();
  struct Use {
    int64_t requested = 0;
    int64_t capacity = 0;
  };
  std::map<std::string, Use, std::less<>> by_class;
  if (!it->second.bindings.empty()) {
    for (const Binding& b : it->second.bindings) {
      Use& u = by_class[b.volume.class_name];
      u.requested += b.claim.request_bytes.value_or(0);
      u.capacity += b.volume.capacity_bytes;
    }
  } else {
    for (const Provision& p : it->second.provisions) {
      if (!p.capacity) continue;
      Use& u = by_class[p.claim.class_name];
      u.capacity = p.capacity->capacity_bytes.value_or(0);
      u.requested += p.claim.request_bytes.value_or(0);
    }
  }
  if (by_class.empty()) return Status::Success();
  int64_t sum = 0;
  for (const auto& [name, u] : by_class) {
    const int64_t utilization = u.capacity == 0 || u.requested > u.capacity
                                    ? 100
                                    : static_cast<int64_t>(static_cast<__int128>(u.requested) *
                                                           100 / u.capacity);
    sum += BrokenLinear(args_.shape, utilization);
  }
  score = std::llround(static_cast<double>(sum) / static_cast<double>(by_class.size()));
  return Status::Success();
}

Status VolumeBinding::Reserve(CycleState& state, const Pod& /*pod*/, std::string_view node) {
  auto* ref = state.Read<StateRef>(state_key_);
  if (ref == nullptr) return Status::Success();
  PodClaims& claims = *ref->claims;
  std::lock_guard lock(claims.mu);
  auto it = claims.by_node.find(node);
  if (it == claims.by_node.end() || claims.delayed.empty()) {
    claims.all_bound = true;
    return Status::Success();
  }
  claims.all_bound = false;
  std::lock_guard assumed(assumed_mu_);
  for (const Binding& b : it->second.bindings) {
    const bool already = b.volume.has_claim_ref && b.volume.BoundTo(b.claim) &&
                         b.volume.claim_uid == b.claim.uid;
    if (already) continue;
    assumed_volumes_.insert_or_assign(
        b.volume.name,
        AssumedVolume{b.volume.resource_version, b.claim.namespace_name, b.claim.name, b.claim.uid});
  }
  for (const Provision& p : it->second.provisions) {
    assumed_claims_.insert_or_assign(p.claim.Key(),
                                     AssumedClaim{p.claim.resource_version, std::string(node)});
  }
  return Status::Success();
}

void VolumeBinding::Revert(const NodeVolumes& found) {
  std::lock_guard lock(assumed_mu_);
  for (const Binding& b : found.bindings) {
    auto it = assumed_volumes_.find(b.volume.name);
    if (it != assumed_volumes_.end() && it->second.claim_name == b.claim.name &&
        it->second.claim_namespace == b.claim.namespace_name) {
      assumed_volumes_.erase(it);
    }
  }
  for (const Provision& p : found.provisions) assumed_claims_.erase(p.claim.Key());
}

void VolumeBinding::Unreserve(CycleState& state, const Pod& /*pod*/, std::string_view node) {
  auto* ref = state.Read<StateRef>(state_key_);
  if (ref == nullptr) return;
  PodClaims& claims = *ref->claims;
  std::lock_guard lock(claims.mu);
  auto it = claims.by_node.find(node);
  if (it != claims.by_node.end()) Revert(it->second);
}

Status VolumeBinding::PreBind(CycleState& state, const Pod& pod, std::string_view node) {
  auto* ref = state.Read<StateRef>(state_key_);
  if (ref == nullptr) return Status::Success();
  NodeVolumes found;
  {
    PodClaims& claims = *ref->claims;
    std::lock_guard lock(claims.mu);
    if (claims.all_bound) return Status::Success();
    auto it = claims.by_node.find(node);
    if (it == claims.by_node.end()) {
      return Status::Error("no pod volume found for node " + Quoted(node));
    }
    found = it->second;
  }
  // The writes, as upstream's bindAPIUpdate makes them: each volume's claimRef, then each
  // claim's selected node. A merge patch carrying the version read is refused if the object
  // changed since, as upstream's update is.
  for (const Binding& b : found.bindings) {
    const std::string body =
        R"({"metadata":{"resourceVersion":)" + JsonString(std::to_string(b.volume.resource_version)) +
        R"(,"annotations":{)" + JsonString(storage::kAnnBoundByController) +
        R"(:"yes"}},"spec":{"claimRef":{"kind":"PersistentVolumeClaim","apiVersion":"v1","namespace":)" +
        JsonString(b.claim.namespace_name) + R"(,"name":)" + JsonString(b.claim.name) +
        R"(,"uid":)" + JsonString(b.claim.uid) + R"(,"resourceVersion":)" +
        JsonString(std::to_string(b.claim.resource_version)) + "}}}";
    std::string why;
    if (host().WriteObject(kVolumes, SCHEDHOST_WRITE_MERGE_PATCH, "", b.volume.name, body, &why) !=
        SCHEDHOST_OK) {
      return Status::Error(why);
    }
  }
  for (const Provision& p : found.provisions) {
    const std::string body = R"({"metadata":{"resourceVersion":)" +
                             JsonString(std::to_string(p.claim.resource_version)) +
                             R"(,"annotations":{)" + JsonString(storage::kAnnSelectedNode) + ":" +
                             JsonString(node) + "}}}";
    std::string why;
    if (host().WriteObject(kClaims, SCHEDHOST_WRITE_MERGE_PATCH, p.claim.namespace_name,
                           p.claim.name, body, &why) != SCHEDHOST_OK) {
      return Status::Error(why);
    }
  }
  return WaitForBindings(pod, node, found);
}

Status VolumeBinding::WaitForBindings(const Pod& /*pod*/, std::string_view node,
                                      const NodeVolumes& found) {
  const std::optional<NodeInfo> ni = host().GetNode(node);
  if (!ni) return Status::Error("failed to get node " + Quoted(node));
  const NodeLabels labels{&host(), ni->node()};
  const auto reaches = [&labels, node](const Volume& v) -> std::optional<Status> {
    if (v.node_affinity && !storage::MatchesTerms(*v.node_affinity, labels)) {
      return Status::Error("pv " + Quoted(v.name) + " node affinity doesn't match node " +
                           Quoted(node) + ": no matching NodeSelectorTerms");
    }
    return std::nullopt;
  };
  // done reads the latest objects (a NULL state in PreBind): true when every binding is
  // complete, false while the PV controller is at work, a status when it cannot complete.
  const auto done = [&]() -> std::variant<bool, Status> {
    for (const Binding& b : found.bindings) {
      int32_t rc = SCHEDHOST_OK;
      const Args pv_object = host().GetObject(kVolumes, "", b.volume.name, &rc);
      if (rc != SCHEDHOST_OK) {
        return Status::Error("failed to check binding: persistentvolume " + Quoted(b.volume.name) +
                             " not found");
      }
      const Args claim_object =
          host().GetObject(kClaims, b.claim.namespace_name, b.claim.name, &rc);
      if (rc != SCHEDHOST_OK) {
        return Status::Error("failed to check binding: persistentvolumeclaim " +
                             Quoted(b.claim.Key()) + " not found");
      }
      const Volume pv = storage::DecodeVolume(pv_object);
      if (pv.resource_version <= b.volume.resource_version) return false;  // not yet written
      if (std::optional<Status> s = reaches(pv)) return std::move(*s);
      if (!pv.has_claim_ref || pv.claim_uid.empty()) {
        return Status::Error("ClaimRef got reset for pv " + Quoted(pv.name));
      }
      if (!FullyBound(storage::DecodeClaim(claim_object))) return false;
    }
    for (const Provision& p : found.provisions) {
      int32_t rc = SCHEDHOST_OK;
      const Args object = host().GetObject(kClaims, p.claim.namespace_name, p.claim.name, &rc);
      if (rc != SCHEDHOST_OK) {
        return Status::Error("failed to check provisioning pvc: persistentvolumeclaim " +
                             Quoted(p.claim.Key()) + " not found");
      }
      const Claim c = storage::DecodeClaim(object);
      if (c.resource_version <= p.claim.resource_version) return false;
      if (!c.has_annotations) {
        return Status::Error("selectedNode annotation reset for PVC " + Quoted(c.name));
      }
      if (c.selected_node.value_or("") != node) {
        return Status::Error("provisioning failed for PVC " + Quoted(c.name));
      }
      if (!c.volume_name.empty()) {
        const Args pv_object = host().GetObject(kVolumes, "", c.volume_name, &rc);
        if (rc == SCHEDHOST_E_NOT_FOUND) return false;
        if (rc != SCHEDHOST_OK) {
          return Status::Error("failed to get pv " + Quoted(c.volume_name) + " from cache");
        }
        if (std::optional<Status> s = reaches(storage::DecodeVolume(pv_object))) {
          return std::move(*s);
        }
      }
      if (!FullyBound(c)) return false;
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + args_.bind_timeout;
  while (true) {
    std::variant<bool, Status> now;
    try {
      now = done();
    } catch (const ArgsError& e) {
      now = Status::Error(e.what());
    }
    if (Status* s = std::get_if<Status>(&now)) {
      return Status::Error("binding volumes: " + s->reasons().front());
    }
    if (std::get<bool>(now)) return Status::Success();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Error("binding volumes: context deadline exceeded");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::VolumeBinding)
