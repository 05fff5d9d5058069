// VolumeRestrictions' extension points: PreFilter (the pod's ReadWriteOncePod claims in use and
// its in-tree disks), AddPod and RemovePod (the claims' uses in preemption's dry runs), Filter
// (the disks against the node's pods, then the claims), and its cluster events with their hints.
#include "volume_restrictions.h"

#include <algorithm>
#include <utility>

namespace schedhost::plugins {
namespace {

// The access mode a claim may be used in by one pod only (upstream's v1.ReadWriteOncePod).
constexpr std::string_view kReadWriteOncePod = "ReadWriteOncePod";
// The pool of an rbd volume that names none (the API server's default).
constexpr std::string_view kDefaultRbdPool = "rbd";

using storage::Quoted;

// Text reads a string field; any other value reads as unset ("").
std::string Text(const Args& v) {
  return v.kind() == SCHEDHOST_CONFIG_STRING ? v.String("") : std::string();
}

// Flag reads a boolean field; any other value reads as unset (false).
bool Flag(const Args& v) { return v.kind() == SCHEDHOST_CONFIG_BOOL && v.Bool(false); }

// Source is a volume's source `key` when it is set (a table, as a non-nil pointer upstream).
std::optional<Args> Source(const Args& volume, std::string_view key) {
  Args source = volume[key];
  if (source.kind() != SCHEDHOST_CONFIG_TABLE) return std::nullopt;
  return source;
}

// ClaimName is the claimName of a persistentVolumeClaim volume, nullopt for another volume.
std::optional<std::string> ClaimName(const Args& volume) {
  const std::optional<Args> source = Source(volume, "persistentVolumeClaim");
  if (!source) return std::nullopt;
  return Text((*source)["claimName"]);
}

// HaveOverlap tells whether two lists share an element (upstream's haveOverlap).
bool HaveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) {
    return std::find(b.begin(), b.end(), x) != b.end();
  });
}

using ClaimSet = std::set<std::string, std::less<>>;

// RestrictionsState is the cycle state (upstream's preFilterState plus the pod's disks, which
// Filter would otherwise decode again for every node). Copyable: preemption clones it, the
// shared parts are never changed.
struct RestrictionsState {
  // The names of the pod's claims with the ReadWriteOncePod access mode.
  std::shared_ptr<const ClaimSet> claims;
  // The uses of those claims by pods of the snapshot (with AddPod and RemovePod).
  int64_t conflicts = 0;
  // The pod's in-tree disks.
  std::shared_ptr<const std::vector<Disk>> disks;
};

}  // namespace

std::vector<Disk> VolumeDisks(const Args& volumes) {
  std::vector<Disk> out;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Args volume = volumes.At(i);
    if (const auto s = Source(volume, "gcePersistentDisk")) {
      out.push_back({Disk::Type::kGce, Text((*s)["pdName"]), {}, {}, Flag((*s)["readOnly"])});
    }
    if (const auto s = Source(volume, "awsElasticBlockStore")) {
      out.push_back({Disk::Type::kAws, Text((*s)["volumeID"]), {}, {}, Flag((*s)["readOnly"])});
    }
    if (const auto s = Source(volume, "iscsi")) {
      out.push_back({Disk::Type::kIscsi, Text((*s)["iqn"]), {}, {}, Flag((*s)["readOnly"])});
    }
    if (const auto s = Source(volume, "rbd")) {
      Disk disk{Disk::Type::kRbd, Text((*s)["image"]), Text((*s)["pool"]), {},
                Flag((*s)["readOnly"])};
      if (disk.pool.empty()) disk.pool = kDefaultRbdPool;
      const Args monitors = (*s)["monitors"];
      if (monitors.kind() == SCHEDHOST_CONFIG_ARRAY) {
        for (size_t m = 0; m < monitors.size(); ++m) {
          const Args monitor = monitors.At(m);
          if (monitor.kind() == SCHEDHOST_CONFIG_STRING) disk.monitors.push_back(Text(monitor));
        }
      }
      out.push_back(std::move(disk));
    }
  }
  return out;
}

bool DisksConflict(const Disk& a, const Disk& b) {
  if (a.type != b.type || a.id != b.id) return false;
  const bool both_read_only = a.read_only && b.read_only;
  switch (a.type) {
    case Disk::Type::kGce:
      // The same GCE disk conflicts unless every pod mounts it read-only.
      return !both_read_only;
    case Disk::Type::kAws:
      // An EBS volume attaches to one instance: any two mounts conflict.
      return true;
    case Disk::Type::kIscsi:
      // iSCSI volumes are RWO or ROX: one read-write mount at most.
      return !both_read_only;
    case Disk::Type::kRbd:
      // The same image: a monitor in common and the same pool; read-write once.
      return a.pool == b.pool && HaveOverlap(a.monitors, b.monitors) && !both_read_only;
  }
  return false;
}

