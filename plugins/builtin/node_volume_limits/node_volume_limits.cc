// NodeVolumeLimits' extension points: PreFilter (the pod's attachable volumes and the
// VolumeAttachments, once per cycle), Filter (the node's CSINode limits against the volumes of
// its pods, its attachments and the new pod), and its cluster events with their hints.
#include "node_volume_limits.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <random>
#include <set>
#include <utility>

namespace schedhost::plugins {
namespace {

using storage::Claim;

// The migratable in-tree plugins, as csi-translation-lib lists them; only the first five are
// ones upstream's isCSIMigrationOn names, so only they are ever counted.
constexpr std::array<InTreePlugin, 7> kInTreePlugins = {{
    {"awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com", true},
    {"gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", true},
    {"azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com", true},
    {"cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org", true},
    {"portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com", true},
    {"azureFile", "kubernetes.io/azure-file", "file.csi.azure.com", false},
    {"vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", false},
}};

// The GCE handle formats, and what stands for an unknown project or zone.
constexpr std::string_view kUnspecified = "UNSPECIFIED";
constexpr std::string_view kZoneDelimiter = "__";
constexpr std::string_view kBetaZoneLabel = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";

// kNotFound names a declared kind in a missing object's message, as upstream's listers do.
constexpr std::array<std::string_view, 6> kNotFound = {
    "persistentvolumeclaim",         "persistentvolume",
    "storageclass.storage.k8s.io",   "csinode.storage.k8s.io",
    "volumeattachment.storage.k8s.io", "csidriver.storage.k8s.io"};

using storage::Quoted;

std::string Cat(std::string_view a, std::string_view sep, std::string_view b) {
  std::string out;
  out.reserve(a.size() + sep.size() + b.size());
  out += a;
  out += sep;
  out += b;
  return out;
}

// Text reads a string field leniently ("" when absent or not a string).
std::string Text(const Args& v) {
  return v.present() && v.kind() == SCHEDHOST_CONFIG_STRING ? v.String("") : std::string();
}

std::vector<std::string> Split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  while (true) {
    const size_t at = s.find(sep);
    out.emplace_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + sep.size());
  }
}

// EbsVolumeId is csi-translation-lib's KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<id>"
// or a bare id.
std::optional<std::string> EbsVolumeId(std::string_view id, std::string* why) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme)) return std::string(id);
  std::string_view rest = id.substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (!path.starts_with("vol-") || path.find('/') != std::string_view::npos) {
    *why = "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (" +
           std::string(id) + ")";
    return std::nullopt;
  }
  return std::string(path);
}

// GceRegion is csi-translation-lib's gceGetRegionFromZones: the one region of
// "<locale>-<region>-<zone>" zones.
std::optional<std::string> GceRegion(const std::vector<std::string>& zones, std::string* why) {
  std::set<std::string> regions;
  for (const std::string& zone : zones) {
    const std::vector<std::string> parts = Split(zone, "-");
    if (parts.size() != 3) {
      *why = "failed to get region from zones: zone in unexpected format, expected: "
             "{locale}-{region}-{zone}, got: " + zone;
      return std::nullopt;
    }
    regions.insert(parts[0] + "-" + parts[1]);
  }
  if (regions.size() != 1) {
    *why = "failed to get region from zones: multiple or no regions gotten from zones";
    return std::nullopt;
  }
  return *regions.begin();
}

std::string GceHandle(std::string_view scope, std::string_view where, std::string_view disk) {
  return "projects/" + std::string(kUnspecified) + "/" + std::string(scope) + "/" +
         std::string(where) + "/disks/" + std::string(disk);
}

using AttachmentIndex = NodeVolumeLimits::AttachmentIndex;

// NewVolumes is how the new pod's volumes count on a node: unique name to driver, the count per
// driver, or the failure of an entry that applies.
struct NewVolumes {
  std::map<std::string, std::string, std::less<>> volumes;
  std::map<std::string, int64_t, std::less<>> per_driver;
  std::optional<Status> failure;
};

