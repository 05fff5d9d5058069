// The live scheduling cycle (upstream's schedulingCycle) around CycleRunner: the pod's
// profile, the snapshot, PreFilter to Score, PostFilter on failure with upstream's FitError
// message, and the explanation Explain keeps.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "host/framework/framework_metrics.h"
#include "host/framework/plugin_instance.h"
#include "host/model/interner.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::scheduler {

using framework::Code;
using framework::Status;

void Scheduler::RunCycle(queue::QueuedPodInfo info) {
  const std::shared_ptr<const ProfileRuntime> profiles = this->profiles();
  const model::Pod& pod = *info.pod;
  framework::Framework* fw = profiles->FrameworkFor(pod);
  if (fw == nullptr) {
    ParkWithoutProfile(info);  // the profile went away (a reload): parked, not lost (swap.cc)
    return;
  }
  // Skip pods deleted or bound since they were queued, and pods whose binding is under way.
  auto stored = store_.Get<model::Pod>(pod.namespace_name(), pod.name());
  if (!stored || stored->uid() != pod.uid() || !stored->node_name().empty() ||
      cache_.IsAssumed(pod.uid())) {
    queue_->Done(pod.uid());
    return;
  }
  Record(pod, [&](PodEntry& e) {
    e.attempts = info.attempts;
    e.gated = false;
  });
  // A shadow of this profile takes the cycle when it can, its snapshot updated with this one.
  const bool shadowed = shadow_->active();
  const auto cycle_start = shadowed ? std::chrono::steady_clock::now()
                                    : std::chrono::steady_clock::time_point{};
  ShadowTicket ticket;
  if (shadowed) {
    ticket = shadow_->Offer(profiles, *fw, *snapshot_, cycle_.next_start_node_index());
  }
  cache_.UpdateSnapshots(*snapshot_, ticket.snapshot);
  // A cycle that ends without handing its ticket over (an exception) gives it back.
  struct TicketGuard {
    ShadowRunner& shadows;
    ShadowTicket& ticket;
    ~TicketGuard() {
      if (ticket) shadows.Release(ticket);
    }
  } ticket_guard{*shadow_, ticket};
  const auto shadow_submit = [&](const std::string& node,
                                 std::shared_ptr<const RecordedCycle> record,
                                 const std::string& nominated) {
    if (!shadowed) return;
    shadow_->CountLive(std::chrono::steady_clock::now() - cycle_start);
    if (ticket) shadow_->Submit(std::move(ticket), info.pod, node, std::move(record), nominated);
  };
  const uint64_t scratch_cycle = fw->scratch().Begin();
  auto state = std::make_unique<framework::CycleState>();
  framework::FrameworkMetrics::BeginAttempt(*state);
  CycleAttempt a = cycle_.SchedulePod(*fw, *snapshot_, *state, pod);
  std::shared_ptr<const RecordedCycle> record;
  if (a.status.ok() || !a.fit_error) record = RecordExplanation(pod, *fw, *state, a, bool(ticket));
  if (a.status.ok()) {
    shadow_submit(a.node, std::move(record), "");
    AssumeAndBind(profiles, *fw, std::move(info), std::move(state), a.node, scratch_cycle);
    return;
  }
  if (!a.fit_error) {
    shadow_submit("", std::move(record), "");
    fw->metrics().EndAttempt(*state, a.status);
    HandleFailure(info, a.status, a.status.Message(), {}, {}, "", false);
    return;
  }
  a.TakeKept();
  auto [nominated, post] = fw->RunPostFilterPlugins(*state, pod.view(), a.node_statuses);
  if (post.code == Code::kError) {
    spdlog::error("scheduler: PostFilter for pod {}/{}: {}", pod.namespace_name(), pod.name(),
                  post.Message());
  }
  // Upstream leaves the per-node reasons out when PreFilter rejected the pod (they would all
  // repeat its message) and appends PostFilter's message as it is, whatever its code (a
  // successful preemption says where it found room).
  std::string message = framework::FitErrorMessage(
      a.num_all_nodes, a.pre_filter_failure ? framework::NodeStatuses{} : a.node_statuses,
      a.pre_filter_failure ? &*a.pre_filter_failure : nullptr);
  if (const std::string post_message = post.Message(); !post_message.empty()) {
    message += " " + post_message;
  }
  record = RecordExplanation(pod, *fw, *state, a, bool(ticket));
  shadow_submit("", std::move(record), nominated);
  fw->metrics().EndAttempt(*state, Status::Make(Code::kUnschedulable, message));
  HandleFailure(info, Status::Make(Code::kUnschedulable, message), message, std::move(a.rejectors),
                std::move(a.pending), nominated, false);
}