VolumeRestrictions::VolumeRestrictions(const Host& host, const Args& args)
    : Plugin(host), state_key_(host.Intern("PreFilterVolumeRestrictions")) {
  args.ExpectNone(kName);
}

std::optional<Status> VolumeRestrictions::ReadClaim(const CycleState& state,
                                                    std::string_view namespace_name,
                                                    std::string_view name, Args& out) const {
  const std::string not_found = "persistentvolumeclaim " + Quoted(name) + " not found";
  // No object has an empty name: upstream's lister answers NotFound.
  if (name.empty()) return Status::UnschedulableAndUnresolvable(not_found);
  int32_t rc = SCHEDHOST_OK;
  out = host().GetObject(state, kClaims, namespace_name, name, &rc);
  if (rc == SCHEDHOST_OK && out.present()) return std::nullopt;
  if (rc == SCHEDHOST_E_NOT_FOUND || rc == SCHEDHOST_OK) {
    return Status::UnschedulableAndUnresolvable(not_found);
  }
  // The host does not mirror claims (not served, forbidden): say why, so the user can act.
  std::string why;
  host().KindAvailable(kClaims, &why);
  if (why.empty()) why = "the host answered " + std::to_string(rc);
  return Status::UnschedulableAndUnresolvable("cannot read " + std::string(kKinds[kClaims].kind) +
                                              " " + std::string(namespace_name) + "/" +
                                              std::string(name) + ": " + why);
}

std::optional<Status> VolumeRestrictions::ReadWriteOncePodClaims(const CycleState& state,
                                                                 const Pod& pod,
                                                                 ClaimSet& out) const {
  const Args volumes = host().Volumes(pod);
  // Only persistentVolumeClaim volumes, in spec.volumes order: the first missing claim decides.
  for (size_t i = 0; i < volumes.size(); ++i) {
    const std::optional<std::string> claim_name = ClaimName(volumes.At(i));
    if (!claim_name) continue;
    Args object(host().api(), nullptr);
    if (auto why = ReadClaim(state, pod.namespace_name(), *claim_name, object)) return why;
    try {
      const storage::Claim claim = storage::DecodeClaim(object);
      if (std::find(claim.access_modes.begin(), claim.access_modes.end(), kReadWriteOncePod) !=
          claim.access_modes.end()) {
        out.insert(*claim_name);
      }
    } catch (const ArgsError& e) {
      // A claim that does not decode is its own fault: the message names it and the field.
      return Status::UnschedulableAndUnresolvable(e.what());
    }
  }
  return std::nullopt;
}

int64_t VolumeRestrictions::ClaimUses(const Pod& other, const ClaimSet& claims) const {
  const Args volumes = host().Volumes(other);
  int64_t uses = 0;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const std::optional<std::string> claim_name = ClaimName(volumes.At(i));
    if (claim_name && claims.contains(*claim_name)) ++uses;
  }
  return uses;
}

bool VolumeRestrictions::Conflicts(const std::vector<Disk>& disks, const Pod& other) const {
  const Args volumes = host().Volumes(other);
  if (!volumes.present()) return false;
  const std::vector<Disk> theirs = VolumeDisks(volumes);
  return std::any_of(disks.begin(), disks.end(), [&](const Disk& mine) {
    return std::any_of(theirs.begin(), theirs.end(),
                       [&](const Disk& their) { return DisksConflict(mine, their); });
  });
}

Status VolumeRestrictions::PreFilter(CycleState& state, const Pod& pod,
                                     PreFilterResult& /*result*/) {
  std::vector<Disk> disks = VolumeDisks(host().Volumes(pod));
  ClaimSet claims;
  if (std::optional<Status> why = ReadWriteOncePodClaims(state, pod, claims)) {
    return std::move(*why);
  }
  // Upstream's IsPVCUsedByPods: one conflict per ReadWriteOncePod claim some pod of the
  // snapshot (on any node, in the pod's namespace) uses, however many pods use it.
  ClaimSet used;
  const size_t node_count = claims.empty() ? 0 : host().NodeCount();
  for (size_t n = 0; n < node_count && used.size() < claims.size(); ++n) {
    const std::optional<NodeInfo> ni = host().NodeAt(n);
    if (!ni) continue;
    for (const Pod other : ni->pods()) {
      if (other.namespace_name() != pod.namespace_name()) continue;
      const Args volumes = host().Volumes(other);
      for (size_t i = 0; i < volumes.size(); ++i) {
        std::optional<std::string> claim_name = ClaimName(volumes.At(i));
        if (claim_name && claims.contains(*claim_name)) used.insert(std::move(*claim_name));
      }
    }
  }
  if (disks.empty() && used.empty()) return Status::Skip();
  state.Write(state_key_, std::make_unique<RestrictionsState>(RestrictionsState{
                              std::make_shared<const ClaimSet>(std::move(claims)),
                              static_cast<int64_t>(used.size()),
                              std::make_shared<const std::vector<Disk>>(std::move(disks))}));
  return {};
}

