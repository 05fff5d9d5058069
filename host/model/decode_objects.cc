// Reads v1 Node, policy/v1 PodDisruptionBudget and scheduling.k8s.io/v1 PriorityClass fields.
#include "host/model/decode_util.h"

namespace schedhost::model::internal {
namespace {

std::optional<IntOrString> ReadIntOrString(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return std::nullopt;
  if (node->kind != YamlNode::Kind::kScalar) {
    Fail(path, "expected an integer or a percentage string, got " + Describe(node));
  }
  IntOrString out;
  const std::string& s = node->scalar;
  bool integer = !node->quoted && !s.empty();
  for (size_t i = 0; i < s.size() && integer; ++i) {
    integer = (s[i] >= '0' && s[i] <= '9') || (i == 0 && (s[i] == '-' || s[i] == '+'));
  }
  if (integer) {
    out.int_value = *ReadInt32(node, path);
  } else {
    out.is_string = true;
    out.string_value = s;
  }
  return out;
}

}  // namespace

NodeData DecodeNode(const MapReader& object) {
  NodeData node;
  node.metadata = ReadMeta(object.Get("metadata"), object.Path("metadata"));
  MapReader spec(object.Get("spec"), object.Path("spec"));
  node.spec.unschedulable =
      ReadBool(spec.Get("unschedulable"), spec.Path("unschedulable")).value_or(false);
  ReadList(spec.Get("taints"), spec.Path("taints"),
           [&](const YamlNode* item, const std::string& p) {
             MapReader m(item, p);
             Taint t;
             t.key = ReadString(m.Get("key"), m.Path("key"));
             t.value = ReadString(m.Get("value"), m.Path("value"));
             t.effect = ReadEnum<TaintEffect>(
                            m.Get("effect"), m.Path("effect"),
                            [](std::string_view s) -> std::optional<TaintEffect> {
                              return s.empty() ? std::nullopt : ParseTaintEffect(s);
                            },
                            "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"")
                            .value_or(TaintEffect::kNone);
             node.spec.taints.push_back(std::move(t));
           });
  MapReader status(object.Get("status"), object.Path("status"));
  node.status.capacity = ReadResourceList(status.Get("capacity"), status.Path("capacity"));
  node.status.allocatable = ReadResourceList(status.Get("allocatable"), status.Path("allocatable"));
  ReadList(status.Get("images"), status.Path("images"),
           [&](const YamlNode* item, const std::string& p) {
             MapReader m(item, p);
             ContainerImage image;
             image.names = ReadStringList(m.Get("names"), m.Path("names"));
             image.size_bytes =
                 ReadInt(m.Get("sizeBytes"), m.Path("sizeBytes"), INT64_MIN, INT64_MAX).value_or(0);
             node.status.images.push_back(std::move(image));
           });
  ReadList(status.Get("conditions"), status.Path("conditions"),
           [&](const YamlNode* item, const std::string& p) {
             MapReader m(item, p);
             NodeCondition condition;
             condition.type = ReadString(m.Get("type"), m.Path("type"));
             condition.status = ReadString(m.Get("status"), m.Path("status"));
             node.status.conditions.push_back(std::move(condition));
           });
  return node;
}

PodDisruptionBudgetData DecodePdb(const MapReader& object) {
  PodDisruptionBudgetData pdb;
  pdb.metadata = ReadMeta(object.Get("metadata"), object.Path("metadata"));
  MapReader spec(object.Get("spec"), object.Path("spec"));
  pdb.spec.selector = ReadLabelSelector(spec.Get("selector"), spec.Path("selector"));
  pdb.spec.min_available = ReadIntOrString(spec.Get("minAvailable"), spec.Path("minAvailable"));
  pdb.spec.max_unavailable =
      ReadIntOrString(spec.Get("maxUnavailable"), spec.Path("maxUnavailable"));
  MapReader status(object.Get("status"), object.Path("status"));
  const std::optional<int32_t> allowed =
      ReadInt32(status.Get("disruptionsAllowed"), status.Path("disruptionsAllowed"));
  pdb.status.disruptions_allowed = allowed.value_or(0);
  pdb.status.has_disruptions_allowed = allowed.has_value();
  return pdb;
}

PriorityClassData DecodePriorityClass(const MapReader& object) {
  PriorityClassData pc;
  pc.metadata = ReadMeta(object.Get("metadata"), object.Path("metadata"));
  pc.value = ReadInt32(object.Get("value"), object.Path("value")).value_or(0);
  pc.global_default =
      ReadBool(object.Get("globalDefault"), object.Path("globalDefault")).value_or(false);
  pc.preemption_policy =
      ReadEnum<PreemptionPolicy>(object.Get("preemptionPolicy"), object.Path("preemptionPolicy"),
                                 ParsePreemptionPolicy, "\"PreemptLowerPriority\", \"Never\"");
  pc.description = ReadString(object.Get("description"), object.Path("description"));
  return pc;
}

NamespaceData DecodeNamespace(const MapReader& object) {
  NamespaceData ns;
  ns.metadata = ReadMeta(object.Get("metadata"), object.Path("metadata"));
  return ns;
}

}  // namespace schedhost::model::internal
