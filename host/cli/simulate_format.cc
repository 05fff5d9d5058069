// Output of `schedctl simulate`: its JSON object (`-o json`) and a kubectl-like table, and the
// same two for `--compare`.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "host/cli/simulate.h"

namespace schedhost::cli {
namespace {

nlohmann::ordered_json OrNull(const std::optional<std::string>& s) {
  return s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
}

// Columns renders `rows` as kubectl does: every column but the last padded with three spaces
// past its widest cell.
std::string Columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// Place is a side's cell: its node, or Pending.
std::string Place(const ComparedSide& side) { return side.node.value_or("Pending"); }

nlohmann::ordered_json SideJson(const ComparedSide& side) {
  nlohmann::ordered_json j;
  j["node"] = OrNull(side.node);
  j["message"] = side.message;
  return j;
}

}  // namespace

std::string FormatJson(const SimulationResult& result) {
  nlohmann::ordered_json pods = nlohmann::ordered_json::array();
  for (const SimulatedPod& p : result.pods) {
    nlohmann::ordered_json j;
    j["namespace"] = p.namespace_name;
    j["name"] = p.name;
    j["node"] = OrNull(p.node);
    j["nominatedNode"] = OrNull(p.nominated_node);
    j["status"] = p.status;
    j["message"] = p.message;
    pods.push_back(std::move(j));
  }
  nlohmann::ordered_json evicted = nlohmann::ordered_json::array();
  for (const Eviction& e : result.evicted) {
    nlohmann::ordered_json j;
    j["namespace"] = e.namespace_name;
    j["name"] = e.name;
    j["by"] = e.by;
    evicted.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["pods"] = std::move(pods);
  root["evicted"] = std::move(evicted);
  return root.dump(2) + "\n";
}

std::string FormatTable(const SimulationResult& result) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAMESPACE", "NAME", "STATUS", "NODE", "NOMINATED", "MESSAGE"});
  for (const SimulatedPod& p : result.pods) {
    rows.push_back({p.namespace_name, p.name, p.status, p.node.value_or("<none>"),
                    p.nominated_node.value_or("<none>"), p.message});
  }
  std::string out = Columns(rows);
  if (!result.evicted.empty()) {
    out += "\nEVICTED\n";
    for (const Eviction& e : result.evicted) {
      out += e.namespace_name + "/" + e.name + " (by " + e.by + ")\n";
    }
  }
  return out;
}

std::string FormatCompareTable(const Comparison& comparison) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAMESPACE", "NAME", "KIND", "RUNS-ON", "OLD", "NEW", "DIFFERS-BY"});
  std::map<std::string, std::pair<size_t, size_t>> counts;  // kind: (differ, all)
  std::string why;
  for (const ComparedPod& p : comparison.pods) {
    std::string by = "<none>";
    if (p.differs) {
      by = p.diff.point.empty() ? "tie" : p.diff.point;
      if (!p.diff.plugin.empty()) by += " " + p.diff.plugin;
      why += p.namespace_name + "/" + p.name + " (" + p.kind + "): " + p.diff.detail + "\n";
      for (const auto* side : {&p.old_side, &p.new_side}) {
        if (side->node) continue;
        why += "  " + std::string(side == &p.old_side ? "old" : "new") +
               " leaves it pending: " + side->message + "\n";
      }
    }
    rows.push_back({p.namespace_name, p.name, p.kind, p.runs_on.value_or("<none>"),
                    Place(p.old_side), Place(p.new_side), by});
    auto& [differ, all] = counts[p.kind];
    differ += p.differs ? 1 : 0;
    ++all;
  }
  std::string out = "OLD: " + comparison.old_config + "\nNEW: " + comparison.new_config + "\n\n";
  out += Columns(rows);
  size_t differ = 0;
  std::string by_kind;
  for (const auto& [kind, count] : counts) {
    differ += count.first;
    by_kind += (by_kind.empty() ? "" : ", ") + std::to_string(count.first) + " of " +
               std::to_string(count.second) + " " + kind;
  }
  out += "\n" + std::to_string(differ) + " of " + std::to_string(comparison.pods.size()) +
         " pods placed differently" + (by_kind.empty() ? "" : " (" + by_kind + ")") + "\n";
  if (!why.empty()) out += "\n" + why;
  return out;
}

std::string FormatCompareJson(const Comparison& comparison) {
  nlohmann::ordered_json pods = nlohmann::ordered_json::array();
  size_t differ = 0;
  for (const ComparedPod& p : comparison.pods) {
    nlohmann::ordered_json j;
    j["namespace"] = p.namespace_name;
    j["name"] = p.name;
    j["kind"] = p.kind;
    j["runsOn"] = OrNull(p.runs_on);
    j["old"] = SideJson(p.old_side);
    j["new"] = SideJson(p.new_side);
    j["differs"] = p.differs;
    if (p.differs) {
      ++differ;
      j["diff"] = {{"point", p.diff.point},
                   {"plugin", p.diff.plugin},
                   {"detail", p.diff.detail},
                   {"sameFeasibility", p.diff.same_feasibility},
                   {"sameBest", p.diff.same_best},
                   {"sameNode", p.diff.same_node}};
    } else {
      j["diff"] = nullptr;
    }
    pods.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["old"] = {{"config", comparison.old_config}};
  root["new"] = {{"config", comparison.new_config}};
  root["summary"] = {{"pods", comparison.pods.size()}, {"differ", differ}};
  root["pods"] = std::move(pods);
  return root.dump(2) + "\n";
}

}  // namespace schedhost::cli