// State is the cycle state: the new pod's entries and the attachments by node (or why they
// could not be listed), shared by the state's clones.
struct State {
  std::shared_ptr<const std::vector<NodeVolumeLimits::Entry>> entries;
  // The drivers of the new pod's volumes whose CSIDriver asks to be installed on the node
  // (read once per cycle, not per node), or why they could not be read.
  std::shared_ptr<const std::vector<std::string>> must_be_installed;
  std::shared_ptr<const Status> drivers_failure;
  // The new pod's volumes as they count on a node with a CSINode and on one without.
  std::shared_ptr<const NewVolumes> with_csinode;
  std::shared_ptr<const NewVolumes> without_csinode;
  std::shared_ptr<const AttachmentIndex> attachments;
  std::shared_ptr<const Status> attachments_failure;
  // The revisions of the kinds node facts come from, when the host tells them (abi 1.9).
  std::optional<NodeVolumeLimits::Revisions> revisions;
};

// Apply adds the entries that count on a node (with or without a CSINode) to `out`, unique
// name to driver; the first failure that applies is returned.
std::optional<Status> Apply(const std::vector<NodeVolumeLimits::Entry>& entries, bool has_csinode,
                            std::map<std::string, std::string, std::less<>>& out) {
  for (const NodeVolumeLimits::Entry& e : entries) {
    if (e.needs_csinode && !has_csinode) continue;
    if (e.failure) return e.failure;
    out.insert_or_assign(e.unique, e.driver);
  }
  return std::nullopt;
}

// CountNew is the new pod's volumes on a node with (or without) a CSINode.
NewVolumes CountNew(const std::vector<NodeVolumeLimits::Entry>& entries, bool has_csinode) {
  NewVolumes out;
  if (std::optional<Status> why = Apply(entries, has_csinode, out.volumes)) {
    out.failure = std::move(why);
    return out;
  }
  for (const auto& [unique, driver] : out.volumes) ++out.per_driver[driver];
  return out;
}

std::string RandomPrefix() {
  // Upstream's rand.String alphabet: no vowels, no look-alike digits.
  constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device device;
  std::mt19937_64 gen(device());
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string out(32, ' ');
  for (char& c : out) c = kAlphabet[pick(gen)];
  return out;
}

}  // namespace

std::span<const InTreePlugin> InTreePlugins() { return kInTreePlugins; }

const InTreePlugin* InTreeSourceOf(const Args& source) {
  for (const InTreePlugin& p : kInTreePlugins) {
    if (source[p.source].present()) return &p;
  }
  return nullptr;
}

std::optional<CsiVolume> TranslateInTree(const InTreePlugin& plugin, const Args& source,
                                         bool inline_volume, std::string_view zone_labels,
                                         std::string* why) {
  const Args s = source[plugin.source];
  const std::string driver(plugin.driver);
  if (plugin.source == "awsElasticBlockStore") {
    std::optional<std::string> id = EbsVolumeId(Text(s["volumeID"]), why);
    if (!id) return std::nullopt;
    return CsiVolume{driver, std::move(*id)};
  }
  if (plugin.source == "gcePersistentDisk") {
    const std::string disk = Text(s["pdName"]);
    if (inline_volume) return CsiVolume{driver, GceHandle("zones", kUnspecified, disk)};
    const std::vector<std::string> zones = Split(zone_labels, kZoneDelimiter);
    if (zones.size() == 1 && !zones[0].empty()) {
      return CsiVolume{driver, GceHandle("zones", zones[0], disk)};
    }
    if (zones.size() > 1) {
      std::optional<std::string> region = GceRegion(zones, why);
      if (!region) return std::nullopt;
      return CsiVolume{driver, GceHandle("regions", *region, disk)};
    }
    return CsiVolume{driver, GceHandle("zones", kUnspecified, disk)};
  }
  if (plugin.source == "azureDisk") {
    const std::string kind = Text(s["kind"]);
    std::string lower = kind;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (s["kind"].present() && lower != "managed") {
      *why = "kind(" + kind + ") is not supported in csi migration";
      return std::nullopt;
    }
    return CsiVolume{driver, Text(s["diskURI"])};
  }
  if (plugin.source == "vsphereVolume") return CsiVolume{driver, Text(s["volumePath"])};
  if (plugin.source == "azureFile") {
    // Never counted (migration is off for it); only its driver is ever looked at.
    return CsiVolume{driver, Text(s["shareName"])};
  }
  // cinder, portworxVolume: the volume ID is the handle.
  return CsiVolume{driver, Text(s["volumeID"])};
}

