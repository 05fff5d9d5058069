// libFuzzer target for host/model: any bytes fed to DecodeManifests must either decode or throw
// DecodeError (never crash, hang or throw anything else). Every decoded object's ABI view is
// walked end to end and mapped back through FromView, so a dangling or short array shows up
// under ASan.
//
//   clang++-14 -std=c++20 -fsanitize=fuzzer,address -I. -Isdk/include \
//     tests/fuzz/manifest_fuzz.cc host/model/*.cc -lyaml-cpp   (from the repository root,
//     leaving out host/model/*_test.cc)
//   ./a.out -max_total_time=30 tests/fuzz/corpus/manifest
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "host/model/decode.h"
#include "host/model/interner.h"

namespace {

using schedhost::model::Interner;

uint64_t Touch(schedhost_str s) {
  uint64_t sum = s.len;
  for (size_t i = 0; i < s.len; ++i) sum += static_cast<unsigned char>(s.data[i]);
  return sum;
}

uint64_t Touch(schedhost_id id) { return Interner::Global().Str(id).size() + id; }

uint64_t Touch(const schedhost_id* ids, size_t len) {
  uint64_t sum = 0;
  for (size_t i = 0; i < len; ++i) sum += Touch(ids[i]);
  return sum;
}

uint64_t Touch(schedhost_labels labels) {
  uint64_t sum = 0;
  for (size_t i = 0; i < labels.len; ++i) {
    if (i > 0 && labels.items[i - 1].key >= labels.items[i].key) std::abort();  // Sorted, unique.
    sum += Touch(labels.items[i].key) + Touch(labels.items[i].value);
  }
  return sum;
}

uint64_t Touch(const schedhost_requirement* reqs, size_t len) {
  uint64_t sum = 0;
  for (size_t i = 0; i < len; ++i) {
    sum += Touch(reqs[i].key) + static_cast<uint64_t>(reqs[i].op) +
           Touch(reqs[i].values, reqs[i].values_len);
  }
  return sum;
}

uint64_t Touch(const schedhost_label_selector* selector) {
  return selector == nullptr ? 1 : Touch(selector->requirements, selector->len);
}

uint64_t Touch(const schedhost_node_selector_term& term) {
  return Touch(term.match_expressions, term.match_expressions_len) +
         Touch(term.match_fields, term.match_fields_len);
}

uint64_t Touch(const schedhost_pod_affinity_term* terms, size_t len) {
  uint64_t sum = 0;
  for (size_t i = 0; i < len; ++i) {
    const schedhost_pod_affinity_term& t = terms[i];
    sum += Touch(t.label_selector) + Touch(t.namespaces, t.namespaces_len) +
           Touch(t.namespace_selector) + Touch(t.topology_key) + t.weight +
           Touch(t.match_label_keys, t.match_label_keys_len) +
           Touch(t.mismatch_label_keys, t.mismatch_label_keys_len);
  }
  return sum;
}

uint64_t Touch(schedhost_resources r) {
  uint64_t sum = 0;
  for (size_t i = 0; i < r.len; ++i) {
    if (i > 0 && r.items[i - 1].name >= r.items[i].name) std::abort();  // Sorted, unique.
    sum += Touch(r.items[i].name) + static_cast<uint64_t>(r.items[i].value);
  }
  return sum;
}

uint64_t TouchPod(const schedhost_pod_view* v) {
  uint64_t sum = Touch(v->name) + Touch(v->namespace_name) + Touch(v->namespace_id) +
                 Touch(v->uid) + Touch(v->scheduler_name) + Touch(v->node_name) +
                 Touch(v->nominated_node_name) + Touch(v->labels) + Touch(v->node_selector) +
                 Touch(v->requests) + Touch(v->priority_class_name);
  for (size_t i = 0; i < v->annotations_len; ++i) {
    sum += Touch(v->annotations[i].key) + Touch(v->annotations[i].value);
  }
  for (size_t i = 0; i < v->owner_refs_len; ++i) {
    sum +=
        Touch(v->owner_refs[i].kind) + Touch(v->owner_refs[i].name) + Touch(v->owner_refs[i].uid);
  }
  if (const schedhost_affinity* a = v->affinity) {
    for (size_t i = 0; i < a->required_node_terms_len; ++i) sum += Touch(a->required_node_terms[i]);
    for (size_t i = 0; i < a->preferred_node_terms_len; ++i) {
      sum += Touch(a->preferred_node_terms[i].term) + a->preferred_node_terms[i].weight;
    }
    for (const schedhost_pod_affinity_terms* p : {&a->pod_affinity, &a->pod_anti_affinity}) {
      sum += Touch(p->required, p->required_len) + Touch(p->preferred, p->preferred_len);
    }
  }
  for (size_t i = 0; i < v->tolerations_len; ++i) {
    sum += Touch(v->tolerations[i].key) + Touch(v->tolerations[i].value);
  }
  for (size_t i = 0; i < v->spread_constraints_len; ++i) {
    const schedhost_spread_constraint& c = v->spread_constraints[i];
    sum += Touch(c.topology_key) + Touch(c.label_selector) +
           Touch(c.match_label_keys, c.match_label_keys_len);
  }
  for (size_t i = 0; i < v->host_ports_len; ++i) {
    sum += Touch(v->host_ports[i].protocol) + Touch(v->host_ports[i].host_ip);
  }
  for (size_t i = 0; i < v->images_len; ++i) sum += Touch(v->images[i]);
  for (size_t i = 0; i < v->scheduling_gates_len; ++i) sum += Touch(v->scheduling_gates[i]);
  return sum;
}

uint64_t TouchNode(const schedhost_node_view* v) {
  uint64_t sum = Touch(v->name) + Touch(v->name_id) + Touch(v->labels) + Touch(v->allocatable) +
                 Touch(v->capacity);
  for (size_t i = 0; i < v->taints_len; ++i) {
    sum += Touch(v->taints[i].key) + Touch(v->taints[i].value);
  }
  for (size_t i = 0; i < v->images_len; ++i) {
    for (size_t j = 0; j < v->images[i].names_len; ++j) sum += Touch(v->images[i].names[j]);
  }
  return sum;
}

struct Visitor {
  uint64_t operator()(const std::shared_ptr<const schedhost::model::Pod>& pod) const {
    if (schedhost::model::Pod::FromView(pod->view()) != pod.get()) std::abort();
    return TouchPod(pod->view());
  }
  uint64_t operator()(const std::shared_ptr<const schedhost::model::Node>& node) const {
    if (schedhost::model::Node::FromView(node->view()) != node.get()) std::abort();
    return TouchNode(node->view());
  }
  uint64_t operator()(
      const std::shared_ptr<const schedhost::model::PodDisruptionBudget>& pdb) const {
    if (schedhost::model::PodDisruptionBudget::FromView(pdb->view()) != pdb.get()) std::abort();
    return Touch(pdb->view()->name) + Touch(pdb->view()->selector);
  }
  uint64_t operator()(const std::shared_ptr<const schedhost::model::PriorityClass>& pc) const {
    if (schedhost::model::PriorityClass::FromView(pc->view()) != pc.get()) std::abort();
    return Touch(pc->view()->name) + static_cast<uint64_t>(pc->view()->value);
  }
  uint64_t operator()(const std::shared_ptr<const schedhost::model::Namespace>& ns) const {
    return ns->name().size() + Touch(ns->labels());
  }
};

volatile uint64_t g_sink;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const schedhost::model::Object& object :
         schedhost::model::DecodeManifests(text, "fuzz.yaml")) {
      g_sink = g_sink + std::visit(Visitor{}, object);
    }
  } catch (const schedhost::model::DecodeError&) {
    // Refusing bad input is the expected outcome; anything else escapes and is a bug.
  }
  return 0;
}
