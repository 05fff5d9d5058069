// Output of `schedctl simulate`: the JSON object of DESIGN.md §6 and a kubectl-like table.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>

#include "host/cli/simulate.h"

namespace schedhost::cli {
namespace {

nlohmann::ordered_json OrNull(const std::optional<std::string>& s) {
  return s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
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
  constexpr size_t kColumns = 6;
  std::vector<std::array<std::string, kColumns>> rows;
  rows.push_back({"NAMESPACE", "NAME", "STATUS", "NODE", "NOMINATED", "MESSAGE"});
  for (const SimulatedPod& p : result.pods) {
    rows.push_back({p.namespace_name, p.name, p.status, p.node.value_or("<none>"),
                    p.nominated_node.value_or("<none>"), p.message});
  }
  std::array<size_t, kColumns> width{};
  for (const auto& row : rows) {
    for (size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < kColumns; ++c) {
      line += row[c];
      // kubectl pads every column but the last with three spaces past the widest cell.
      if (c + 1 < kColumns) line += std::string(width[c] - row[c].size() + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (!result.evicted.empty()) {
    out += "\nEVICTED\n";
    for (const Eviction& e : result.evicted) {
      out += e.namespace_name + "/" + e.name + " (by " + e.by + ")\n";
    }
  }
  return out;
}

}  // namespace schedhost::cli