std::shared_ptr<const RecordedCycle> Scheduler::RecordExplanation(
    const model::Pod& pod, const framework::Framework& fw, const framework::CycleState& state,
    CycleAttempt& a, bool needed) {
  if (options_.max_explanations == 0 && !needed) return nullptr;
  if (explain_header_fw_ != &fw || explain_header_profiles_.expired()) {
    explain_header_ = MakeExplainHeader(fw);
    explain_header_fw_ = &fw;
    explain_header_profiles_ = RuntimeOf(fw);  // watches `fw`'s lifetime (see scheduler.h)
  }
  std::shared_ptr<RecordedCycle> r =
      cycle_.Record(pod, fw, state, a, explain_header_, &last_explained_statuses_);
  // Kept as 32 bits in the entry; a record never comes near 4 GiB, but the sums must agree.
  // A shared record still counts in full for each pod holding it: the budget errs on the side
  // of less memory.
  const auto bytes = static_cast<uint32_t>(std::min<size_t>(r->Bytes(), UINT32_MAX));
  // Pending pods of one workload fail alike: a record equal to the last one is that one, and
  // a thousand such pods hold one record instead of a thousand.
  std::shared_ptr<const RecordedCycle> record;
  if (last_explained_record_ != nullptr && last_explained_record_->SameAs(*r)) {
    record = last_explained_record_;
  } else {
    record = std::move(r);
    last_explained_record_ = record;
  }
  if (options_.max_explanations == 0) return record;  // for a shadow only: not kept
  std::lock_guard lock(diag_mu_);
  // The cycle recorded the pod's entry when it began; none means the pod was deleted since.
  auto entry = diagnostics_.find(model::UidKey::Probe(pod.uid()));
  if (entry == diagnostics_.end()) return record;
  DropExplanationLocked(entry->second);
  KeepExplanationLocked(entry, record, bytes);
  // Memory grows with pods x evaluated nodes: keep only the most recently recorded, within
  // both the count and the byte budget (the newest is always kept).
  const size_t max_count = std::min(options_.max_explanations, kMaxKeptExplanations);
  while (explanation_count_ > 1 &&
         (explanation_count_ > max_count || explanation_bytes_ > options_.max_explanation_bytes)) {
    DropExplanationLocked(explanations_[oldest_explanation_].entry->second);
  }
  return record;
}

void Scheduler::KeepExplanationLocked(PodEntries::iterator entry,
                                      std::shared_ptr<const RecordedCycle> record, uint32_t bytes) {
  uint32_t slot = 0;
  if (!free_explanations_.empty()) {
    slot = free_explanations_.back();
    free_explanations_.pop_back();
  } else {
    if (explanations_.empty()) explanations_.emplace_back();  // slot 0 stands for none
    slot = static_cast<uint32_t>(explanations_.size());
    explanations_.emplace_back();
  }
  explanations_[slot] = KeptExplanation{entry, std::move(record), bytes, newest_explanation_, 0};
  if (newest_explanation_ != 0) {
    explanations_[newest_explanation_].newer = slot;
  } else {
    oldest_explanation_ = slot;
  }
  newest_explanation_ = slot;
  ++explanation_count_;
  explanation_bytes_ += bytes;
  entry->second.explanation = slot;
}

void Scheduler::DropExplanationLocked(PodEntry& entry) {
  const uint32_t slot = entry.explanation;
  if (slot == 0) return;
  KeptExplanation& kept = explanations_[slot];
  if (kept.older != 0) {
    explanations_[kept.older].newer = kept.newer;
  } else {
    oldest_explanation_ = kept.newer;
  }
  if (kept.newer != 0) {
    explanations_[kept.newer].older = kept.older;
  } else {
    newest_explanation_ = kept.older;
  }
  explanation_bytes_ -= kept.bytes;
  kept = KeptExplanation{};  // lets the record go
  free_explanations_.push_back(slot);
  --explanation_count_;
  entry.explanation = 0;
}

}  // namespace schedhost::scheduler
