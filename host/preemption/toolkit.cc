#include "host/preemption/toolkit.h"

#include <spdlog/spdlog.h>

#include <string>

#include "host/framework/plugin_instance.h"
#include "host/metrics/scheduler_metrics.h"

namespace schedhost::preemption {

using framework::Code;
using framework::Status;

Toolkit::Toolkit(store::Store& store, queue::Nominator& nominator, ToolkitOptions options)
    : store_(store),
      nominator_(nominator),
      options_(std::move(options)),
      store_writer_(store),
      writer_(options_.writer != nullptr ? *options_.writer : store_writer_),
      rng_(options_.seed) {}

std::vector<framework::PdbState> Toolkit::ListPdbs() const {
  std::vector<framework::PdbState> out;
  auto pdbs = store_.List<model::PodDisruptionBudget>();
  if (pdbs.empty()) return out;
  std::vector<PodPtr> pods;
  bool need_pods = false;
  for (const auto& p : pdbs) need_pods = need_pods || !p->data().status.has_disruptions_allowed;
  if (need_pods) pods = store_.List<model::Pod>();
  out.reserve(pdbs.size());
  for (auto& p : pdbs) {
    const int32_t allowed = DisruptionsAllowed(*p, pods);
    out.push_back({std::move(p), allowed});
  }
  return out;
}

std::shared_ptr<const model::PriorityClass> Toolkit::GetPriorityClass(std::string_view name) const {
  return store_.Get<model::PriorityClass>("", name);
}

Status Toolkit::EvictPod(std::string_view plugin, const schedhost_pod_view* victim,
                         const schedhost_pod_view* preemptor, std::string_view reason) {
  const model::Pod* v = model::Pod::FromView(victim);
  if (v == nullptr) return Status::Error("evict_pod: the victim is not a pod view the host made");
  const model::Pod* by = model::Pod::FromView(preemptor);
  if (options_.dry_run) return Status::Success();
  // A victim waiting at Permit is not bound yet: upstream rejects it instead of deleting it.
  if (options_.reject_waiting &&
      options_.reject_waiting(v->uid(), plugin,
                              reason.empty() ? std::string_view("preempted") : reason)) {
    spdlog::debug("preemption: rejected waiting pod {}/{}", v->namespace_name(), v->name());
    return Status::Success();
  }
  try {
    writer_.Evict(*v, by);
  } catch (const store::StoreError& e) {
    return Status::Error("evicting pod " + v->Key() + ": " + e.what());
  }
  spdlog::debug("preemption: evicted pod {}/{}{}", v->namespace_name(), v->name(),
                by ? " for " + by->Key() : std::string());
  if (options_.on_evicted) options_.on_evicted(*v, by);
  return Status::Success();
}

Status Toolkit::SetNominatedNode(const schedhost_pod_view* pod, std::string_view node) {
  const model::Pod* p = model::Pod::FromView(pod);
  if (p == nullptr) return Status::Error("set_nominated_node: not a pod view the host made");
  if (options_.dry_run) return Status::Success();
  try {
    auto stored = writer_.SetNominatedNodeName(*p, node);
    // The store's update event reaches the nominator too; doing it here as well makes the
    // change visible at once, whatever the order of watchers (and before an API server's
    // watch brings it back).
    if (node.empty()) {
      nominator_.Delete(*p);
    } else {
      if (stored == nullptr) stored = store_.Get<model::Pod>(p->namespace_name(), p->name());
      if (stored == nullptr)
        return Status::Error("nominating pod " + p->Key() + ": the pod is gone");
      nominator_.Add(stored, node);
    }
  } catch (const store::StoreError& e) {
    return Status::Error("nominating pod " + p->Key() + ": " + e.what());
  }
  return Status::Success();
}

uint64_t Toolkit::RandomOffset(uint64_t n) {
  if (n == 0) return 0;
  std::lock_guard lock(rng_mu_);
  return rng_() % n;
}

std::string Toolkit::TerminatingVictimOnNominatedNode(const framework::Framework& fw,
                                                      const schedhost_pod_view* pod,
                                                      const NodeStatuses& statuses,
                                                      const Rules& rules) {
  if (rules.custom_eligibility() || pod->nominated_node_name.len == 0) return "";
  const std::string_view nominated = framework::View(pod->nominated_node_name);
  // A nominated node the filters call unresolvable is no reason to wait: preempt again.
  for (const auto& [node, status] : statuses) {
    if (node == nominated && status.code == Code::kUnschedulableAndUnresolvable) return "";
  }
  const cache::Snapshot* snapshot = fw.snapshot();
  const cache::NodeInfo* info = snapshot != nullptr ? snapshot->Get(nominated) : nullptr;
  if (info == nullptr) return "";
  for (const auto& victim : info->pods()) {
    if (rules.IsEligibleVictim(pod, victim->view()) &&
        victim->data().status.terminating_by_preemption) {
      return "not eligible due to a terminating pod on the nominated node.";
    }
  }
  return "";
}

framework::PreemptOutcome Toolkit::Preempt(std::string_view plugin, framework::Framework& fw,
                                           framework::CycleState& state,
                                           const schedhost_pod_view* pod,
                                           const NodeStatuses& statuses,
                                           const schedhost_preemption_callbacks* callbacks) {
  if (!options_.dry_run) metrics::Metrics().preemption_attempts.Inc();
  const Rules rules(callbacks);
  framework::PreemptOutcome out;
  // 1) Is the pod eligible to preempt at all?
  if (std::string why = rules.PodEligible(pod); !why.empty()) {
    out.status = Status::Make(Code::kUnschedulable, "preemption: " + why);
    return out;
  }
  if (std::string why = TerminatingVictimOnNominatedNode(fw, pod, statuses, rules); !why.empty()) {
    out.status = Status::Make(Code::kUnschedulable, "preemption: " + why);
    return out;
  }
  // 2) Candidates from the dry runs.
  const std::vector<framework::PdbState> pdbs = ListPdbs();
  SearchResult found = preemption::FindCandidates(fw, state, pod, statuses, pdbs, rules,
                                                  [this](uint64_t n) { return RandomOffset(n); });
  if (!found.error.ok() && found.candidates.empty()) {
    out.status = found.error;
    return out;
  }
  if (found.candidates.empty()) {
    // The pod keeps no reservation on a node where it cannot go (upstream clears it).
    if (pod->nominated_node_name.len != 0) {
      if (Status s = SetNominatedNode(pod, ""); !s.ok())
        spdlog::warn("preemption: {}", s.Message());
    }
    out.status = Status::Make(Code::kUnschedulable, "preemption: " + framework::FitErrorMessage(
                                                                         found.node_statuses.size(),
                                                                         found.node_statuses));
    return out;
  }
  // 3) The best candidate.
  const Candidate* best = SelectCandidate(found.candidates, rules);
  if (best == nullptr || best->node.empty()) {
    out.status = Status::Make(Code::kUnschedulable, "preemption: no candidate node for preemption");
    return out;
  }
  if (!options_.dry_run) {
    metrics::Metrics().preemption_victims.Observe(static_cast<double>(best->victims.size()));
  }
  // 4) Act: evict the victims (or reject them at Permit), then clear the nominations of
  // lower-priority pods on that node: they may no longer fit and go looking elsewhere.
  const model::Pod* preemptor = model::Pod::FromView(pod);
  const std::string reason =
      preemptor ? "preempted by " + preemptor->Key() : std::string("preempted");
  for (const PodPtr& victim : best->victims) {
    if (Status s = EvictPod(plugin, victim->view(), pod, reason); !s.ok()) {
      out.status = Status::Error("preemption: " + s.Message());
      return out;
    }
  }
  const std::string_view uid(pod->uid.data, pod->uid.len);
  for (const PodPtr& nominated : nominator_.NominatedPodsForNode(best->node)) {
    if (nominated->priority() >= pod->priority || nominated->uid() == uid) continue;
    if (Status s = SetNominatedNode(nominated->view(), ""); !s.ok()) {
      spdlog::warn("preemption: clearing a lower-priority nomination: {}", s.Message());
    }
  }
  out.nominated_node = best->node;
  // Upstream's words, which end up in the preemptor's FitError message.
  out.status = Status::Make(
      Code::kSuccess, "preemption: found a potential placement for pod on node " + best->node +
                          ", preempting " + std::to_string(best->victims.size()) + " victims");
  return out;
}

Status Toolkit::FindCandidates(framework::Framework& fw, framework::CycleState& state,
                               const schedhost_pod_view* pod, const NodeStatuses& statuses,
                               const schedhost_preemption_callbacks* callbacks,
                               int32_t (*fn)(void* user, const schedhost_candidate* c),
                               void* user) {
  const Rules rules(callbacks);
  SearchResult found = preemption::FindCandidates(fw, state, pod, statuses, ListPdbs(), rules,
                                                  [this](uint64_t n) { return RandomOffset(n); });
  if (!found.error.ok() && found.candidates.empty()) return found.error;
  for (const Candidate& c : found.candidates) {
    CandidateView v(c);
    if (fn(user, v.get()) != 0) break;
  }
  return Status::Success();
}

}  // namespace schedhost::preemption
