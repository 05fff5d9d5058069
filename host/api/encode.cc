// EncodeJson: model objects as Kubernetes JSON, mirroring host/model/decode*.cc field by field.
#include "host/api/encode.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "host/model/meta.h"

namespace schedhost::api {
namespace {

using Json = nlohmann::ordered_json;

struct Options {
  bool identity = true;  // uid, resourceVersion, creationTimestamp
};

void PutString(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

void PutStrings(Json& j, const char* key, const std::vector<std::string>& values) {
  if (!values.empty()) j[key] = values;
}

Json LabelMap(const model::Labels& labels) {
  Json j = Json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j;
}

Json Metadata(const model::ObjectMeta& m, const Options& o) {
  Json j = Json::object();
  j["name"] = m.name;
  PutString(j, "namespace", m.namespace_name);
  if (o.identity) {
    PutString(j, "uid", m.uid);
    if (m.resource_version != 0) j["resourceVersion"] = std::to_string(m.resource_version);
    if (m.creation_timestamp_ns != 0) {
      j["creationTimestamp"] = model::FormatRfc3339(m.creation_timestamp_ns);
    }
  }
  if (!m.labels.empty()) j["labels"] = LabelMap(m.labels);
  if (!m.annotations.empty()) j["annotations"] = LabelMap(m.annotations);
  if (!m.owner_references.empty()) {
    Json refs = Json::array();
    for (const model::OwnerReference& r : m.owner_references) {
      Json ref = Json::object();
      PutString(ref, "apiVersion", r.api_version);
      PutString(ref, "kind", r.kind);
      PutString(ref, "name", r.name);
      PutString(ref, "uid", r.uid);
      if (r.controller) ref["controller"] = true;
      refs.push_back(std::move(ref));
    }
    j["ownerReferences"] = std::move(refs);
  }
  return j;
}

Json Resources(const model::ResourceList& list) {
  Json j = Json::object();
  for (const auto& [name, q] : list) j[name] = q.ToString();
  return j;
}

Json Requirements(const std::vector<model::SelectorRequirement>& reqs) {
  Json a = Json::array();
  for (const model::SelectorRequirement& r : reqs) {
    Json j = Json::object();
    j["key"] = r.key;
    j["operator"] = std::string(model::ToString(r.op));
    PutStrings(j, "values", r.values);
    a.push_back(std::move(j));
  }
  return a;
}

Json Selector(const model::LabelSelector& s) {
  Json j = Json::object();
  if (!s.match_labels.empty()) {
    Json m = Json::object();
    for (const auto& [k, v] : s.match_labels) m[k] = v;
    j["matchLabels"] = std::move(m);
  }
  if (!s.match_expressions.empty()) j["matchExpressions"] = Requirements(s.match_expressions);
  return j;
}

Json Term(const model::NodeSelectorTerm& t) {
  Json j = Json::object();
  if (!t.match_expressions.empty()) j["matchExpressions"] = Requirements(t.match_expressions);
  if (!t.match_fields.empty()) j["matchFields"] = Requirements(t.match_fields);
  return j;
}

Json AffinityTerm(const model::PodAffinityTerm& t) {
  Json j = Json::object();
  if (t.label_selector) j["labelSelector"] = Selector(*t.label_selector);
  PutStrings(j, "namespaces", t.namespaces);
  j["topologyKey"] = t.topology_key;
  if (t.namespace_selector) j["namespaceSelector"] = Selector(*t.namespace_selector);
  PutStrings(j, "matchLabelKeys", t.match_label_keys);
  PutStrings(j, "mismatchLabelKeys", t.mismatch_label_keys);
  return j;
}

Json PodAffinity(const model::PodAffinity& a) {
  Json j = Json::object();
  if (!a.required.empty()) {
    Json r = Json::array();
    for (const model::PodAffinityTerm& t : a.required) r.push_back(AffinityTerm(t));
    j["requiredDuringSchedulingIgnoredDuringExecution"] = std::move(r);
  }
  if (!a.preferred.empty()) {
    Json p = Json::array();
    for (const model::WeightedPodAffinityTerm& t : a.preferred) {
      p.push_back(Json{{"weight", t.weight}, {"podAffinityTerm", AffinityTerm(t.pod_affinity_term)}});
    }
    j["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(p);
  }
  return j;
}

Json Affinity(const model::Affinity& a) {
  Json j = Json::object();
  if (a.node_affinity) {
    Json n = Json::object();
    if (a.node_affinity->required) {
      Json terms = Json::array();
      for (const auto& t : a.node_affinity->required->node_selector_terms) terms.push_back(Term(t));
      n["requiredDuringSchedulingIgnoredDuringExecution"] = Json{{"nodeSelectorTerms", terms}};
    }
    if (!a.node_affinity->preferred.empty()) {
      Json p = Json::array();
      for (const model::PreferredSchedulingTerm& t : a.node_affinity->preferred) {
        p.push_back(Json{{"weight", t.weight}, {"preference", Term(t.preference)}});
      }
      n["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(p);
    }
    j["nodeAffinity"] = std::move(n);
  }
  if (a.pod_affinity) j["podAffinity"] = PodAffinity(*a.pod_affinity);
  if (a.pod_anti_affinity) j["podAntiAffinity"] = PodAffinity(*a.pod_anti_affinity);
  return j;
}

Json Toleration(const model::Toleration& t) {
  Json j = Json::object();
  PutString(j, "key", t.key);
  j["operator"] = std::string(model::ToString(t.op));
  PutString(j, "value", t.value);
  if (t.effect != model::TaintEffect::kNone) j["effect"] = std::string(model::ToString(t.effect));
  if (t.toleration_seconds) j["tolerationSeconds"] = *t.toleration_seconds;
  return j;
}

Json Container(const model::Container& c) {
  Json j = Json::object();
  j["name"] = c.name;
  PutString(j, "image", c.image);
  Json res = Json::object();
  if (!c.resources.requests.empty()) res["requests"] = Resources(c.resources.requests);
  if (!c.resources.limits.empty()) res["limits"] = Resources(c.resources.limits);
  if (!res.empty()) j["resources"] = std::move(res);
  if (!c.ports.empty()) {
    Json ports = Json::array();
    for (const model::ContainerPort& p : c.ports) {
      Json pj = Json::object();
      PutString(pj, "name", p.name);
      pj["containerPort"] = p.container_port;
      if (p.host_port != 0) pj["hostPort"] = p.host_port;
      pj["protocol"] = std::string(model::ToString(p.protocol));
      PutString(pj, "hostIP", p.host_ip);
      ports.push_back(std::move(pj));
    }
    j["ports"] = std::move(ports);
  }
  PutString(j, "restartPolicy", c.restart_policy);
  return j;
}

Json Spread(const model::TopologySpreadConstraint& c) {
  Json j = Json::object();
  j["maxSkew"] = c.max_skew;
  j["topologyKey"] = c.topology_key;
  j["whenUnsatisfiable"] = std::string(model::ToString(c.when_unsatisfiable));
  if (c.label_selector) j["labelSelector"] = Selector(*c.label_selector);
  if (c.min_domains) j["minDomains"] = *c.min_domains;
  if (c.node_affinity_policy) {
    j["nodeAffinityPolicy"] = std::string(model::ToString(*c.node_affinity_policy));
  }
  if (c.node_taints_policy) {
    j["nodeTaintsPolicy"] = std::string(model::ToString(*c.node_taints_policy));
  }
  PutStrings(j, "matchLabelKeys", c.match_label_keys);
  return j;
}

// PutNodeFeature puts back into `spec` what requires a node feature (a need's source): host
// network with host users off, or a container's restart rule or volume mount, so that the pod
// decoded from the JSON requires the same features. A need of an ephemeral container is not put
// back: those containers are not sent, and a pod is never created with them.
void PutNodeFeature(Json& spec, const model::PodNeed& need) {
  if (need.path == "spec.hostUsers") {
    spec.update(Json::parse(need.source));
    return;
  }
  static const std::regex kInContainer(
      R"(^spec\.(containers|initContainers)\[([0-9]+)\]\.(restartPolicyRules|volumeMounts)\[)");
  std::smatch m;
  if (!std::regex_search(need.path, m, kInContainer)) return;
  const std::string list = m[1];
  const size_t index = std::stoul(m[2]);
  if (!spec.contains(list) || index >= spec[list].size()) return;
  spec[list][index][m[3].str()].push_back(Json::parse(need.source));
}

Json Pod(const model::PodData& d, const Options& o) {
  Json spec = Json::object();
  PutString(spec, "schedulerName", d.spec.scheduler_name);
  PutString(spec, "nodeName", d.spec.node_name);
  if (d.spec.priority) spec["priority"] = *d.spec.priority;
  PutString(spec, "priorityClassName", d.spec.priority_class_name);
  if (d.spec.preemption_policy) {
    spec["preemptionPolicy"] = std::string(model::ToString(*d.spec.preemption_policy));
  }
  if (!d.spec.node_selector.empty()) {
    Json ns = Json::object();
    for (const auto& [k, v] : d.spec.node_selector) ns[k] = v;
    spec["nodeSelector"] = std::move(ns);
  }
  if (d.spec.affinity) spec["affinity"] = Affinity(*d.spec.affinity);
  if (!d.spec.tolerations.empty()) {
    Json a = Json::array();
    for (const model::Toleration& t : d.spec.tolerations) a.push_back(Toleration(t));
    spec["tolerations"] = std::move(a);
  }
  if (!d.spec.topology_spread_constraints.empty()) {
    Json a = Json::array();
    for (const auto& c : d.spec.topology_spread_constraints) a.push_back(Spread(c));
    spec["topologySpreadConstraints"] = std::move(a);
  }
  Json containers = Json::array();
  for (const model::Container& c : d.spec.containers) containers.push_back(Container(c));
  spec["containers"] = std::move(containers);
  if (!d.spec.init_containers.empty()) {
    Json a = Json::array();
    for (const model::Container& c : d.spec.init_containers) a.push_back(Container(c));
    spec["initContainers"] = std::move(a);
  }
  if (!d.spec.overhead.empty()) spec["overhead"] = Resources(d.spec.overhead);
  if (!d.spec.scheduling_gates.empty()) {
    Json a = Json::array();
    for (const std::string& g : d.spec.scheduling_gates) a.push_back(Json{{"name", g}});
    spec["schedulingGates"] = std::move(a);
  }
  // The volumes and DRA claims a plugin evaluates travel as the entries they were read from,
  // so a pod sent on (schedctl apply) is held or placed as the original would be. Volumes
  // without a meaning for scheduling are not kept, and not sent.
  for (const model::PodNeed& need : d.spec.needs) {
    if (need.source.empty()) continue;
    if (need.part == "nodeDeclaredFeatures") {
      PutNodeFeature(spec, need);
      continue;
    }
    const char* field = need.part.starts_with("spec.volumes.") ? "volumes" : "resourceClaims";
    spec[field].push_back(Json::parse(need.source));
  }
  Json status = Json::object();
  PutString(status, "nominatedNodeName", d.status.nominated_node_name);
  return Json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", Metadata(d.metadata, o)},
              {"spec", std::move(spec)}, {"status", std::move(status)}};
}

Json Node(const model::NodeData& d, const Options& o) {
  Json spec = Json::object();
  if (d.spec.unschedulable) spec["unschedulable"] = true;
  if (!d.spec.taints.empty()) {
    Json a = Json::array();
    for (const model::Taint& t : d.spec.taints) {
      Json tj = Json::object();
      tj["key"] = t.key;
      PutString(tj, "value", t.value);
      tj["effect"] = std::string(model::ToString(t.effect));
      a.push_back(std::move(tj));
    }
    spec["taints"] = std::move(a);
  }
  Json status = Json::object();
  if (!d.status.capacity.empty()) status["capacity"] = Resources(d.status.capacity);
  if (!d.status.allocatable.empty()) status["allocatable"] = Resources(d.status.allocatable);
  if (!d.status.images.empty()) {
    Json a = Json::array();
    for (const model::ContainerImage& i : d.status.images) {
      a.push_back(Json{{"names", i.names}, {"sizeBytes", i.size_bytes}});
    }
    status["images"] = std::move(a);
  }
  if (!d.status.conditions.empty()) {
    Json a = Json::array();
    for (const model::NodeCondition& c : d.status.conditions) {
      a.push_back(Json{{"type", c.type}, {"status", c.status}});
    }
    status["conditions"] = std::move(a);
  }
  return Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", Metadata(d.metadata, o)},
              {"spec", std::move(spec)}, {"status", std::move(status)}};
}

Json IntOrString(const model::IntOrString& v) {
  return v.is_string ? Json(v.string_value) : Json(v.int_value);
}

Json Pdb(const model::PodDisruptionBudgetData& d, const Options& o) {
  Json spec = Json::object();
  if (d.spec.min_available) spec["minAvailable"] = IntOrString(*d.spec.min_available);
  if (d.spec.max_unavailable) spec["maxUnavailable"] = IntOrString(*d.spec.max_unavailable);
  if (d.spec.selector) spec["selector"] = Selector(*d.spec.selector);
  return Json{{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", Metadata(d.metadata, o)},
              {"spec", std::move(spec)},
              {"status", Json{{"disruptionsAllowed", d.status.disruptions_allowed}}}};
}

Json PriorityClass(const model::PriorityClassData& d, const Options& o) {
  Json j{{"apiVersion", "scheduling.k8s.io/v1"},
         {"kind", "PriorityClass"},
         {"metadata", Metadata(d.metadata, o)},
         {"value", d.value}};
  if (d.global_default) j["globalDefault"] = true;
  if (d.preemption_policy) j["preemptionPolicy"] = std::string(model::ToString(*d.preemption_policy));
  PutString(j, "description", d.description);
  return j;
}

Json Namespace(const model::NamespaceData& d, const Options& o) {
  return Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", Metadata(d.metadata, o)}};
}

std::string Encode(const model::Object& object, const Options& o) {
  return std::visit(
      [&](const auto& ptr) -> std::string {
        using T = std::decay_t<decltype(*ptr)>;
        const auto& d = ptr->data();
        if constexpr (std::is_same_v<T, model::Pod>) {
          return Pod(d, o).dump();
        } else if constexpr (std::is_same_v<T, model::Node>) {
          return Node(d, o).dump();
        } else if constexpr (std::is_same_v<T, model::PodDisruptionBudget>) {
          return Pdb(d, o).dump();
        } else if constexpr (std::is_same_v<T, model::PriorityClass>) {
          return PriorityClass(d, o).dump();
        } else {
          static_assert(std::is_same_v<T, model::Namespace>, "every model::Object kind is encoded");
          return Namespace(d, o).dump();
        }
      },
      object);
}

}  // namespace

std::string EncodeJson(const model::Object& object) { return Encode(object, Options{}); }

std::string EncodeJsonWithoutIdentity(const model::Object& object) {
  return Encode(object, Options{.identity = false});
}

}  // namespace schedhost::api
