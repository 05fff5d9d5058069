// VolumeZone's extension points: PreFilter (the topology of the pod's bound volumes), Filter
// (the node's zone and region labels against it), and its cluster events with their hints.
#include "volume_zone.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace schedhost::plugins {
namespace {

// The topology label keys, in upstream's order (topologyLabels): the beta keys first.
constexpr std::array<std::string_view, 4> kTopologyLabels = {
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
};
// kGaLabel is the index of the key a node label is also looked up under when the node lacks the
// volume's key (upstream's translateToGALabel: beta to GA; a GA key stays itself).
constexpr std::array<size_t, 4> kGaLabel = {2, 3, 2, 3};
// The multi-zone delimiter of a volume label value (upstream's LabelMultiZoneDelimiter).
constexpr std::string_view kZoneDelimiter = "__";

// kNotFound names a declared kind in a missing object's message, as upstream's listers do
// (errors.NewNotFound with the lister's group and singular resource).
constexpr std::array<std::string_view, 3> kNotFound = {
    "persistentvolumeclaim", "persistentvolume", "storageclass.storage.k8s.io"};

constexpr std::string_view kWaitForFirstConsumer = "WaitForFirstConsumer";

using storage::Quoted;

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

// LabelZonesToSet splits a "__"-separated label value into its trimmed elements; nullopt when
// one is empty (upstream refuses such a value, and the label is then ignored).
std::optional<std::set<std::string, std::less<>>> LabelZonesToSet(std::string_view value) {
  std::set<std::string, std::less<>> out;
  while (true) {
    const size_t at = value.find(kZoneDelimiter);
    const std::string_view zone = TrimSpace(value.substr(0, at));
    if (zone.empty()) return std::nullopt;
    out.emplace(zone);
    if (at == std::string_view::npos) break;
    value.remove_prefix(at + kZoneDelimiter.size());
  }
  return out;
}

// Topologies is the cycle state: what PreFilter found, shared by the state's clones.
struct Topologies {
  std::shared_ptr<const std::vector<PvTopology>> items;
};

}  // namespace

std::vector<PvTopology> VolumeTopologies(const storage::Volume& volume) {
  // Only the labels: a volume's node affinity is VolumeBinding's concern.
  std::vector<PvTopology> out;
  for (size_t i = 0; i < kTopologyLabels.size(); ++i) {
    auto it = volume.labels.find(kTopologyLabels[i]);
    if (it == volume.labels.end()) continue;
    std::optional<std::set<std::string, std::less<>>> zones = LabelZonesToSet(it->second);
    if (!zones) continue;
    out.push_back({volume.name, std::string(kTopologyLabels[i]), i, std::move(*zones)});
  }
  return out;
}

VolumeZone::VolumeZone(const Host& host, const Args& args)
    : Plugin(host), state_key_(host.Intern("PreFilterVolumeZone")) {
  args.ExpectNone(kName);
  for (size_t i = 0; i < kTopologyLabels.size(); ++i) {
    topology_ids_[i] = host.Intern(kTopologyLabels[i]);
  }
  for (size_t i = 0; i < kGaLabel.size(); ++i) ga_ids_[i] = topology_ids_[kGaLabel[i]];
}

std::optional<Status> VolumeZone::ReadObject(const CycleState& state, uint32_t kind,
                                             std::string_view namespace_name,
                                             std::string_view name, Args& out) const {
  int32_t rc = SCHEDHOST_OK;
  out = host().GetObject(state, kind, namespace_name, name, &rc);
  if (rc == SCHEDHOST_OK && out.present()) return std::nullopt;
  if (rc == SCHEDHOST_E_NOT_FOUND || rc == SCHEDHOST_OK) {
    return Status::UnschedulableAndUnresolvable(std::string(kNotFound[kind]) + " " +
                                                Quoted(name) + " not found");
  }
  // The host does not mirror the kind (not served, forbidden): say why, so the user can act.
  std::string why;
  host().KindAvailable(kind, &why);
  if (why.empty()) why = "the host answered " + std::to_string(rc);
  const std::string object =
      namespace_name.empty() ? std::string(name) : std::string(namespace_name) + "/" +
                                                       std::string(name);
  return Status::UnschedulableAndUnresolvable("cannot read " + std::string(kKinds[kind].kind) +
                                              " " + object + ": " + why);
}

