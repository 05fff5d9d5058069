// VolumeZone: keeps a pod on nodes in the zones and regions of the PersistentVolumes bound to its
// claims, as upstream kube-scheduler's VolumeZone. PreFilter reads each persistentVolumeClaim
// volume of the pod: a claim missing, unbound outside WaitForFirstConsumer mode, or bound to a
// volume that is missing keeps the pod pending (UnschedulableAndUnresolvable, upstream's
// message); an unbound claim of a WaitForFirstConsumer class is left to VolumeBinding. The bound
// volumes' topology labels (topology.kubernetes.io/zone and /region and their beta
// failure-domain.beta.kubernetes.io forms, values possibly "__"-separated sets) are what Filter
// checks: a node with any zone or region label must carry every one of them with a value in
// the set. Without any such label PreFilter returns Skip. It takes no arguments.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <schedhost/plugin.hpp>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage_objects.h"

namespace schedhost::plugins {

/// PvTopology is one topology label of a bound PersistentVolume: its key and the zones (or
/// regions) its value names.
struct PvTopology {
  std::string pv_name;
  std::string key;
  size_t label = 0;  // the key's index in upstream's order (VolumeTopologies)
  std::set<std::string, std::less<>> values;

  bool operator==(const PvTopology&) const = default;
};

/// VolumeTopologies returns the topology labels of `volume` in upstream's order (beta zone, beta
/// region, zone, region), leaving out a label whose value does not parse as a "__"-separated
/// set (an empty element), as upstream's LabelZonesToSet refuses it.
std::vector<PvTopology> VolumeTopologies(const storage::Volume& volume);

/// VolumeZone filters nodes by the zones of the pod's bound volumes.
class VolumeZone final : public Plugin,
                         public PreFilterPlugin,
                         public FilterPlugin,
                         public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeZone";
  static constexpr std::string_view kVersion = "1.0.0";
  /// The kinds it reads, by index: claims, volumes, classes.
  static constexpr uint32_t kClaims = 0;
  static constexpr uint32_t kVolumes = 1;
  static constexpr uint32_t kClasses = 2;
  static constexpr std::array<Kind, 3> kKinds = {{
      {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
      {"", "v1", "persistentvolumes", "PersistentVolume", false},
      {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false},
  }};
  static constexpr std::array<std::string_view, 1> kEvaluates = {
      "spec.volumes.persistentVolumeClaim"};
  /// kErrReasonConflict rejects a node outside a volume's zones (upstream's ErrReasonConflict).
  static constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

  /// VolumeZone accepts no arguments; any plugin_config key throws ArgsError.
  VolumeZone(const Host& host, const Args& args);

  /// PreFilter collects the topology labels of the volumes bound to the pod's claims; Skip when
  /// there are none, UnschedulableAndUnresolvable when a claim, its class or its volume is
  /// missing or a claim is unbound outside WaitForFirstConsumer mode.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;

  /// Filter passes a node without any zone or region label; otherwise every volume topology
  /// label must be on the node (a beta key also as its GA key) with a value in the volume's set,
  /// else UnschedulableAndUnresolvable with kErrReasonConflict.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// EventsToRegister names upstream's events: StorageClass add, Node add and label update,
  /// PersistentVolumeClaim add and update, PersistentVolume add and update, with upstream's
  /// queueing hints for the three storage kinds.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  /// The queueing hints, upstream's: a WaitForFirstConsumer class added; a claim of the pod
  /// added or updated; a volume added or its topology labels changed.
  QueueingHint ClassAdded(const Pod& pod, const schedhost_cluster_event& event,
                          const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint ClaimChanged(const Pod& pod, const schedhost_cluster_event& event,
                            const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint VolumeChanged(const Pod& pod, const schedhost_cluster_event& event,
                             const EventObject& old_obj, const EventObject& new_obj) const;

 private:
  // ReadTopologies is upstream's getPVbyPod: the topology labels of the volumes bound to the
  // pod's claims, or the status that keeps the pod pending.
  std::optional<Status> ReadTopologies(const CycleState& state, const Pod& pod,
                                       std::vector<PvTopology>& out) const;
  // ReadObject reads `namespace_name`/`name` of the declared kind `kind` into `out`, or returns
  // the status its absence gives (upstream's lister message for a missing object).
  std::optional<Status> ReadObject(const CycleState& state, uint32_t kind,
                                   std::string_view namespace_name, std::string_view name,
                                   Args& out) const;

  Id state_key_ = 0;
  // The node label keys Filter looks at, interned once: topology_ids_ in upstream's order, and
  // the GA key a beta key falls back to.
  std::array<Id, 4> topology_ids_{};
  std::array<Id, 4> ga_ids_{};
};

}  // namespace schedhost::plugins
