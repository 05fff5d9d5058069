// ValidatePod / ValidateNode / ValidatePdb / ValidatePriorityClass, following the API server's
// validation for the fields the scheduler reads.
#include <arpa/inet.h>

#include <set>
#include <utility>

#include "host/model/validation.h"
#include "host/model/validation_util.h"

namespace schedhost::model {
namespace {

using internal::CheckDnsLabelField;
using internal::CheckLabelSelector;
using internal::CheckListSize;
using internal::CheckQualifiedField;
using internal::CheckSubdomainField;
using internal::Child;
using internal::Fail;
using internal::Index;
using internal::Quote;

template <class Fn>
std::optional<FieldError> Run(Fn&& fn) {
  try {
    fn();
  } catch (internal::ValidationFailure& failure) {
    return std::move(failure.error);
  }
  return std::nullopt;
}

void CheckWeight(const std::string& path, int32_t weight) {
  if (weight < 1 || weight > 100) {
    Fail(path, "must be in the range 1-100, got " + std::to_string(weight));
  }
}

void CheckPort(const std::string& path, int32_t port) {
  if (port < 1 || port > 65535) {
    Fail(path, "must be between 1 and 65535, inclusive, got " + std::to_string(port));
  }
}

bool IsIp(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

void CheckKeyList(const std::string& path, const std::vector<std::string>& keys) {
  CheckListSize(path, keys.size());
  for (size_t i = 0; i < keys.size(); ++i) CheckQualifiedField(Index(path, i), keys[i]);
}

void CheckContainer(const std::string& path, const Container& c, bool init,
                    std::set<std::string>& names) {
  if (c.name.empty()) Fail(Child(path, "name"), "required");
  CheckDnsLabelField(Child(path, "name"), c.name);
  if (!names.insert(c.name).second) {
    Fail(Child(path, "name"), "duplicate container name " + Quote(c.name));
  }
  if (init ? !c.restart_policy.empty() && c.restart_policy != "Always"
           : !c.restart_policy.empty()) {
    Fail(Child(path, "restartPolicy"),
         init ? "unsupported value " + Quote(c.restart_policy) + ": supported values: \"Always\""
              : "may only be set on init containers");
  }
  const std::string resources = Child(path, "resources");
  internal::CheckResourceList(Child(resources, "requests"), c.resources.requests);
  internal::CheckResourceList(Child(resources, "limits"), c.resources.limits);
  for (const auto& [name, request] : c.resources.requests) {
    auto limit = c.resources.limits.find(name);
    if (limit != c.resources.limits.end() && request > limit->second) {
      Fail(Child(Child(resources, "requests"), name), "must be less than or equal to " + name +
                                                          " limit of " + limit->second.ToString() +
                                                          ", got " + request.ToString());
    }
  }
  CheckListSize(Child(path, "ports"), c.ports.size());
  for (size_t i = 0; i < c.ports.size(); ++i) {
    const ContainerPort& p = c.ports[i];
    const std::string port_path = Index(Child(path, "ports"), i);
    CheckPort(Child(port_path, "containerPort"), p.container_port);
    if (p.host_port != 0) CheckPort(Child(port_path, "hostPort"), p.host_port);
    if (!p.host_ip.empty() && !IsIp(p.host_ip)) {
      Fail(Child(port_path, "hostIP"), "must be a valid IP address, got " + Quote(p.host_ip));
    }
  }
}

void CheckPodAffinityTerm(const std::string& path, const PodAffinityTerm& term) {
  if (term.label_selector) CheckLabelSelector(Child(path, "labelSelector"), *term.label_selector);
  CheckListSize(Child(path, "namespaces"), term.namespaces.size());
  for (size_t i = 0; i < term.namespaces.size(); ++i) {
    CheckDnsLabelField(Index(Child(path, "namespaces"), i), term.namespaces[i]);
  }
  if (term.namespace_selector) {
    CheckLabelSelector(Child(path, "namespaceSelector"), *term.namespace_selector);
  }
  if (term.topology_key.empty()) Fail(Child(path, "topologyKey"), "can not be empty");
  CheckQualifiedField(Child(path, "topologyKey"), term.topology_key);
  CheckKeyList(Child(path, "matchLabelKeys"), term.match_label_keys);
  CheckKeyList(Child(path, "mismatchLabelKeys"), term.mismatch_label_keys);
  if (!term.label_selector &&
      (!term.match_label_keys.empty() || !term.mismatch_label_keys.empty())) {
    Fail(Child(path, term.match_label_keys.empty() ? "mismatchLabelKeys" : "matchLabelKeys"),
         "must not be specified when labelSelector is not set");
  }
  for (const std::string& key : term.match_label_keys) {
    for (const std::string& other : term.mismatch_label_keys) {
      if (key == other) {
        Fail(Child(path, "matchLabelKeys"),
             "exists in both matchLabelKeys and mismatchLabelKeys: " + Quote(key));
      }
    }
  }
}

void CheckPodAffinity(const std::string& path, const PodAffinity& affinity) {
  const std::string required = Child(path, "requiredDuringSchedulingIgnoredDuringExecution");
  CheckListSize(required, affinity.required.size());
  for (size_t i = 0; i < affinity.required.size(); ++i) {
    CheckPodAffinityTerm(Index(required, i), affinity.required[i]);
  }
  const std::string preferred = Child(path, "preferredDuringSchedulingIgnoredDuringExecution");
  CheckListSize(preferred, affinity.preferred.size());
  for (size_t i = 0; i < affinity.preferred.size(); ++i) {
    CheckWeight(Child(Index(preferred, i), "weight"), affinity.preferred[i].weight);
    CheckPodAffinityTerm(Child(Index(preferred, i), "podAffinityTerm"),
                         affinity.preferred[i].pod_affinity_term);
  }
}

void CheckAffinity(const std::string& path, const Affinity& affinity) {
  if (const auto& node = affinity.node_affinity) {
    const std::string node_path = Child(path, "nodeAffinity");
    if (node->required) {
      const std::string terms = Child(
          Child(node_path, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
      if (node->required->node_selector_terms.empty()) {
        Fail(terms, "must have at least one node selector term");
      }
      CheckListSize(terms, node->required->node_selector_terms.size());
      for (size_t i = 0; i < node->required->node_selector_terms.size(); ++i) {
        internal::CheckNodeSelectorTerm(Index(terms, i), node->required->node_selector_terms[i]);
      }
    }
    const std::string preferred =
        Child(node_path, "preferredDuringSchedulingIgnoredDuringExecution");
    CheckListSize(preferred, node->preferred.size());
    for (size_t i = 0; i < node->preferred.size(); ++i) {
      CheckWeight(Child(Index(preferred, i), "weight"), node->preferred[i].weight);
      internal::CheckNodeSelectorTerm(Child(Index(preferred, i), "preference"),
                                      node->preferred[i].preference);
    }
  }
  if (affinity.pod_affinity) CheckPodAffinity(Child(path, "podAffinity"), *affinity.pod_affinity);
  if (affinity.pod_anti_affinity) {
    CheckPodAffinity(Child(path, "podAntiAffinity"), *affinity.pod_anti_affinity);
  }
}

void CheckToleration(const std::string& path, const Toleration& t) {
  if (!t.key.empty()) CheckQualifiedField(Child(path, "key"), t.key);
  if (t.key.empty() && t.op != TolerationOperator::kExists) {
    Fail(Child(path, "operator"),
         "must be Exists when `key` is empty, which means \"match all "
         "values and all keys\"");
  }
  if (t.op == TolerationOperator::kExists && !t.value.empty()) {
    Fail(Child(path, "operator"), "value must be empty when `operator` is 'Exists'");
  }
  if (t.op == TolerationOperator::kEqual)
    internal::CheckLabelValueField(Child(path, "value"), t.value);
  if (t.toleration_seconds && t.effect != TaintEffect::kNoExecute) {
    Fail(Child(path, "effect"), "effect must be 'NoExecute' when `tolerationSeconds` is set");
  }
}

void CheckSpreadConstraints(const std::string& path,
                            const std::vector<TopologySpreadConstraint>& constraints) {
  CheckListSize(path, constraints.size());
  std::set<std::pair<std::string, WhenUnsatisfiable>> seen;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const TopologySpreadConstraint& c = constraints[i];
    const std::string item = Index(path, i);
    if (c.max_skew < 1) {
      Fail(Child(item, "maxSkew"), "must be greater than zero, got " + std::to_string(c.max_skew));
    }
    if (c.topology_key.empty()) Fail(Child(item, "topologyKey"), "can not be empty");
    CheckQualifiedField(Child(item, "topologyKey"), c.topology_key);
    if (c.min_domains) {
      if (*c.min_domains < 1) {
        Fail(Child(item, "minDomains"),
             "must be greater than zero, got " + std::to_string(*c.min_domains));
      }
      if (c.when_unsatisfiable != WhenUnsatisfiable::kDoNotSchedule) {
        Fail(Child(item, "minDomains"),
             "can only use minDomains if whenUnsatisfiable=DoNotSchedule");
      }
    }
    if (c.label_selector) CheckLabelSelector(Child(item, "labelSelector"), *c.label_selector);
    CheckKeyList(Child(item, "matchLabelKeys"), c.match_label_keys);
    if (!seen.emplace(c.topology_key, c.when_unsatisfiable).second) {
      Fail(item, "duplicate constraint for topologyKey " + Quote(c.topology_key) +
                     " and whenUnsatisfiable " + std::string(ToString(c.when_unsatisfiable)));
    }
  }
}

void CheckPodSpec(const PodSpec& spec) {
  CheckSubdomainField("spec.schedulerName", spec.scheduler_name);
  if (!spec.node_name.empty()) CheckSubdomainField("spec.nodeName", spec.node_name);
  if (!spec.priority_class_name.empty()) {
    CheckSubdomainField("spec.priorityClassName", spec.priority_class_name);
  }
  internal::CheckLabelMap("spec.nodeSelector", spec.node_selector);
  if (spec.affinity) CheckAffinity("spec.affinity", *spec.affinity);
  CheckListSize("spec.tolerations", spec.tolerations.size());
  for (size_t i = 0; i < spec.tolerations.size(); ++i) {
    CheckToleration(Index("spec.tolerations", i), spec.tolerations[i]);
  }
  CheckSpreadConstraints("spec.topologySpreadConstraints", spec.topology_spread_constraints);
  if (spec.containers.empty()) Fail("spec.containers", "must have at least one container");
  CheckListSize("spec.containers", spec.containers.size() + spec.init_containers.size(),
                kMaxContainers);
  std::set<std::string> names;
  for (size_t i = 0; i < spec.init_containers.size(); ++i) {
    CheckContainer(Index("spec.initContainers", i), spec.init_containers[i], true, names);
  }
  for (size_t i = 0; i < spec.containers.size(); ++i) {
    CheckContainer(Index("spec.containers", i), spec.containers[i], false, names);
  }
  internal::CheckResourceList("spec.overhead", spec.overhead);
  CheckListSize("spec.schedulingGates", spec.scheduling_gates.size());
  std::set<std::string> gates;
  for (size_t i = 0; i < spec.scheduling_gates.size(); ++i) {
    const std::string gate_path = Child(Index("spec.schedulingGates", i), "name");
    CheckQualifiedField(gate_path, spec.scheduling_gates[i]);
    if (!gates.insert(spec.scheduling_gates[i]).second) {
      Fail(gate_path, "duplicate scheduling gate " + Quote(spec.scheduling_gates[i]));
    }
  }
}

}  // namespace

std::optional<FieldError> ValidatePod(const PodData& pod) {
  return Run([&] {
    internal::CheckMeta(pod.metadata, /*namespaced=*/true);
    CheckPodSpec(pod.spec);
    if (!pod.status.nominated_node_name.empty()) {
      CheckSubdomainField("status.nominatedNodeName", pod.status.nominated_node_name);
    }
  });
}

std::optional<FieldError> ValidateNode(const NodeData& node) {
  return Run([&] {
    internal::CheckMeta(node.metadata, /*namespaced=*/false);
    CheckListSize("spec.taints", node.spec.taints.size());
    std::set<std::pair<std::string, TaintEffect>> seen;
    for (size_t i = 0; i < node.spec.taints.size(); ++i) {
      const Taint& t = node.spec.taints[i];
      const std::string item = Index("spec.taints", i);
      if (t.key.empty()) Fail(Child(item, "key"), "required");
      CheckQualifiedField(Child(item, "key"), t.key);
      internal::CheckLabelValueField(Child(item, "value"), t.value);
      if (t.effect == TaintEffect::kNone) Fail(Child(item, "effect"), "required");
      if (!seen.emplace(t.key, t.effect).second) {
        Fail(item, "taints must be unique by key and effect pair, duplicate " + Quote(t.key) +
                       " with effect " + std::string(ToString(t.effect)));
      }
    }
    internal::CheckResourceList("status.capacity", node.status.capacity);
    internal::CheckResourceList("status.allocatable", node.status.allocatable);
    CheckListSize("status.images", node.status.images.size());
    for (size_t i = 0; i < node.status.images.size(); ++i) {
      const ContainerImage& image = node.status.images[i];
      CheckListSize(Child(Index("status.images", i), "names"), image.names.size());
      if (image.size_bytes < 0) {
        Fail(Child(Index("status.images", i), "sizeBytes"), "must be greater than or equal to 0");
      }
    }
    CheckListSize("status.conditions", node.status.conditions.size());
    for (size_t i = 0; i < node.status.conditions.size(); ++i) {
      if (node.status.conditions[i].type.empty()) {
        Fail(Child(Index("status.conditions", i), "type"), "required");
      }
    }
  });
}

std::optional<FieldError> ValidatePdb(const PodDisruptionBudgetData& pdb) {
  return Run([&] {
    internal::CheckMeta(pdb.metadata, /*namespaced=*/true);
    const PodDisruptionBudgetSpec& spec = pdb.spec;
    if (spec.min_available && spec.max_unavailable) {
      Fail("spec", "minAvailable and maxUnavailable cannot be both set");
    }
    for (const auto& [field, value] : {std::pair{"spec.minAvailable", &spec.min_available},
                                       std::pair{"spec.maxUnavailable", &spec.max_unavailable}}) {
      if (!*value) continue;
      const IntOrString& v = **value;
      if (!v.is_string) {
        if (v.int_value < 0) {
          Fail(field, "must be greater than or equal to 0, got " + std::to_string(v.int_value));
        }
        continue;
      }
      const std::string& s = v.string_value;
      bool ok = s.size() >= 2 && s.size() <= 4 && s.back() == '%';
      for (size_t i = 0; ok && i + 1 < s.size(); ++i) ok = s[i] >= '0' && s[i] <= '9';
      if (!ok) {
        Fail(field, "invalid value " + Quote(s) +
                        ": a string value must be a percentage between 0% and 100%, like \"50%\"");
      }
      if (std::stoi(s.substr(0, s.size() - 1)) > 100) {
        Fail(field, "invalid value " + Quote(s) + ": must not be greater than 100%");
      }
    }
    if (spec.selector) CheckLabelSelector("spec.selector", *spec.selector);
    if (pdb.status.disruptions_allowed < 0) {
      Fail("status.disruptionsAllowed", "must be greater than or equal to 0, got " +
                                            std::to_string(pdb.status.disruptions_allowed));
    }
  });
}

std::optional<FieldError> ValidatePriorityClass(const PriorityClassData& pc) {
  return Run([&] {
    internal::CheckMeta(pc.metadata, /*namespaced=*/false);
    const std::string& name = pc.metadata.name;
    if (name.rfind("system-", 0) == 0) {
      bool known = (name == kSystemClusterCritical && pc.value == kSystemClusterCriticalPriority) ||
                   (name == kSystemNodeCritical && pc.value == kSystemNodeCriticalPriority);
      if (!known || pc.global_default) {
        Fail("metadata.name",
             "priority class names with 'system-' prefix are reserved for system use only: " +
                 Quote(name) + " with value " + std::to_string(pc.value) +
                 (pc.global_default ? " and globalDefault" : "") + " is not a built-in class");
      }
    } else if (pc.value > kHighestUserDefinablePriority) {
      Fail("value", "maximum allowed value of a user defined priority is " +
                        std::to_string(kHighestUserDefinablePriority) + ", got " +
                        std::to_string(pc.value));
    }
  });
}

std::optional<FieldError> ValidateNamespace(const NamespaceData& ns) {
  return Run([&] {
    internal::CheckMeta(ns.metadata, /*namespaced=*/false);
    CheckDnsLabelField("metadata.name", ns.metadata.name);
  });
}

}  // namespace schedhost::model