Status VolumeRestrictions::AddPod(CycleState& state, const Pod& /*pod*/, const Pod& to_add,
                                  const NodeInfo& /*ni*/) {
  auto* s = state.Read<RestrictionsState>(state_key_);
  if (s == nullptr) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicts += ClaimUses(to_add, *s->claims);
  return {};
}

Status VolumeRestrictions::RemovePod(CycleState& state, const Pod& /*pod*/, const Pod& to_remove,
                                     const NodeInfo& /*ni*/) {
  auto* s = state.Read<RestrictionsState>(state_key_);
  if (s == nullptr) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicts -= ClaimUses(to_remove, *s->claims);
  return {};
}

Status VolumeRestrictions::Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) {
  const auto* s = state.Read<RestrictionsState>(state_key_);
  std::vector<Disk> computed;
  const std::vector<Disk>* disks = nullptr;
  if (s != nullptr && s->disks) {
    disks = s->disks.get();
  } else {
    computed = VolumeDisks(host().Volumes(pod));
    disks = &computed;
  }
  if (!disks->empty()) {
    for (const Pod other : ni.pods()) {
      if (Conflicts(*disks, other)) {
        return Status::Unschedulable(Status::Static{kErrReasonDiskConflict});
      }
    }
  }
  // Upstream's Filter reads its state after the disks: without PreFilter it is an error.
  if (s == nullptr) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  if (s->conflicts > 0) {
    return Status::Unschedulable(Status::Static{kErrReasonReadWriteOncePodConflict});
  }
  return {};
}

QueueingHint VolumeRestrictions::AssignedPodDeleted(const Pod& pod,
                                                    const schedhost_cluster_event& /*event*/,
                                                    const EventObject& old_obj,
                                                    const EventObject& /*new_obj*/) const {
  const std::optional<Pod> deleted = old_obj.pod();
  if (!deleted) return QueueingHint::kQueue;
  if (deleted->namespace_name() != pod.namespace_name()) return QueueingHint::kSkip;
  // The deleted pod held a disk the pod conflicts with.
  if (Conflicts(VolumeDisks(host().Volumes(pod)), *deleted)) return QueueingHint::kQueue;
  // Or it used a claim of the pod, which may be ReadWriteOncePod (upstream does not read the
  // claim to tell: too slow for a hint).
  ClaimSet claims;
  const Args volumes = host().Volumes(pod);
  for (size_t i = 0; i < volumes.size(); ++i) {
    if (std::optional<std::string> claim_name = ClaimName(volumes.At(i))) {
      claims.insert(std::move(*claim_name));
    }
  }
  return ClaimUses(*deleted, claims) > 0 ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint VolumeRestrictions::ClaimAdded(const Pod& pod,
                                            const schedhost_cluster_event& /*event*/,
                                            const EventObject& /*old_obj*/,
                                            const EventObject& new_obj) const {
  const Args object = new_obj.object(host());
  if (!object.present()) return QueueingHint::kQueue;
  // The claim the pod missed may have been created.
  const storage::Claim claim = storage::DecodeClaim(object);
  return storage::PodUsesClaim(host(), pod, claim, false) ? QueueingHint::kQueue
                                                          : QueueingHint::kSkip;
}

std::span<const schedhost_event_registration> VolumeRestrictions::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      // A pod holding a conflicting disk or the claim going away; spec.volumes is immutable, so
      // pod updates are not registered.
      OnEvent<&VolumeRestrictions::AssignedPodDeleted>(SCHEDHOST_RESOURCE_ASSIGNED_POD,
                                                       SCHEDHOST_ACTION_DELETE),
      // Any new node may fit (upstream has no hint here).
      OnEvent(SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD),
      // The pod's missing claim created.
      OnEvent<&VolumeRestrictions::ClaimAdded>(SCHEDHOST_KIND_EVENT(kClaims),
                                               SCHEDHOST_ACTION_ADD),
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::VolumeRestrictions)
