// Pod and PriorityClass admission as the API server applies it (priority resolved from the
// pod's PriorityClass or the globalDefault one, match/mismatchLabelKeys folded into pod
// affinity selectors, immutable fields, one default class), the
// built-in system classes, and the pod subresources: binding and nominatedNodeName.
#include <utility>

#include "host/store/store_internal.h"

namespace schedhost::store {
namespace {

model::PreemptionPolicy PolicyOf(const model::PriorityClass& pc) {
  return pc.data().preemption_policy.value_or(model::PreemptionPolicy::kPreemptLowerPriority);
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

void CheckNodeName(const std::string& what, std::string_view node_name) {
  if (auto why = model::CheckDnsSubdomain(node_name)) {
    throw StoreError(ErrorCode::kInvalid,
                     what + ": invalid node name " + Quote(node_name) + ": " + *why);
  }
}

// AppendLabelKeys adds, for each of `keys` the pod has a label for, a requirement `key op
// [value]` to `selector`.
void AppendLabelKeys(model::LabelSelector& selector, const std::vector<std::string>& keys,
                     model::SelectorOp op, const model::Labels& labels) {
  for (const std::string& key : keys) {
    for (const auto& [k, v] : labels) {
      if (k == key) selector.match_expressions.push_back({key, op, {v}});
    }
  }
}

// MergeLabelKeys folds a pod (anti-)affinity term's matchLabelKeys (key In [the pod's value])
// and mismatchLabelKeys (NotIn) into its label selector, as the API server does when it
// creates a pod (MatchLabelKeysInPodAffinity, on by default since v1.33); the scheduler then
// reads the selector alone. A term without a selector matches nothing and stays so.
void MergeLabelKeys(model::PodData& d) {
  if (!d.spec.affinity) return;
  auto merge = [&](model::PodAffinityTerm& term) {
    if (!term.label_selector) return;
    AppendLabelKeys(*term.label_selector, term.match_label_keys, model::SelectorOp::kIn,
                    d.metadata.labels);
    AppendLabelKeys(*term.label_selector, term.mismatch_label_keys, model::SelectorOp::kNotIn,
                    d.metadata.labels);
  };
  for (auto* affinity : {&d.spec.affinity->pod_affinity, &d.spec.affinity->pod_anti_affinity}) {
    if (!*affinity) continue;
    for (model::PodAffinityTerm& term : (*affinity)->required) merge(term);
    for (model::WeightedPodAffinityTerm& term : (*affinity)->preferred) {
      merge(term.pod_affinity_term);
    }
  }
}

}  // namespace

const model::PriorityClass* Store::DefaultPriorityClass(std::string_view except_name) const {
  for (const auto& pc : classes_.items) {
    if (pc->data().global_default && pc->name() != except_name) return pc.get();
  }
  return nullptr;
}

void Ops<model::Pod>::AdmitCreate(const Store& store, const std::string& what, Data& d) {
  MergeLabelKeys(d);
  // As upstream's Priority admission plugin: the class decides the value; a pod without a
  // class takes the globalDefault class, or priority 0 when there is none.
  const model::PriorityClass* pc = nullptr;
  if (d.spec.priority_class_name.empty()) {
    pc = store.DefaultPriorityClass("");
    if (pc != nullptr) d.spec.priority_class_name = pc->name();
  } else {
    auto it = store.classes_.items.find(
        Store::KeyIn<model::PriorityClass>({}, d.spec.priority_class_name));
    if (it == store.classes_.items.end()) {
      throw StoreError(ErrorCode::kInvalid, what + ": no PriorityClass with name " +
                                                d.spec.priority_class_name + " was found");
    }
    pc = it->get();
  }
  const int32_t value = pc != nullptr ? pc->value() : 0;
  const std::string source =
      pc != nullptr ? "its PriorityClass " + pc->name() : "no PriorityClass (the default 0)";
  if (d.spec.priority.has_value() && *d.spec.priority != value) {
    throw StoreError(ErrorCode::kInvalid,
                     what + ": spec.priority " + std::to_string(*d.spec.priority) +
                         " contradicts the value " + std::to_string(value) + " computed from " +
                         source + "; leave spec.priority unset");
  }
  d.spec.priority = value;
  if (pc == nullptr) return;
  const model::PreemptionPolicy policy = PolicyOf(*pc);
  if (d.spec.preemption_policy.has_value() && *d.spec.preemption_policy != policy) {
    throw StoreError(ErrorCode::kInvalid,
                     what + ": spec.preemptionPolicy " +
                         std::string(model::ToString(*d.spec.preemption_policy)) + " contradicts " +
                         std::string(model::ToString(policy)) + " from " + source +
                         "; leave spec.preemptionPolicy unset");
  }
  d.spec.preemption_policy = policy;
}

void Ops<model::Pod>::AdmitUpdate(const Store&, const std::string& what, const model::Pod& current,
                                  Data& d) {
  const model::PodSpec& cur = current.data().spec;
  // Re-applying the manifest a pod was created from gives the selectors that create merged:
  // the update keeps them, as a kubectl apply of an unchanged file changes nothing upstream.
  if (d.spec.affinity != cur.affinity) MergeLabelKeys(d);
  auto immutable = [&](const char* field, const std::string& now, const std::string& wanted) {
    throw StoreError(ErrorCode::kInvalid, what + ": " + field + ": field is immutable (stored " +
                                              Quote(now) + ", update asks for " + Quote(wanted) +
                                              ")");
  };
  if (d.spec.node_name.empty()) {
    d.spec.node_name = cur.node_name;
  } else if (cur.node_name.empty()) {
    throw StoreError(ErrorCode::kInvalid, what +
                                              ": spec.nodeName: an update cannot bind a pod (to " +
                                              Quote(d.spec.node_name) + "); use Bind");
  } else if (d.spec.node_name != cur.node_name) {
    immutable("spec.nodeName", cur.node_name, d.spec.node_name);
  }
  if (d.spec.priority_class_name.empty()) {
    d.spec.priority_class_name = cur.priority_class_name;
  } else if (d.spec.priority_class_name != cur.priority_class_name) {
    immutable("spec.priorityClassName", cur.priority_class_name, d.spec.priority_class_name);
  }
  if (!d.spec.priority.has_value()) {
    d.spec.priority = cur.priority;
  } else if (d.spec.priority != cur.priority) {
    immutable("spec.priority", cur.priority ? std::to_string(*cur.priority) : "",
              std::to_string(*d.spec.priority));
  }
  if (!d.spec.preemption_policy.has_value()) {
    d.spec.preemption_policy = cur.preemption_policy;
  } else if (d.spec.preemption_policy != cur.preemption_policy) {
    immutable("spec.preemptionPolicy",
              cur.preemption_policy ? std::string(model::ToString(*cur.preemption_policy)) : "",
              std::string(model::ToString(*d.spec.preemption_policy)));
  }
}

void Ops<model::PriorityClass>::AdmitCreate(const Store& store, const std::string& what, Data& d) {
  if (!d.global_default) return;
  if (const model::PriorityClass* other = store.DefaultPriorityClass(d.metadata.name)) {
    throw StoreError(ErrorCode::kInvalid, what + ": globalDefault: PriorityClass " + other->name() +
                                              " is already the default; only one may be");
  }
}

void Ops<model::PriorityClass>::AdmitUpdate(const Store& store, const std::string& what,
                                            const model::PriorityClass& current, Data& d) {
  if (d.value != current.value()) {
    throw StoreError(ErrorCode::kInvalid, what + ": value: field is immutable (stored " +
                                              std::to_string(current.value()) +
                                              ", update asks for " + std::to_string(d.value) + ")");
  }
  if (!d.preemption_policy.has_value()) d.preemption_policy = current.data().preemption_policy;
  if (d.preemption_policy.value_or(model::PreemptionPolicy::kPreemptLowerPriority) !=
      PolicyOf(current)) {
    throw StoreError(ErrorCode::kInvalid, what + ": preemptionPolicy: field is immutable");
  }
  AdmitCreate(store, what, d);
}

void Store::SeedSystemPriorityClasses() {
  // The API server creates these two at start-up; pods of critical add-ons name them.
  model::PriorityClassData node_critical;
  node_critical.metadata.name = std::string(model::kSystemNodeCritical);
  node_critical.value = model::kSystemNodeCriticalPriority;
  node_critical.description =
      "Used for system critical pods that must not be moved from their "
      "current node.";
  Create(std::move(node_critical));
  model::PriorityClassData cluster_critical;
  cluster_critical.metadata.name = std::string(model::kSystemClusterCritical);
  cluster_critical.value = model::kSystemClusterCriticalPriority;
  cluster_critical.description =
      "Used for system critical pods that must run in the cluster, "
      "but can be moved to another node if necessary.";
  Create(std::move(cluster_critical));
}

std::shared_ptr<const model::Pod> Store::Bind(std::string_view namespace_name,
                                              std::string_view name, std::string_view uid,
                                              uint64_t expected_resource_version,
                                              std::string_view node_name) {
  const std::string key = ObjectKey(Kind::kPod, namespace_name, name);
  const std::string what = "Pod " + key;
  if (node_name.empty()) throw StoreError(ErrorCode::kInvalid, what + ": bind needs a node name");
  CheckNodeName(what, node_name);
  std::unique_lock lock(mu_);
  auto it = pods_.items.find(KeyIn<model::Pod>(namespace_name, name));
  if (it == pods_.items.end()) {
    throw StoreError(ErrorCode::kNotFound, what + " not found; it was deleted before binding");
  }
  // A copy: Replace below drops the table's reference, and the event still needs the old object.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const std::shared_ptr<const model::Pod> current = *it;
  if (!uid.empty() && uid != current->uid()) {
    throw StoreError(ErrorCode::kConflict, what + ": uid is " + std::string(current->uid()) +
                                               ", the binding names " + std::string(uid) +
                                               " (the pod was re-created)");
  }
  if (!current->node_name().empty()) {
    throw StoreError(ErrorCode::kConflict,
                     what + " is already bound to node " + std::string(current->node_name()));
  }
  if (expected_resource_version != 0 && expected_resource_version != current->resource_version()) {
    throw StoreError(ErrorCode::kConflict, what + ": changed since it was read (resource version " +
                                               std::to_string(current->resource_version()) +
                                               ", expected " +
                                               std::to_string(expected_resource_version) + ")");
  }
  model::PodData data = current->Decode();
  data.spec.node_name = std::string(node_name);
  data.status.nominated_node_name.clear();
  const uint64_t rv = NextVersion();
  data.metadata.resource_version = rv;
  std::shared_ptr<const model::Pod> bound = model::Pod::Make(std::move(data));
  pods_.Replace(it, bound);
  Record(EventType::kModified, bound, model::Object(current), rv);
  Deliver(lock);
  return bound;
}

std::shared_ptr<const model::Pod> Store::SetNominatedNodeName(std::string_view namespace_name,
                                                              std::string_view name,
                                                              std::string_view uid,
                                                              std::string_view node_name) {
  const std::string key = ObjectKey(Kind::kPod, namespace_name, name);
  const std::string what = "Pod " + key;
  if (!node_name.empty()) CheckNodeName(what, node_name);
  std::unique_lock lock(mu_);
  auto it = pods_.items.find(KeyIn<model::Pod>(namespace_name, name));
  if (it == pods_.items.end()) throw StoreError(ErrorCode::kNotFound, what + " not found");
  std::shared_ptr<const model::Pod> current = *it;
  if (!uid.empty() && uid != current->uid()) {
    throw StoreError(ErrorCode::kConflict, what + ": uid is " + std::string(current->uid()) +
                                               ", the request names " + std::string(uid) +
                                               " (the pod was re-created)");
  }
  if (current->nominated_node_name() == node_name) return current;
  model::PodData data = current->Decode();
  data.status.nominated_node_name = std::string(node_name);
  const uint64_t rv = NextVersion();
  data.metadata.resource_version = rv;
  std::shared_ptr<const model::Pod> updated = model::Pod::Make(std::move(data));
  pods_.Replace(it, updated);
  Record(EventType::kModified, updated, model::Object(current), rv);
  Deliver(lock);
  return updated;
}

}  // namespace schedhost::store
