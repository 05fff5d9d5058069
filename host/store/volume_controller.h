// VolumeController plays, on an embedded cluster's objects, the part of kube-controller-manager
// that volume scheduling waits for: the PV controller's binding of claims to volumes, and a
// provisioner. It is what `schedctl simulate` runs so that a pod with claims is bound as it would
// be in a cluster; it is not a storage system, and says so in its volumes' annotation.
//
// While it lives it watches the store and, after every change, until nothing more changes:
//   - gives a PersistentVolume without status.phase the phase the PV controller would: Bound
//     when its claimRef names a claim that names it back, else Available;
//   - completes a binding a volume's claimRef asks for (the scheduler's or the user's): the
//     claim gets spec.volumeName, pv.kubernetes.io/bind-completed and phase Bound, the volume
//     the claim's uid and phase Bound;
//   - binds an unbound claim of an Immediate class (or of no class) to the smallest Available
//     volume of its class that fits, as the PV controller matches;
//   - provisions a claim of a class that names a provisioner (not kubernetes.io/no-provisioner):
//     a WaitForFirstConsumer claim once the scheduler set volume.kubernetes.io/selected-node, with
//     node affinity for that node's kubernetes.io/hostname, an Immediate one at once. The volume
//     is "pvc-<claim uid>", of the requested size, annotated
//     pv.kubernetes.io/provisioned-by: <provisioner> and schedhost.io/simulated: "true".
// It acts only on kinds the store declares (persistentvolumeclaims, persistentvolumes; classes
// from storageclasses.storage.k8s.io when declared).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "host/store/object_store.h"

namespace schedhost::store {

class VolumeController {
 public:
  // HostnameFn returns a node's kubernetes.io/hostname label (nullopt: no such node or label).
  using HostnameFn = std::function<std::optional<std::string>(std::string_view node)>;

  VolumeController(ObjectStore& objects, HostnameFn hostname_of);
  ~VolumeController();
  VolumeController(const VolumeController&) = delete;
  VolumeController& operator=(const VolumeController&) = delete;

  // Reconcile acts until nothing more changes (the watch calls it; call it once after loading
  // objects that were applied before the controller existed).
  void Reconcile();
  // writes counts the objects it wrote, for tests and the simulation's summary.
  uint64_t writes() const { return writes_; }

 private:
  // Step makes one change, if one is due; false when none is.
  bool Step();

  ObjectStore& objects_;
  HostnameFn hostname_of_;
  uint64_t watch_ = 0;
  bool reconciling_ = false;
  uint64_t writes_ = 0;
};

class Store;
// NodeHostnames is a HostnameFn over `store`'s nodes (which must outlive it).
VolumeController::HostnameFn NodeHostnames(const Store& store);

}  // namespace schedhost::store