std::optional<Status> VolumeZone::ReadTopologies(const CycleState& state, const Pod& pod,
                                                 std::vector<PvTopology>& out) const {
  const Args volumes = host().Volumes(pod);
  // Only persistentVolumeClaim volumes: upstream's VolumeZone reads no ephemeral volume.
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Args source = volumes.At(i)["persistentVolumeClaim"];
    if (!source.present()) continue;
    try {
      const std::string claim_name = source["claimName"].String("");
      if (claim_name.empty()) {
        return Status::UnschedulableAndUnresolvable("PersistentVolumeClaim had no name");
      }
      Args object(host().api(), nullptr);
      if (auto why = ReadObject(state, kClaims, pod.namespace_name(), claim_name, object)) {
        return why;
      }
      const storage::Claim claim = storage::DecodeClaim(object);
      if (claim.volume_name.empty()) {
        if (claim.class_name.empty()) {
          return Status::UnschedulableAndUnresolvable(
              "PersistentVolumeClaim had no pv name and storageClass name");
        }
        if (auto why = ReadObject(state, kClasses, "", claim.class_name, object)) return why;
        const storage::StorageClass sc = storage::DecodeStorageClass(object);
        if (!sc.binding_mode) {
          return Status::UnschedulableAndUnresolvable(
              "VolumeBindingMode not set for StorageClass " + Quoted(claim.class_name));
        }
        // Binding waits for a node (VolumeBinding chooses it): nothing to check yet.
        if (*sc.binding_mode == kWaitForFirstConsumer) continue;
        return Status::UnschedulableAndUnresolvable("PersistentVolume had no name");
      }
      if (auto why = ReadObject(state, kVolumes, "", claim.volume_name, object)) return why;
      std::vector<PvTopology> found = VolumeTopologies(storage::DecodeVolume(object));
      std::move(found.begin(), found.end(), std::back_inserter(out));
    } catch (const ArgsError& e) {
      // An object that does not decode is its own fault: the message names it and the field.
      return Status::UnschedulableAndUnresolvable(e.what());
    }
  }
  return std::nullopt;
}

Status VolumeZone::PreFilter(CycleState& state, const Pod& pod, PreFilterResult& /*result*/) {
  std::vector<PvTopology> found;
  if (std::optional<Status> why = ReadTopologies(state, pod, found)) return std::move(*why);
  if (found.empty()) return Status::Skip();
  state.Write(state_key_, std::make_unique<Topologies>(Topologies{
                              std::make_shared<const std::vector<PvTopology>>(std::move(found))}));
  return {};
}

Status VolumeZone::Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) {
  // A pod without volumes always fits (upstream's fast path).
  if (!host().Volumes(pod).present()) return {};
  std::vector<PvTopology> computed;
  const std::vector<PvTopology>* topologies = nullptr;
  if (const Topologies* s = state.Read<Topologies>(state_key_); s != nullptr && s->items) {
    topologies = s->items.get();
  } else {
    // Without PreFilter's state (a caller that skipped it), compute it here, as upstream.
    if (std::optional<Status> why = ReadTopologies(state, pod, computed)) return std::move(*why);
    topologies = &computed;
  }
  const Labels labels = ni.node().labels();
  // A node without any zone or region label is fine: a single-zone cluster need not label its
  // nodes.
  if (std::none_of(topology_ids_.begin(), topology_ids_.end(),
                   [&](Id key) { return labels.Has(key); })) {
    return {};
  }
  for (const PvTopology& t : *topologies) {
    std::optional<Id> value = labels.Get(topology_ids_[t.label]);
    if (!value) value = labels.Get(ga_ids_[t.label]);  // a beta volume key, a GA node key
    if (!value || !t.values.contains(host().IdString(*value))) {
      return Status::UnschedulableAndUnresolvable(Status::Static{kErrReasonConflict});
    }
  }
  return {};
}

QueueingHint VolumeZone::ClassAdded(const Pod& /*pod*/, const schedhost_cluster_event& /*event*/,
                                    const EventObject& /*old_obj*/,
                                    const EventObject& new_obj) const {
  const Args object = new_obj.object(host());
  if (!object.present()) return QueueingHint::kQueue;
  // Only a WaitForFirstConsumer class lets an unbound claim through; volumeBindingMode is
  // immutable, so class updates are not registered at all.
  const storage::StorageClass sc = storage::DecodeStorageClass(object);
  return sc.binding_mode == kWaitForFirstConsumer ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint VolumeZone::ClaimChanged(const Pod& pod, const schedhost_cluster_event& /*event*/,
                                      const EventObject& /*old_obj*/,
                                      const EventObject& new_obj) const {
  const Args object = new_obj.object(host());
  if (!object.present()) return QueueingHint::kQueue;
  // Any change of a claim the pod uses may help (it appeared, it was bound); others do not.
  const storage::Claim claim = storage::DecodeClaim(object);
  return storage::PodUsesClaim(host(), pod, claim, false) ? QueueingHint::kQueue
                                                          : QueueingHint::kSkip;
}

QueueingHint VolumeZone::VolumeChanged(const Pod& /*pod*/, const schedhost_cluster_event& /*event*/,
                                       const EventObject& old_obj,
                                       const EventObject& new_obj) const {
  const Args after = new_obj.object(host());
  const Args before = old_obj.object(host());
  if (!after.present() || !before.present()) return QueueingHint::kQueue;  // a new volume
  // Only the topology labels matter (a volume's node affinity is immutable).
  return VolumeTopologies(storage::DecodeVolume(before)) ==
                 VolumeTopologies(storage::DecodeVolume(after))
             ? QueueingHint::kSkip
             : QueueingHint::kQueue;
}

std::span<const schedhost_event_registration> VolumeZone::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      OnEvent<&VolumeZone::ClassAdded>(SCHEDHOST_KIND_EVENT(kClasses), SCHEDHOST_ACTION_ADD),
      // A new node, or a node's zone labels changing (upstream has no hint here).
      OnEvent(SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL),
      OnEvent<&VolumeZone::ClaimChanged>(SCHEDHOST_KIND_EVENT(kClaims),
                                         SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE),
      OnEvent<&VolumeZone::VolumeChanged>(SCHEDHOST_KIND_EVENT(kVolumes),
                                          SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE),
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::VolumeZone)