NodeVolumeLimits::NodeVolumeLimits(const Host& host, const Args& args)
    : Plugin(host),
      state_key_(host.Intern("PreFilterNodeVolumeLimits")),
      random_prefix_(RandomPrefix()) {
  args.ExpectNone(kName);
}

Status NodeVolumeLimits::Unavailable(uint32_t kind, std::string_view object) const {
  // The host does not mirror the kind (not served, forbidden): say why, so the user can act.
  std::string why;
  host().KindAvailable(kind, &why);
  if (why.empty()) why = "the host cannot read it";
  return Status::UnschedulableAndUnresolvable("cannot read " + std::string(kKinds[kind].kind) +
                                              (object.empty() ? "s" : " " + std::string(object)) +
                                              ": " + why);
}

std::optional<CsiVolume> NodeVolumeLimits::ClassVolume(const CycleState& state,
                                                       const Claim& claim,
                                                       bool& needs_csinode) const {
  // Without a class the claim binds immediately, so it is bound before scheduling: not counted.
  if (claim.class_name.empty()) return std::nullopt;
  int32_t rc = SCHEDHOST_OK;
  const Args object = host().GetObject(state, kClasses, "", claim.class_name, &rc);
  if (rc != SCHEDHOST_OK || !object.present()) return std::nullopt;
  std::string provisioner;
  try {
    provisioner = storage::DecodeStorageClass(object).provisioner;
  } catch (const ArgsError&) {
    return std::nullopt;
  }
  // A handle of the claim's own, prefixed so it matches no real volume handle.
  std::string handle = random_prefix_ + "-" + claim.namespace_name + "/" + claim.name;
  for (const InTreePlugin& p : kInTreePlugins) {
    if (p.plugin != provisioner) continue;
    if (!p.migration_on) return std::nullopt;
    needs_csinode = true;
    return CsiVolume{std::string(p.driver), std::move(handle)};
  }
  if (provisioner.empty()) return std::nullopt;
  return CsiVolume{std::move(provisioner), std::move(handle)};
}

std::optional<CsiVolume> NodeVolumeLimits::ClaimVolume(const CycleState& state,
                                                       const Claim& claim,
                                                       bool& needs_csinode) const {
  if (claim.volume_name.empty()) return ClassVolume(state, claim, needs_csinode);
  int32_t rc = SCHEDHOST_OK;
  const Args object = host().GetObject(state, kVolumes, "", claim.volume_name, &rc);
  // A volume that is gone, or not created yet for a pre-bound claim: count by the class.
  if (rc != SCHEDHOST_OK || !object.present()) return ClassVolume(state, claim, needs_csinode);
  try {
    const auto decoded = volumes_.Get(claim.volume_name, object, storage::DecodeVolume);
    const storage::Volume& volume = *decoded;
    if (volume.csi) return CsiVolume{volume.csi_driver, volume.csi_volume_handle};
    const InTreePlugin* plugin = InTreeSourceOf(object["spec"]);
    if (plugin == nullptr || !plugin->migration_on) return std::nullopt;
    std::string zones;
    if (auto it = volume.labels.find(kBetaZoneLabel); it != volume.labels.end()) {
      zones = it->second;
    }
    if (zones.empty()) {
      if (auto it = volume.labels.find(kZoneLabel); it != volume.labels.end()) zones = it->second;
    }
    std::string why;
    std::optional<CsiVolume> out = TranslateInTree(*plugin, object["spec"], false, zones, &why);
    if (out) needs_csinode = true;
    return out;  // a volume that does not translate is not counted
  } catch (const ArgsError&) {
    return std::nullopt;
  }
}

