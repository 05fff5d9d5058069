// RecordedCycle: the compact per-cycle record behind Admin.Explain, and its expansion.
#include "host/scheduler/explain.h"

namespace schedhost::scheduler {

namespace {

bool SameStatus(const framework::Status& a, const framework::Status& b) {
  return a.code == b.code && a.plugin == b.plugin && a.reasons == b.reasons;
}

}  // namespace

void RecordedCycle::AddRejected(std::string_view node, framework::Status status) {
  rejected_names.append(node);
  rejected_ends.push_back(static_cast<uint32_t>(rejected_names.size()));
  // The previous node's status is the likeliest match; then the (few) others.
  if (!rejected_status.empty() && SameStatus(statuses[rejected_status.back()], status)) {
    rejected_status.push_back(rejected_status.back());
    return;
  }
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (SameStatus(statuses[i], status)) {
      rejected_status.push_back(static_cast<uint32_t>(i));
      return;
    }
  }
  rejected_status.push_back(static_cast<uint32_t>(statuses.size()));
  statuses.push_back(std::move(status));
}

size_t RecordedCycle::Bytes() const {
  size_t bytes =
      sizeof(*this) + feasible_names.capacity() + rejected_names.capacity() +
      (feasible_ends.capacity() + rejected_ends.capacity() + rejected_status.capacity()) *
          sizeof(uint32_t) +
      raw.capacity() * sizeof(int64_t) + normalized.capacity();
  for (const auto& name : skipped_filter_plugins) bytes += sizeof(std::string) + name.capacity();
  for (const auto& status : statuses) {
    bytes += sizeof(status) + status.plugin.capacity();
    for (const auto& r : status.reasons) bytes += sizeof(std::string) + r.capacity();
  }
  return bytes;
}

std::shared_ptr<const CycleExplanation> RecordedCycle::Expand() const {
  auto e = std::make_shared<CycleExplanation>();
  if (header != nullptr) {
    e->profile = header->profile;
    e->filter_plugins = header->filter_plugins;
    e->score_plugins = header->score_plugins;
    e->score_weights = header->score_weights;
  }
  e->skipped_filter_plugins = skipped_filter_plugins;
  e->num_all_nodes = num_all_nodes;
  const size_t columns = e->score_plugins.size();
  e->nodes.reserve(feasible_ends.size() + rejected_ends.size());
  uint32_t begin = 0;
  for (size_t i = 0; i < feasible_ends.size(); ++i) {
    NodeVerdict& v = e->nodes.emplace_back();
    v.node = feasible_names.substr(begin, feasible_ends[i] - begin);
    begin = feasible_ends[i];
    if (!scored) continue;
    v.raw.assign(raw.begin() + static_cast<ptrdiff_t>(i * columns),
                 raw.begin() + static_cast<ptrdiff_t>((i + 1) * columns));
    v.weighted.resize(columns);
    for (size_t k = 0; k < columns; ++k) {
      v.weighted[k] = int64_t{normalized[i * columns + k]} * e->score_weights[k];
      v.total += v.weighted[k];
    }
  }
  begin = 0;
  for (size_t i = 0; i < rejected_ends.size(); ++i) {
    const framework::Status& status = statuses[rejected_status[i]];
    NodeVerdict& v = e->nodes.emplace_back();
    v.node = rejected_names.substr(begin, rejected_ends[i] - begin);
    begin = rejected_ends[i];
    v.outcome = pre_filter_failure || status.plugin.empty() ? NodeOutcome::kExcluded
                                                            : NodeOutcome::kFiltered;
    v.status = status;
  }
  return e;
}

}  // namespace schedhost::scheduler
