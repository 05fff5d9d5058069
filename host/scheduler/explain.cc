// RecordedCycle: the compact per-cycle record behind Admin.Explain, and its expansion.
#include "host/scheduler/explain.h"

#include <algorithm>

#include "host/framework/framework.h"
#include "host/model/interner.h"

namespace schedhost::scheduler {

namespace {

bool SameStatus(const framework::Status& a, const framework::Status& b) {
  return a.code == b.code && a.plugin == b.plugin && a.reasons == b.reasons;
}

}  // namespace

void RecordedCycle::AddRejected(schedhost_id node, const framework::Status& status) {
  // The previous node's status is the likeliest match; then the (few) others.
  if (scratch_ == nullptr) scratch_ = std::make_unique<Scratch>();
  std::vector<uint64_t>& pending = scratch_->pending;
  std::vector<framework::Status>& seen = scratch_->new_statuses;
  size_t index = seen.size();
  if (!pending.empty() && SameStatus(seen[pending.back() >> 32], status)) {
    index = pending.back() >> 32;
  } else {
    for (size_t i = 0; i < seen.size(); ++i) {
      if (SameStatus(seen[i], status)) {
        index = i;
        break;
      }
    }
  }
  if (index == seen.size()) seen.push_back(status);
  pending.push_back(uint64_t{index} << 32 | node);
}

void RecordedCycle::Seal(std::shared_ptr<const std::vector<framework::Status>>* last) {
  rejected.clear();
  num_rejected = 0;
  if (scratch_ == nullptr) return;                               // nothing was rejected
  const std::unique_ptr<Scratch> scratch = std::move(scratch_);  // freed on return
  std::vector<uint64_t>& pending = scratch->pending;
  std::vector<framework::Status>& new_statuses = scratch->new_statuses;
  if (!new_statuses.empty()) {
    const bool same = last != nullptr && *last != nullptr &&
                      std::equal((*last)->begin(), (*last)->end(), new_statuses.begin(),
                                 new_statuses.end(), SameStatus);
    if (same) {
      statuses = *last;
    } else {
      statuses = std::make_shared<const std::vector<framework::Status>>(std::move(new_statuses));
      if (last != nullptr) *last = statuses;
    }
  }
  // The Filter loop visits nodes in snapshot order from a rotating start, so with one status
  // (the common case) the entries are two ascending runs: merge those instead of sorting.
  const auto run_end = std::is_sorted_until(pending.begin(), pending.end());
  if (run_end != pending.end()) {
    if (std::is_sorted(run_end, pending.end())) {
      std::inplace_merge(pending.begin(), run_end, pending.end());
    } else {
      std::sort(pending.begin(), pending.end());
    }
  }
  pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
  num_rejected = pending.size();
  for (size_t i = 0; i < pending.size();) {
    const uint64_t status = pending[i] >> 32;
    size_t group_end = i;
    size_t runs = 0;
    while (group_end < pending.size() && pending[group_end] >> 32 == status) {
      if (group_end == i || pending[group_end] != pending[group_end - 1] + 1) ++runs;
      ++group_end;
    }
    internal::PutVarint(rejected, status);
    internal::PutVarint(rejected, runs);
    uint64_t next = 0;
    for (size_t j = i; j < group_end;) {
      const uint64_t first = pending[j] & 0xffffffffu;
      size_t k = j + 1;
      while (k < group_end && pending[k] == pending[k - 1] + 1) ++k;
      internal::PutVarint(rejected, first - next);
      internal::PutVarint(rejected, k - j - 1);
      next = first + (k - j);
      j = k;
    }
    i = group_end;
  }
  rejected.shrink_to_fit();
}

size_t RecordedCycle::Bytes() const {
  size_t bytes =
      sizeof(*this) + feasible.capacity() * sizeof(schedhost_id) + rejected.capacity() +
      (scratch_ ? sizeof(Scratch) + scratch_->pending.capacity() * sizeof(uint64_t) : 0) +
      raw.capacity() * sizeof(int64_t) + raw_columns.capacity() * sizeof(uint32_t) +
      normalized.capacity();
  for (const auto& name : skipped_filter_plugins) bytes += sizeof(std::string) + name.capacity();
  // Statuses count in full even when shared: the budget errs on the side of less memory.
  const std::vector<framework::Status>* collecting = scratch_ ? &scratch_->new_statuses : nullptr;
  for (const auto* list : {statuses.get(), collecting}) {
    if (list == nullptr) continue;
    for (const auto& status : *list) {
      // Interned texts are shared with every other status: only owned ones count here.
      const auto own = [](const framework::Text& t) { return t.interned() ? 0 : t.size(); };
      bytes += sizeof(status) + own(status.plugin);
      for (const auto& r : status.reasons) bytes += sizeof(r) + own(r);
    }
  }
  return bytes;
}

bool RecordedCycle::SameAs(const RecordedCycle& other) const {
  return header == other.header && statuses == other.statuses &&
         num_all_nodes == other.num_all_nodes && num_rejected == other.num_rejected &&
         scored == other.scored && pre_filter_failure == other.pre_filter_failure &&
         scratch_ == nullptr && other.scratch_ == nullptr &&
         skipped_filter_plugins == other.skipped_filter_plugins && feasible == other.feasible &&
         rejected == other.rejected && normalized == other.normalized && raw == other.raw &&
         raw_columns == other.raw_columns;
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
  e->pre_filter_failure = pre_filter_failure;
  const model::Interner& names = model::Interner::Global();
  const size_t columns = e->score_plugins.size();
  e->nodes.reserve(feasible.size() + num_rejected);
  for (size_t i = 0; i < feasible.size(); ++i) {
    NodeVerdict& v = e->nodes.emplace_back();
    v.node = names.Str(feasible[i]);
    if (!scored) continue;
    v.raw.resize(columns);
    v.weighted.resize(columns);
    const uint8_t* cells = normalized.data() + i * columns;
    const int64_t* kept_raw = raw.data() + i * raw_columns.size();
    for (size_t k = 0; k < columns; ++k) {
      v.raw[k] = framework::RawScore(cells, kept_raw, raw_columns, k);
      v.weighted[k] = int64_t{cells[k]} * e->score_weights[k];
      v.total += v.weighted[k];
    }
  }
  const size_t first_rejected = e->nodes.size();
  ForEachRejected([&](schedhost_id id, const framework::Status& status) {
    NodeVerdict& v = e->nodes.emplace_back();
    v.node = names.Str(id);
    v.outcome = pre_filter_failure || status.plugin.empty() ? NodeOutcome::kExcluded
                                                            : NodeOutcome::kFiltered;
    v.status = status;
  });
  std::sort(e->nodes.begin() + static_cast<ptrdiff_t>(first_rejected), e->nodes.end(),
            [](const NodeVerdict& a, const NodeVerdict& b) { return a.node < b.node; });
  return e;
}

namespace internal {

void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

uint64_t GetVarint(const std::vector<uint8_t>& in, size_t* at) {
  uint64_t v = 0;
  for (int shift = 0; *at < in.size() && shift < 64; shift += 7) {
    const uint8_t byte = in[(*at)++];
    v |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) break;
  }
  return v;
}

}  // namespace internal

}  // namespace schedhost::scheduler