std::vector<NodeVolumeLimits::Entry> NodeVolumeLimits::Resolve(const CycleState& state,
                                                              const Pod& pod,
                                                              bool new_pod) const {
  std::vector<Entry> out;
  const Args volumes = host().Volumes(pod);
  const std::string pod_key = Cat(pod.namespace_name(), "/", pod.name());
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Args volume = volumes.At(i);
    const auto name = storage::ClaimNameOf(volume, pod.name());
    if (!name) {
      // An inline in-tree disk counts as its CSI driver's volume where migration is on.
      const InTreePlugin* plugin = InTreeSourceOf(volume);
      if (plugin == nullptr || !plugin->migration_on) continue;
      Entry e;
      e.needs_csinode = true;
      std::string why;
      if (std::optional<CsiVolume> csi = TranslateInTree(*plugin, volume, true, "", &why)) {
        e.unique = csi->driver + "/" + csi->handle;
        e.driver = std::move(csi->driver);
      } else {
        e.failure = Status::Error("converting volume(" + Text(volume["name"]) +
                                  ") from inline to csi: " + why);
      }
      out.push_back(std::move(e));
      continue;
    }
    const auto& [claim_name, ephemeral] = *name;
    auto fail = [&out](Status s) {
      Entry e;
      e.failure = std::move(s);
      out.push_back(std::move(e));
      return out;
    };
    if (claim_name.empty()) return fail(Status::Error("PersistentVolumeClaim had no name"));
    int32_t rc = SCHEDHOST_OK;
    const Args object =
        host().GetObject(state, kClaims, pod.namespace_name(), claim_name, &rc);
    const bool found = rc == SCHEDHOST_OK && object.present();
    if (!found && !new_pod) continue;  // a claim that cannot be read is not counted
    if (!found && (rc == SCHEDHOST_OK || rc == SCHEDHOST_E_NOT_FOUND)) {
      // The pod cannot run without it: it waits until the claim is created.
      return fail(Status::UnschedulableAndUnresolvable(
          "looking up PVC " + Cat(pod.namespace_name(), "/", claim_name) + ": " +
          std::string(kNotFound[kClaims]) + " " + Quoted(claim_name) + " not found"));
    }
    if (!found) return fail(Unavailable(kClaims, Cat(pod.namespace_name(), "/", claim_name)));
    std::shared_ptr<const Claim> decoded;
    try {
      decoded = claims_.Get(Cat(pod.namespace_name(), "/", claim_name), object, storage::DecodeClaim);
    } catch (const ArgsError& e) {
      if (!new_pod) continue;
      return fail(Status::UnschedulableAndUnresolvable(e.what()));
    }
    const Claim& claim = *decoded;
    // An ephemeral volume's claim must be the one made for this pod.
    if (ephemeral && claim.controller_uid != pod.uid()) {
      return fail(Status::Error("PVC " + claim.Key() + " was not created for pod " + pod_key +
                                " (pod is not owner)"));
    }
    bool needs_csinode = false;
    std::optional<CsiVolume> csi = ClaimVolume(state, claim, needs_csinode);
    if (!csi || csi->driver.empty() || csi->handle.empty()) continue;
    Entry e;
    e.unique = csi->driver + "/" + csi->handle;
    e.driver = std::move(csi->driver);
    e.needs_csinode = needs_csinode;
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<Status> NodeVolumeLimits::MustBeInstalled(const CycleState& state,
                                                        const std::vector<Entry>& entries,
                                                        std::vector<std::string>& out) const {
  std::set<std::string_view> seen;
  for (const Entry& e : entries) {
    if (e.failure || !seen.insert(e.driver).second) continue;
    int32_t rc = SCHEDHOST_OK;
    const Args object = host().GetObject(state, kDrivers, "", e.driver, &rc);
    if (rc != SCHEDHOST_OK && rc != SCHEDHOST_E_NOT_FOUND) return Unavailable(kDrivers, e.driver);
    // Without a CSIDriver object the driver may not be a CSI driver: nothing to require.
    if (object.present() && storage::CSIDriverPreventsSchedulingIfMissing(object)) {
      out.push_back(e.driver);
    }
  }
  return std::nullopt;
}

std::optional<Status> NodeVolumeLimits::Attachments(const CycleState& state,
                                                    AttachmentIndex& out) const {
  const int32_t rc = host().ListObjects(state, kAttachments, "", [&out](const Args& object) {
    try {
      storage::VolumeAttachment va = storage::DecodeVolumeAttachment(object);
      // Without an attacher or a PersistentVolume it is not counted.
      if (va.attacher.empty() || !va.persistent_volume_name) return true;
      out[va.node_name].push_back({std::move(va.attacher), std::move(*va.persistent_volume_name)});
    } catch (const ArgsError&) {
      // An attachment that does not decode is not counted.
    }
    return true;
  });
  if (rc != SCHEDHOST_OK) return Unavailable(kAttachments, "");
  return std::nullopt;
}

Status NodeVolumeLimits::PreFilter(CycleState& state, const Pod& pod,
                                   PreFilterResult& /*result*/) {
  const Args volumes = host().Volumes(pod);
  bool relevant = false;
  for (size_t i = 0; i < volumes.size() && !relevant; ++i) {
    const Args v = volumes.At(i);
    relevant = v["persistentVolumeClaim"].present() || v["ephemeral"].present() ||
               InTreeSourceOf(v) != nullptr;
  }
  if (!relevant) return Status::Skip();
  State s;
  s.entries = std::make_shared<const std::vector<Entry>>(Resolve(state, pod, true));
  s.with_csinode = std::make_shared<const NewVolumes>(CountNew(*s.entries, true));
  s.without_csinode = std::make_shared<const NewVolumes>(CountNew(*s.entries, false));
  auto required = std::make_shared<std::vector<std::string>>();
  if (std::optional<Status> why = MustBeInstalled(state, *s.entries, *required)) {
    s.drivers_failure = std::make_shared<const Status>(std::move(*why));
  } else {
    s.must_be_installed = std::move(required);
  }
  NodeVolumeLimits::Revisions revisions{};
  const uint32_t kinds[] = {kClaims, kVolumes, kClasses, kCSINodes, kAttachments};
  bool known = true;
  for (size_t i = 0; i < revisions.size() && known; ++i) {
    const std::optional<uint64_t> r = host().KindRevision(state, kinds[i]);
    known = r.has_value();
    revisions[i] = r.value_or(0);
  }
  if (known) s.revisions = revisions;
  // The attachments are listed again only when one of them changed.
  const uint64_t attachments_revision = known ? revisions[4] : 0;
  {
    std::lock_guard lock(attachments_mu_);
    if (attachments_revision != 0 && attachments_revision == attachments_revision_) {
      s.attachments = attachments_;
    }
  }
  if (!s.attachments) {
    auto index = std::make_shared<AttachmentIndex>();
    if (std::optional<Status> why = Attachments(state, *index)) {
      s.attachments_failure = std::make_shared<const Status>(std::move(*why));
    } else {
      s.attachments = std::move(index);
      if (attachments_revision != 0) {
        std::lock_guard lock(attachments_mu_);
        attachments_revision_ = attachments_revision;
        attachments_ = s.attachments;
      }
    }
  }
  state.Write(state_key_, std::make_unique<State>(std::move(s)));
  return {};
}

NodeVolumeLimits::FactsCache::~FactsCache() {
  for (std::atomic<Chunk*>& chunk : chunks_) delete chunk.load();
}

std::shared_ptr<const NodeVolumeLimits::NodeFacts> NodeVolumeLimits::FactsCache::Get(
    Id node) const {
  if (node / kChunkSlots >= kChunks) return nullptr;
  const Chunk* chunk = chunks_[node / kChunkSlots].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr
                          : chunk->slots[node % kChunkSlots].load(std::memory_order_acquire);
}

void NodeVolumeLimits::FactsCache::Put(Id node, std::shared_ptr<const NodeFacts> facts) {
  if (node / kChunkSlots >= kChunks) return;
  std::atomic<Chunk*>& slot = chunks_[node / kChunkSlots];
  Chunk* chunk = slot.load(std::memory_order_acquire);
  if (chunk == nullptr) {
    auto made = std::make_unique<Chunk>();
    if (slot.compare_exchange_strong(chunk, made.get(), std::memory_order_acq_rel)) {
      chunk = made.release();
    }  // else another thread's chunk won, and `chunk` holds it
  }
  chunk->slots[node % kChunkSlots].store(std::move(facts), std::memory_order_release);
}

std::shared_ptr<const NodeVolumeLimits::NodeFacts> NodeVolumeLimits::FactsFor(
    const CycleState& state, const NodeInfo& ni, const std::optional<Revisions>& revisions,
    const AttachmentIndex* index) const {
  const bool keep = revisions.has_value() && index != nullptr;
  const Id id = ni.node().name_id();
  if (keep) {
    std::shared_ptr<const NodeFacts> kept = facts_.Get(id);
    if (kept && kept->generation == ni.generation() && kept->revisions == *revisions) {
      return kept;
    }
  }
  auto facts = std::make_shared<NodeFacts>(ComputeFacts(state, ni, index));
  if (keep) {
    facts->generation = ni.generation();
    facts->revisions = *revisions;
    facts_.Put(id, facts);
  }
  return facts;
}

NodeVolumeLimits::NodeFacts NodeVolumeLimits::ComputeFacts(const CycleState& state,
                                                           const NodeInfo& ni,
                                                           const AttachmentIndex* index) const {
  NodeFacts out;
  static const auto kNoDrivers = std::make_shared<const std::vector<storage::CSINodeDriver>>();
  out.drivers = kNoDrivers;
  const std::string_view node_name = ni.node().name();
  // The node's CSINode: missing (or unreadable) is a node without limits and without
  // migration, as upstream.
  int32_t rc = SCHEDHOST_OK;
  const Args csinode_object = host().GetObject(state, kCSINodes, "", node_name, &rc);
  out.has_csinode = rc == SCHEDHOST_OK && csinode_object.present();
  if (out.has_csinode) {
    try {
      out.drivers = csinodes_.Get(node_name, csinode_object, storage::DecodeCSINodeDrivers);
    } catch (const ArgsError& e) {
      out.csinode_failure = Status::Error(e.what());
      return out;
    }
  }
  out.any_limit = std::any_of(out.drivers->begin(), out.drivers->end(), [](const auto& d) {
    return d.allocatable_count.has_value();
  });
  if (!out.any_limit) return out;

  // The volumes of the pods on the node: one volume used by several pods counts once.
  for (const Pod existing : ni.pods()) {
    if (std::optional<Status> why =
            Apply(Resolve(state, existing, false), out.has_csinode, out.attached)) {
      out.pods_failure = std::move(why);
      return out;
    }
  }
  for (const auto& [unique, driver] : out.attached) ++out.attached_count[driver];
  if (index == nullptr) return out;

  // The node's VolumeAttachments, less the volumes its pods already count.
  std::set<std::string, std::less<>> attachments;
  if (auto it = index->find(node_name); it != index->end()) {
    for (const Attachment& a : it->second) {
      const Args object = host().GetObject(state, kVolumes, "", a.volume, &rc);
      if (rc != SCHEDHOST_OK || !object.present()) continue;
      try {
        const auto decoded = volumes_.Get(a.volume, object, storage::DecodeVolume);
        const storage::Volume& volume = *decoded;
        if (!volume.csi) continue;
        std::string unique = a.attacher + "/" + volume.csi_volume_handle;
        if (out.attached.contains(unique) || !attachments.insert(std::move(unique)).second) {
          continue;
        }
        ++out.attached_count[a.attacher];
      } catch (const ArgsError&) {
        continue;
      }
    }
  }
  return out;
}

Status NodeVolumeLimits::Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) {
  // A pod without volumes always fits.
  if (!host().Volumes(pod).present()) return {};
  const State* s = state.Read<State>(state_key_);
  State computed;
  if (s == nullptr || !s->entries) {
    // Without PreFilter's state (a caller that skipped it), compute it here.
    computed.entries = std::make_shared<const std::vector<Entry>>(Resolve(state, pod, true));
    s = &computed;
  }
  AttachmentIndex listed;
  const AttachmentIndex* index = s->attachments.get();
  if (index == nullptr && !s->attachments_failure) {
    if (std::optional<Status> why = Attachments(state, listed)) {
      computed.attachments_failure = std::make_shared<const Status>(std::move(*why));
    } else {
      index = &listed;
    }
  }
  const Status* attachments_failure =
      s->attachments_failure ? s->attachments_failure.get() : computed.attachments_failure.get();

  const std::shared_ptr<const NodeFacts> facts = FactsFor(state, ni, s->revisions, index);
  if (facts->csinode_failure) return *facts->csinode_failure;
  const std::vector<storage::CSINodeDriver>& drivers = *facts->drivers;

  // The new pod's volumes, as they count on a node with or without a CSINode (the same for
  // every such node: worked out once per cycle).
  const NewVolumes* nv = facts->has_csinode ? s->with_csinode.get() : s->without_csinode.get();
  NewVolumes counted;
  if (nv == nullptr) {
    counted = CountNew(*s->entries, facts->has_csinode);
    nv = &counted;
  }
  if (nv->failure) return *nv->failure;
  if (nv->volumes.empty()) return {};

  // A driver that asks for it must be installed on the node (VolumeLimitScaling, on by
  // default in v1.37): listed in the node's CSINode.
  if (s->drivers_failure) return *s->drivers_failure;
  std::vector<std::string> listed_drivers;
  const std::vector<std::string>* required = s->must_be_installed.get();
  if (required == nullptr) {
    if (std::optional<Status> why = MustBeInstalled(state, *s->entries, listed_drivers)) {
      return std::move(*why);
    }
    required = &listed_drivers;
  }
  for (const std::string& driver : *required) {
    if (std::none_of(nv->volumes.begin(), nv->volumes.end(),
                     [&driver](const auto& v) { return v.second == driver; })) {
      continue;  // only a migrated volume needs it, and this node has no CSINode
    }
    if (std::none_of(drivers.begin(), drivers.end(),
                     [&driver](const storage::CSINodeDriver& d) { return d.name == driver; })) {
      return Status::Unschedulable(driver + " CSI driver is not installed on the node");
    }
  }

  // The node's limits: a driver without allocatable.count has none.
  if (!facts->any_limit) return {};
  if (facts->pods_failure) return *facts->pods_failure;
  if (attachments_failure != nullptr) return *attachments_failure;
  const auto limit_of = [&drivers](std::string_view driver) -> std::optional<int64_t> {
    for (const storage::CSINodeDriver& d : drivers) {
      if (d.name == driver) return d.allocatable_count;
    }
    return std::nullopt;
  };

  // The new pod's volumes not already on the node, per driver, against the driver's limit.
  for (const auto& [driver, count] : nv->per_driver) {
    const std::optional<int64_t> limit = limit_of(driver);
    if (!limit) continue;
    auto current = facts->attached_count.find(driver);
    const int64_t have = current == facts->attached_count.end() ? 0 : current->second;
    if (have + count <= *limit) continue;  // fits even were none of them on the node yet
    int64_t added = count;
    if (!facts->attached.empty()) {
      for (const auto& [unique, d] : nv->volumes) {
        if (d == driver && facts->attached.contains(unique)) --added;
      }
    }
    // Every volume of the driver is on the node already: nothing to attach, nothing to check,
    // however many the node holds.
    if (added == 0) continue;
    if (have + added > *limit) {
      return Status::Unschedulable(Status::Static{kErrReasonMaxVolumeCountExceeded});
    }
  }
  return {};
}

