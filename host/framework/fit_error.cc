// Upstream's node sampling (numFeasibleNodesToFind) and failure message (FitError.Error()).
#include <algorithm>
#include <map>

#include "host/framework/framework.h"

namespace schedhost::framework {

namespace {
constexpr int32_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;
}  // namespace

int32_t NumFeasibleNodesToFind(int32_t percentage, int32_t num_nodes) {
  if (num_nodes < kMinFeasibleNodesToFind) return num_nodes;
  if (percentage <= 0) {
    percentage = 50 - num_nodes / 125;
    if (percentage < kMinFeasibleNodesPercentageToFind) percentage = kMinFeasibleNodesPercentageToFind;
  }
  if (percentage >= 100) return num_nodes;
  int32_t n = static_cast<int32_t>(static_cast<int64_t>(num_nodes) * percentage / 100);
  return std::max(n, kMinFeasibleNodesToFind);
}

std::string FitErrorMessage(size_t num_nodes, const NodeStatuses& node_statuses,
                            const Status* pre_filter_failure) {
  std::string msg = "0/" + std::to_string(num_nodes) + " nodes are available:";
  if (pre_filter_failure != nullptr && !pre_filter_failure->Message().empty()) {
    msg += " " + pre_filter_failure->Message() + ".";
  }
  std::map<std::string, int> histogram;
  for (const auto& [node, status] : node_statuses) {
    for (const auto& r : status.reasons) histogram[r.str()]++;
  }
  if (!histogram.empty()) {
    std::vector<std::string> parts;
    parts.reserve(histogram.size());
    for (const auto& [reason, count] : histogram) parts.push_back(std::to_string(count) + " " + reason);
    std::sort(parts.begin(), parts.end());  // upstream sorts the "N reason" strings
    std::string joined;
    for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
    msg += " " + joined + ".";
  }
  return msg;
}

}  // namespace schedhost::framework
