// Builds schedhost_pod_view for Pod: every array points into the pod's arena or data.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host/model/decode.h"
#include "host/model/interner.h"
#include "host/model/pod.h"
#include "host/model/pod_pack.h"
#include "host/model/view_convert.h"

namespace schedhost::model {
namespace {

using internal::kEmptyText;
using internal::ToStr;
using internal::ViewArena;

schedhost_pod_affinity_term ConvertPodAffinityTerm(const PodAffinityTerm& term, int32_t weight,
                                                   ViewArena& arena) {
  schedhost_pod_affinity_term out{};
  out.label_selector = internal::ConvertSelector(term.label_selector, arena);
  out.namespaces = internal::InternList(term.namespaces, arena);
  out.namespaces_len = term.namespaces.size();
  out.namespace_selector = internal::ConvertSelector(term.namespace_selector, arena);
  out.topology_key = Interner::Global().Intern(term.topology_key);
  out.weight = weight;
  out.match_label_keys = internal::InternList(term.match_label_keys, arena);
  out.match_label_keys_len = term.match_label_keys.size();
  out.mismatch_label_keys = internal::InternList(term.mismatch_label_keys, arena);
  out.mismatch_label_keys_len = term.mismatch_label_keys.size();
  return out;
}

schedhost_pod_affinity_terms ConvertPodAffinity(const std::optional<PodAffinity>& affinity,
                                                ViewArena& arena) {
  schedhost_pod_affinity_terms out{};
  if (!affinity) return out;
  auto* required = arena.Array<schedhost_pod_affinity_term>(affinity->required.size());
  for (size_t i = 0; i < affinity->required.size(); ++i) {
    required[i] = ConvertPodAffinityTerm(affinity->required[i], 0, arena);
  }
  auto* preferred = arena.Array<schedhost_pod_affinity_term>(affinity->preferred.size());
  for (size_t i = 0; i < affinity->preferred.size(); ++i) {
    const WeightedPodAffinityTerm& w = affinity->preferred[i];
    preferred[i] = ConvertPodAffinityTerm(w.pod_affinity_term, w.weight, arena);
  }
  out.required = required;
  out.required_len = affinity->required.size();
  out.preferred = preferred;
  out.preferred_len = affinity->preferred.size();
  return out;
}

const schedhost_affinity* ConvertAffinity(const Box<Affinity>& affinity, ViewArena& arena) {
  if (!affinity) return nullptr;
  auto* out = arena.One<schedhost_affinity>();
  if (const auto& node = affinity->node_affinity) {
    if (node->required) {
      const auto& terms = node->required->node_selector_terms;
      auto* items = arena.Array<schedhost_node_selector_term>(terms.size());
      for (size_t i = 0; i < terms.size(); ++i) {
        items[i] = internal::ConvertNodeSelectorTerm(terms[i], arena);
      }
      out->has_required_node_affinity = 1;
      out->required_node_terms = items;
      out->required_node_terms_len = terms.size();
    }
    auto* preferred = arena.Array<schedhost_preferred_term>(node->preferred.size());
    for (size_t i = 0; i < node->preferred.size(); ++i) {
      preferred[i].weight = node->preferred[i].weight;
      preferred[i].term = internal::ConvertNodeSelectorTerm(node->preferred[i].preference, arena);
    }
    out->preferred_node_terms = preferred;
    out->preferred_node_terms_len = node->preferred.size();
  }
  out->pod_affinity = ConvertPodAffinity(affinity->pod_affinity, arena);
  out->pod_anti_affinity = ConvertPodAffinity(affinity->pod_anti_affinity, arena);
  return out;
}

int32_t PolicyValue(const std::optional<NodeInclusionPolicy>& policy) {
  return policy ? static_cast<int32_t>(*policy) : SCHEDHOST_POLICY_UNSET;
}

size_t Padded(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

// KeptTextBytes is what the strings the view keeps copies of take, end to end.
size_t KeptTextBytes(const ObjectMeta& meta, const PodSpec& spec,
                     const std::vector<std::string>& images,
                     const std::vector<std::string>& gates) {
  size_t bytes = meta.name.size() + meta.uid.size();
  for (const std::string& image : images) bytes += image.size();
  for (const Container& c : spec.containers) {
    for (const ContainerPort& p : c.ports) bytes += p.host_port > 0 ? p.host_ip.size() : 0;
  }
  for (const std::string& gate : gates) bytes += gate.size();
  for (const auto& [key, value] : meta.annotations) bytes += key.size() + value.size();
  for (const OwnerReference& ref : meta.owner_references) {
    bytes += ref.kind.size() + ref.name.size() + ref.uid.size();
  }
  return bytes;
}

// ReserveBytes is what the view's flat arrays and `chars` (the packed state and the kept
// strings, one run of bytes) take: one block holds them all, with no room to spare (the arrays'
// sizes are multiples of 8). (Affinity and spread constraints' selectors, rarer, get blocks of
// their own.)
size_t ReserveBytes(const ObjectMeta& meta, const PodSpec& spec, size_t images, size_t gates,
                    size_t requests, size_t host_ports, size_t chars) {
  return Padded(chars) + Padded(meta.labels.size() * sizeof(schedhost_label)) +
         Padded(meta.annotations.size() * sizeof(schedhost_annotation)) +
         Padded(meta.owner_references.size() * sizeof(schedhost_owner_ref)) +
         Padded(spec.node_selector.size() * sizeof(schedhost_label)) +
         Padded(spec.tolerations.size() * sizeof(schedhost_toleration)) +
         Padded(spec.topology_spread_constraints.size() * sizeof(schedhost_spread_constraint)) +
         Padded(requests * sizeof(schedhost_resource)) +
         Padded(host_ports * sizeof(schedhost_host_port)) + Padded(images * sizeof(schedhost_str)) +
         Padded(gates * sizeof(schedhost_str));
}

// VolumesTree is the view's `volumes`: the volumes some need names, as an array of the entries
// (their JSON kept with the need's source), located at the pod; nullptr when there are none.
std::unique_ptr<ValueNode> VolumesTree(const std::vector<PodNeed>& needs, const ObjectMeta& meta) {
  std::unique_ptr<ValueNode> out;
  for (const PodNeed& need : needs) {
    if (need.source.empty() || !need.part.starts_with("spec.volumes.")) continue;
    if (!out) {
      out = std::make_unique<ValueNode>();
      out->kind = SCHEDHOST_CONFIG_ARRAY;
      out->location = "Pod " + meta.namespace_name + "/" + meta.name;
    }
    out->children.push_back(ValueTreeFromJson(need.source, out->location));
  }
  return out;
}

}  // namespace

void Pod::BuildView(const ObjectMeta& meta, PodSpec& spec, PodStatus& status,
                    const PodResources& resources) {
  Interner& interner = Interner::Global();
  schedhost_pod_view& v = base_view;
  // Host ports come from app containers only, as upstream's NodePorts counts them.
  size_t port_count = 0;
  for (const Container& c : spec.containers) {
    for (const ContainerPort& p : c.ports) port_count += p.host_port > 0 ? 1 : 0;
  }
  // Names shared by many pods (schedulers, priority classes, nodes) are interned, and kept
  // only in the view: data() reads them back from there, so the packed state leaves them out.
  const auto interned = [&interner](std::string& s) {
    const std::string_view text = s.empty() ? std::string_view() : interner.Str(interner.Intern(s));
    s.clear();
    return text.empty() ? ToStr(kEmptyText) : ToStr(text);
  };
  v.scheduler_name = interned(spec.scheduler_name);
  v.nominated_node_name = interned(status.nominated_node_name);
  v.priority_class_name = interned(spec.priority_class_name);
  v.node_name = interned(spec.node_name);
  // Container images and scheduling gates are kept only in the view too, as copies in the
  // arena: data() puts them back in order.
  std::vector<std::string> images;
  images.reserve(spec.init_containers.size() + spec.containers.size());
  for (auto* list : {&spec.init_containers, &spec.containers}) {
    for (Container& c : *list) images.push_back(std::exchange(c.image, {}));
  }
  const std::vector<std::string> gates = std::exchange(spec.scheduling_gates, {});
  // The rest of the spec and status is kept only packed, so the view's other strings from
  // them are copies in the arena, as are the metadata's (but the namespace, interned).
  const std::string packed = internal::PackPodState(spec, status, meta.owner_references);
  if (packed.empty() || packed.size() > kPackedLengthMask) {
    throw std::logic_error("a pod's packed state must take 1 byte to 2 GiB");
  }
  const size_t text_bytes = KeptTextBytes(meta, spec, images, gates);
  const size_t chars = sizeof(uint32_t) + packed.size() + text_bytes;
  internal::ExactViewArena arena(blocks_);
  arena.Reserve(ReserveBytes(meta, spec, images.size(), gates.size(), resources.requests.size(),
                             port_count, chars));
  // First in the first block, where packed() finds them: the packed state's length and bytes,
  // then the strings the view keeps, end to end (no padding between them).
  auto* length = arena.One<uint32_t>();
  // The top bit of the length says whether the pod has parts a plugin must evaluate, so
  // HasNeeds reads one word instead of unpacking the spec.
  *length = static_cast<uint32_t>(packed.size()) | (spec.needs.empty() ? 0 : kHasNeedsBit);
  char* text = arena.Array<char>(packed.size() + text_bytes);
  if (reinterpret_cast<const std::byte*>(length) != blocks_.first()) {
    throw std::logic_error("a pod's packed state is not first in its first block");
  }
  text = std::copy(packed.begin(), packed.end(), text);
  const char* const text_end = text + text_bytes;
  const auto keep = [&text, text_end](std::string_view s) {
    if (s.empty()) return ToStr(kEmptyText);
    if (s.size() > static_cast<size_t>(text_end - text)) {
      throw std::logic_error("a pod's view keeps a string KeptTextBytes did not count");
    }
    const schedhost_str out{text, s.size()};
    text = std::copy(s.begin(), s.end(), text);
    return out;
  };
  v.struct_size = sizeof(schedhost_pod_view);
  v.name = keep(meta.name);
  v.namespace_id = interner.Intern(meta.namespace_name);
  const std::string_view namespace_text = interner.Str(v.namespace_id);
  v.namespace_name = ToStr(namespace_text.empty() ? kEmptyText : namespace_text);
  v.priority = spec.priority.value_or(0);
  v.uid = keep(meta.uid);
  v.creation_timestamp_ns = meta.creation_timestamp_ns;
  v.resource_version = meta.resource_version;
  v.labels = internal::ConvertLabels(meta.labels, arena);

  auto* annotations = arena.Array<schedhost_annotation>(meta.annotations.size());
  for (size_t i = 0; i < meta.annotations.size(); ++i) {
    annotations[i] = {keep(meta.annotations[i].first), keep(meta.annotations[i].second)};
  }
  v.annotations = annotations;
  v.annotations_len = meta.annotations.size();

  auto* owners = arena.Array<schedhost_owner_ref>(meta.owner_references.size());
  for (size_t i = 0; i < meta.owner_references.size(); ++i) {
    const OwnerReference& ref = meta.owner_references[i];
    owners[i].kind = keep(ref.kind);
    owners[i].name = keep(ref.name);
    owners[i].uid = keep(ref.uid);
    owners[i].controller = ref.controller ? 1 : 0;
  }
  v.owner_refs = owners;
  v.owner_refs_len = meta.owner_references.size();

  v.node_selector = internal::ConvertLabelMap(spec.node_selector, arena);
  v.affinity = ConvertAffinity(spec.affinity, arena);

  auto* tolerations = arena.Array<schedhost_toleration>(spec.tolerations.size());
  for (size_t i = 0; i < spec.tolerations.size(); ++i) {
    const Toleration& t = spec.tolerations[i];
    tolerations[i].key = interner.Intern(t.key);
    tolerations[i].value = interner.Intern(t.value);
    tolerations[i].op = static_cast<int32_t>(t.op);
    tolerations[i].effect = static_cast<int32_t>(t.effect);
    // Upstream treats zero and negative seconds alike (evict at once); -1 is reserved for unset.
    tolerations[i].toleration_seconds =
        t.toleration_seconds ? std::max<int64_t>(*t.toleration_seconds, 0) : -1;
  }
  v.tolerations = tolerations;
  v.tolerations_len = spec.tolerations.size();

  const auto& constraints = spec.topology_spread_constraints;
  auto* spread = arena.Array<schedhost_spread_constraint>(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i) {
    const TopologySpreadConstraint& c = constraints[i];
    spread[i].max_skew = c.max_skew;
    spread[i].when_unsatisfiable = static_cast<int32_t>(c.when_unsatisfiable);
    spread[i].topology_key = interner.Intern(c.topology_key);
    spread[i].min_domains = c.min_domains.value_or(0);
    spread[i].label_selector = internal::ConvertSelector(c.label_selector, arena);
    spread[i].node_affinity_policy = PolicyValue(c.node_affinity_policy);
    spread[i].node_taints_policy = PolicyValue(c.node_taints_policy);
    spread[i].match_label_keys = internal::InternList(c.match_label_keys, arena);
    spread[i].match_label_keys_len = c.match_label_keys.size();
  }
  v.spread_constraints = spread;
  v.spread_constraints_len = constraints.size();

  auto* requests = arena.Array<schedhost_resource>(resources.requests.size());
  std::copy(resources.requests.begin(), resources.requests.end(), requests);
  v.requests = schedhost_resources{requests, resources.requests.size()};
  v.non_zero_milli_cpu = resources.non_zero_milli_cpu;
  v.non_zero_memory = resources.non_zero_memory;

  auto* ports = arena.Array<schedhost_host_port>(port_count);
  size_t next_port = 0;
  for (const Container& c : spec.containers) {
    for (const ContainerPort& p : c.ports) {
      if (p.host_port <= 0) continue;
      ports[next_port++] = {ProtocolId(p.protocol), p.host_port, keep(p.host_ip)};
    }
  }
  v.host_ports = ports;
  v.host_ports_len = port_count;

  // Images: init containers first, then app containers, as upstream's ImageLocality sums them.
  auto* image_strs = arena.Array<schedhost_str>(images.size());
  for (size_t i = 0; i < images.size(); ++i) image_strs[i] = keep(images[i]);
  v.images = image_strs;
  v.images_len = images.size();

  auto* gate_strs = arena.Array<schedhost_str>(gates.size());
  for (size_t i = 0; i < gates.size(); ++i) gate_strs[i] = keep(gates[i]);
  v.scheduling_gates = gate_strs;
  v.scheduling_gates_len = gates.size();

  v.preemption_policy = static_cast<int32_t>(
      spec.preemption_policy.value_or(PreemptionPolicy::kPreemptLowerPriority));

  // Last, so that nothing above can throw once the tree is owned by the view (~Pod frees it).
  v.volumes = reinterpret_cast<const schedhost_config*>(VolumesTree(spec.needs, meta).release());
}

}  // namespace schedhost::model
