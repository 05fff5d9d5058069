// The per-kind `get` tables.
#include "host/cli/tables.h"

namespace schedhost::cli {
namespace {

// Str is the string at `path` in `j` ("" when absent or not a string; numbers as written).
std::string Str(const Json& j, std::initializer_list<const char*> path) {
  const Json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key)) return "";
    cur = &(*cur)[key];
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_number() || cur->is_boolean()) return cur->dump();
  return "";
}

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::vector<std::string> PodRow(const Json& pod, bool wide) {
  std::vector<std::string> row = {Str(pod, {"metadata", "name"}), PodStatus(pod),
                                  OrNone(Str(pod, {"spec", "nodeName"})),
                                  OrNone(Str(pod, {"status", "nominatedNodeName"})), Age(pod)};
  if (wide) {
    const std::string priority = Str(pod, {"spec", "priority"});
    row.push_back(priority.empty() ? "0" : priority);
    row.push_back(Str(pod, {"spec", "schedulerName"}));
  }
  return row;
}

std::string Taints(const Json& node) {
  std::string out;
  for (const Json& t : Field(Field(node, "spec"), "taints")) {
    if (!out.empty()) out += ",";
    out += Str(t, {"key"});
    if (const std::string v = Str(t, {"value"}); !v.empty()) out += "=" + v;
    out += ":" + Str(t, {"effect"});
  }
  return out;
}

std::vector<std::string> NodeRow(const Json& node, bool wide) {
  std::vector<std::string> row = {Str(node, {"metadata", "name"}), NodeStatus(node), Age(node)};
  if (wide) {
    // Allocatable is what the scheduler fits pods into; capacity stands in when it is absent.
    const char* block =
        Field(Field(node, "status"), "allocatable").empty() ? "capacity" : "allocatable";
    row.push_back(OrNone(Str(node, {"status", block, "cpu"})));
    row.push_back(OrNone(Str(node, {"status", block, "memory"})));
    row.push_back(OrNone(Str(node, {"status", block, "pods"})));
    row.push_back(OrNone(Taints(node)));
  }
  return row;
}

std::vector<std::string> PdbRow(const Json& pdb) {
  auto or_na = [](const std::string& s) { return s.empty() ? std::string("N/A") : s; };
  const std::string allowed = Str(pdb, {"status", "disruptionsAllowed"});
  return {Str(pdb, {"metadata", "name"}), or_na(Str(pdb, {"spec", "minAvailable"})),
          or_na(Str(pdb, {"spec", "maxUnavailable"})), allowed.empty() ? "0" : allowed, Age(pdb)};
}

std::vector<std::string> PriorityClassRow(const Json& pc, bool wide) {
  const std::string global = Str(pc, {"globalDefault"});
  std::vector<std::string> row = {Str(pc, {"metadata", "name"}), Str(pc, {"value"}),
                                  global.empty() ? "false" : global, Age(pc)};
  if (wide) {
    const std::string policy = Str(pc, {"preemptionPolicy"});
    row.push_back(policy.empty() ? "PreemptLowerPriority" : policy);
  }
  return row;
}

}  // namespace

std::string PodStatus(const Json& pod) {
  if (!Str(pod, {"spec", "nodeName"}).empty()) return "Scheduled";
  const Json& gates = Field(Field(pod, "spec"), "schedulingGates");
  if (gates.is_array() && !gates.empty()) return "SchedulingGated";
  return "Pending";
}

std::string NodeStatus(const Json& node) {
  std::string status = "Ready";
  for (const Json& c : Field(Field(node, "status"), "conditions")) {
    if (Str(c, {"type"}) == "Ready" && Str(c, {"status"}) != "True") {
      status = Str(c, {"status"}) == "False" ? "NotReady" : "Unknown";
    }
  }
  if (Field(Field(node, "spec"), "unschedulable") == Json(true)) status += ",SchedulingDisabled";
  return status;
}

Table MakeTable(const Resource& r, const std::vector<Json>& items, bool wide, bool with_namespace) {
  std::vector<std::string> header;
  switch (r.kind) {
    case v1::POD:
      header = {"NAME", "STATUS", "NODE", "NOMINATED NODE", "AGE"};
      if (wide) header.insert(header.end(), {"PRIORITY", "SCHEDULER"});
      break;
    case v1::NODE:
      header = {"NAME", "STATUS", "AGE"};
      if (wide) header.insert(header.end(), {"CPU", "MEMORY", "PODS", "TAINTS"});
      break;
    case v1::POD_DISRUPTION_BUDGET:
      header = {"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"};
      break;
    case v1::PRIORITY_CLASS:
      header = {"NAME", "VALUE", "GLOBAL-DEFAULT", "AGE"};
      if (wide) header.emplace_back("PREEMPTIONPOLICY");
      break;
    case v1::DECLARED:
      header = {"NAME", "AGE"};  // kubectl's columns for a kind without printer columns
      break;
    default:
      header = {"NAME", "STATUS", "AGE"};
      break;
  }
  if (with_namespace) header.insert(header.begin(), "NAMESPACE");
  Table table(std::move(header));
  for (const Json& item : items) {
    std::vector<std::string> row;
    switch (r.kind) {
      case v1::POD:
        row = PodRow(item, wide);
        break;
      case v1::NODE:
        row = NodeRow(item, wide);
        break;
      case v1::POD_DISRUPTION_BUDGET:
        row = PdbRow(item);
        break;
      case v1::PRIORITY_CLASS:
        row = PriorityClassRow(item, wide);
        break;
      case v1::DECLARED:
        row = {Str(item, {"metadata", "name"}), Age(item)};
        break;
      default:
        row = {Str(item, {"metadata", "name"}), "Active", Age(item)};
        break;
    }
    if (with_namespace) row.insert(row.begin(), Str(item, {"metadata", "namespace"}));
    table.AddRow(std::move(row));
  }
  return table;
}

}  // namespace schedhost::cli