QueueingHint NodeVolumeLimits::CSINodeUpdated(const Pod& /*pod*/,
                                              const schedhost_cluster_event& /*event*/,
                                              const EventObject& old_obj,
                                              const EventObject& new_obj) const {
  const Args before = old_obj.object(host());
  const Args after = new_obj.object(host());
  if (!before.present() || !after.present()) return QueueingHint::kQueue;
  try {
    // A driver whose limit rose (an unset count is 0) may make room.
    std::map<std::string, int64_t, std::less<>> old_limits;
    for (const storage::CSINodeDriver& d : storage::DecodeCSINodeDrivers(before)) {
      old_limits.insert_or_assign(d.name, d.allocatable_count.value_or(0));
    }
    for (const storage::CSINodeDriver& d : storage::DecodeCSINodeDrivers(after)) {
      auto it = old_limits.find(d.name);
      const int64_t old_limit = it == old_limits.end() ? 0 : it->second;
      if (d.allocatable_count.value_or(0) > old_limit) return QueueingHint::kQueue;
    }
  } catch (const ArgsError&) {
    return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

QueueingHint NodeVolumeLimits::AssignedPodDeleted(const Pod& /*pod*/,
                                                  const schedhost_cluster_event& /*event*/,
                                                  const EventObject& old_obj,
                                                  const EventObject& /*new_obj*/) const {
  const std::optional<Pod> deleted = old_obj.pod();
  if (!deleted) return QueueingHint::kQueue;
  const Args volumes = host().Volumes(*deleted);
  if (!volumes.present() || volumes.size() == 0) return QueueingHint::kSkip;
  if (deleted->node_name().empty() && deleted->nominated_node_name().empty()) {
    return QueueingHint::kSkip;
  }
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Args v = volumes.At(i);
    if (v["persistentVolumeClaim"].present() || v["ephemeral"].present() ||
        InTreeSourceOf(v) != nullptr) {
      return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

QueueingHint NodeVolumeLimits::ClaimAdded(const Pod& pod, const schedhost_cluster_event& /*event*/,
                                          const EventObject& /*old_obj*/,
                                          const EventObject& new_obj) const {
  const Args object = new_obj.object(host());
  if (!object.present()) return QueueingHint::kQueue;
  Claim claim;
  try {
    claim = storage::DecodeClaim(object);
  } catch (const ArgsError&) {
    return QueueingHint::kQueue;
  }
  return storage::PodUsesClaim(host(), pod, claim, /*ephemeral=*/true) ? QueueingHint::kQueue
                                                                       : QueueingHint::kSkip;
}

QueueingHint NodeVolumeLimits::AttachmentDeleted(const Pod& pod,
                                                 const schedhost_cluster_event& /*event*/,
                                                 const EventObject& old_obj,
                                                 const EventObject& /*new_obj*/) const {
  const Args object = old_obj.object(host());
  if (!object.present()) return QueueingHint::kQueue;
  storage::VolumeAttachment va;
  try {
    va = storage::DecodeVolumeAttachment(object);
  } catch (const ArgsError&) {
    return QueueingHint::kQueue;
  }
  const Args volumes = host().Volumes(pod);
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Args v = volumes.At(i);
    // Any claim may be the volume that was attached (ephemeral volumes are not looked at, as
    // upstream).
    if (v["persistentVolumeClaim"].present()) return QueueingHint::kQueue;
    const InTreePlugin* plugin = InTreeSourceOf(v);
    if (plugin == nullptr) continue;
    std::string why;
    const std::optional<CsiVolume> csi = TranslateInTree(*plugin, v, true, "", &why);
    if (!csi || csi->driver == va.attacher) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

std::span<const schedhost_event_registration> NodeVolumeLimits::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      // Any new CSINode may make room (upstream has no hint here).
      OnEvent(SCHEDHOST_KIND_EVENT(kCSINodes), SCHEDHOST_ACTION_ADD),
      OnEvent<&NodeVolumeLimits::CSINodeUpdated>(SCHEDHOST_KIND_EVENT(kCSINodes),
                                                 SCHEDHOST_ACTION_UPDATE),
      OnEvent<&NodeVolumeLimits::AssignedPodDeleted>(SCHEDHOST_RESOURCE_ASSIGNED_POD,
                                                     SCHEDHOST_ACTION_DELETE),
      OnEvent<&NodeVolumeLimits::ClaimAdded>(SCHEDHOST_KIND_EVENT(kClaims), SCHEDHOST_ACTION_ADD),
      OnEvent<&NodeVolumeLimits::AttachmentDeleted>(SCHEDHOST_KIND_EVENT(kAttachments),
                                                    SCHEDHOST_ACTION_DELETE),
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeVolumeLimits)
