#include "capacity_scheduling.h"

#include <utility>

namespace schedhost::contrib {
namespace {

using capacity::QuotaTable;

// A nominated pod that never reserves (deleted, or nominated elsewhere) stops counting after
// this long; the plugin sees no pod deletions to forget it sooner.
constexpr std::chrono::minutes kNominationTtl{5};

// VictimRule is PostFilter's victim eligibility for one preemptor, decided from the usage the
// cycle saw before any dry run removed a pod (the toolkit's callback has no cycle state).
struct VictimRule {
  const QuotaTable* table = nullptr;
  bool preemptor_has_quota = false;
  // Within its min with this pod: the namespace may reclaim its guarantee from borrowers.
  bool preemptor_within_min = false;
  std::vector<bool> borrowing;  // per quota: uses more than its min
};

}  // namespace

CapacityScheduling::CapacityScheduling(const Host& host, const Args& args)
    : Plugin(host),
      table_(ParseCapacitySchedulingArgs(args).quotas,
             [&host](std::string_view s) { return host.Intern(s); }),
      state_key_(host.Intern("CapacityScheduling/QuotaState")) {}

CapacityScheduling::QuotaState CapacityScheduling::Snapshot(const Pod& pod) {
  QuotaState s;
  if (std::optional<size_t> q = table_.IndexOf(pod.namespace_id())) {
    s.quota = static_cast<int64_t>(*q);
  }
  s.request = table_.Project(pod.requests());
  s.used = table_.EmptyUsage();
  // Usage is recomputed from the snapshot every cycle rather than kept from events: the
  // snapshot holds every bound and assumed pod, so a restart, a deleted pod or a missed event
  // cannot leave the count wrong. Nodes unchanged since the last cycle reuse their sums.
  std::lock_guard lock(nodes_mu_);
  const uint64_t stamp = ++snapshots_;
  const size_t n = host().NodeCount();
  for (size_t i = 0; i < n; ++i) {
    std::optional<NodeInfo> ni = host().NodeAt(i);
    if (!ni) continue;
    const std::string_view name = ni->node().name();
    auto it = nodes_.find(name);
    if (it == nodes_.end()) it = nodes_.emplace(std::string(name), NodeUsage{}).first;
    NodeUsage& nu = it->second;
    nu.seen_in = stamp;
    if (nu.generation != ni->generation() || nu.used.size() != table_.size()) {
      nu.generation = ni->generation();
      nu.used = table_.EmptyUsage();
      nu.uids.clear();
      for (Pod p : ni->pods()) {
        std::optional<size_t> q = table_.IndexOf(p.namespace_id());
        if (!q) continue;
        nu.uids.emplace(p.uid());
        table_.AddProjected(nu.used[*q], p.requests());
      }
    }
    for (size_t q = 0; q < s.used.size(); ++q) capacity::Add(s.used[q], nu.used[q]);
  }
  std::erase_if(nodes_, [stamp](const auto& kv) { return kv.second.seen_in != stamp; });
  // Reserved pods the snapshot does not hold yet count too, and so do pods nominated by this
  // plugin's preemption with at least this pod's priority (as upstream: a namespace's reclaimed
  // room is not handed out twice, but a more important pod is not held back by a nomination).
  auto counted = [&](std::string_view uid) {
    if (uid == pod.uid()) return true;
    for (const auto& [node, nu] : nodes_) {
      if (nu.uids.count(std::string(uid)) != 0) return true;
    }
    return false;
  };
  reserved_.AddTo(s.used, counted);
  nominated_.PruneOlderThan(kNominationTtl);
  nominated_.AddTo(s.used, counted, pod.priority());
  return s;
}

Status CapacityScheduling::PreFilter(CycleState& state, const Pod& pod, PreFilterResult&) {
  auto s = std::make_unique<QuotaState>(Snapshot(pod));
  const int64_t q = s->quota;
  std::optional<std::string> why;
  if (q >= 0) why = table_.Check(static_cast<size_t>(q), s->used, s->request);
  state.Write(state_key_, std::move(s));
  if (why) return Status::Unschedulable(*why);
  return {};
}

void CapacityScheduling::Update(CycleState& state, const Pod& other, int sign) const {
  auto* s = state.Read<QuotaState>(state_key_);
  if (s == nullptr) return;
  std::optional<size_t> q = table_.IndexOf(other.namespace_id());
  if (!q) return;
  const capacity::Amounts req = table_.Project(other.requests());
  if (sign > 0) {
    capacity::Add(s->used[*q], req);
  } else {
    capacity::Subtract(s->used[*q], req);
  }
}

Status CapacityScheduling::AddPod(CycleState& state, const Pod&, const Pod& to_add,
                                  const NodeInfo&) {
  // Nominated pods the host adds on a node for Filter (those of at least the pod's priority)
  // are counted by Snapshot already.
  if (nominated_.Contains(to_add.uid())) return {};
  Update(state, to_add, 1);
  return {};
}

Status CapacityScheduling::RemovePod(CycleState& state, const Pod&, const Pod& to_remove,
                                     const NodeInfo&) {
  Update(state, to_remove, -1);
  return {};
}

Status CapacityScheduling::Filter(const CycleState& state, const Pod&, const NodeInfo&) {
  // PreFilter has checked the quota already; this matters where the usage differs from its:
  // preemption's dry runs (victims removed) and nominated pods counted on a node.
  const auto* s = state.Read<QuotaState>(state_key_);
  if (s == nullptr || s->quota < 0) return {};
  if (std::optional<std::string> why =
          table_.Check(static_cast<size_t>(s->quota), s->used, s->request)) {
    return Status::Unschedulable(*why);
  }
  return {};
}

int32_t CapacityScheduling::EligibleVictim(void* user, const schedhost_pod_view* preemptor,
                                           const schedhost_pod_view* victim) noexcept {
  const auto* rule = static_cast<const VictimRule*>(user);
  if (rule == nullptr || preemptor == nullptr || victim == nullptr) return 0;
  const std::optional<size_t> vq = rule->table->IndexOf(victim->namespace_id);
  if (!rule->preemptor_has_quota) {
    // Outside the quotas, only among pods outside them, by priority (as upstream).
    return !vq && victim->priority < preemptor->priority ? 1 : 0;
  }
  if (!vq) return 0;  // pods without a quota are not a quota's business
  if (victim->namespace_id == preemptor->namespace_id) {
    return victim->priority < preemptor->priority ? 1 : 0;
  }
  // Another namespace's pod: only to take back a guarantee it is borrowing.
  return rule->preemptor_within_min && rule->borrowing[*vq] ? 1 : 0;
}

Status CapacityScheduling::PostFilter(CycleState& state, const Pod& pod,
                                      const NodeStatusMap& statuses, std::string&) {
  // Another PreFilter may have rejected the pod before this one ran: take the usage now, so
  // the dry runs' Filter calls see it too (they clone this state).
  auto* s = state.Read<QuotaState>(state_key_);
  if (s == nullptr) {
    state.Write(state_key_, std::make_unique<QuotaState>(Snapshot(pod)));
    s = state.Read<QuotaState>(state_key_);
    if (s == nullptr) return Status::Error("CapacityScheduling: cannot keep the quota state");
  }
  VictimRule rule;
  rule.table = &table_;
  rule.preemptor_has_quota = s->quota >= 0;
  if (rule.preemptor_has_quota) {
    rule.preemptor_within_min =
        !table_.OverMinWith(static_cast<size_t>(s->quota), s->used, s->request);
  }
  rule.borrowing.resize(table_.size());
  for (size_t q = 0; q < table_.size(); ++q) rule.borrowing[q] = table_.Borrowing(q, s->used);
  schedhost_preemption_callbacks callbacks{};
  callbacks.struct_size = sizeof(callbacks);
  callbacks.user = &rule;
  callbacks.is_eligible_victim = &CapacityScheduling::EligibleVictim;
  Status result = host().Preempt(state, pod, statuses, &callbacks);
  if (result.ok() && s->quota >= 0) {
    nominated_.Add(pod.uid(), static_cast<size_t>(s->quota), s->request, pod.priority());
  }
  return result;
}

Status CapacityScheduling::Reserve(CycleState&, const Pod& pod, std::string_view) {
  nominated_.Remove(pod.uid());
  if (std::optional<size_t> q = table_.IndexOf(pod.namespace_id())) {
    reserved_.Add(pod.uid(), *q, table_.Project(pod.requests()));
  }
  return {};
}

void CapacityScheduling::Unreserve(CycleState&, const Pod& pod, std::string_view) {
  reserved_.Remove(pod.uid());
}

void CapacityScheduling::PostBind(CycleState&, const Pod& pod, std::string_view) {
  // Bound: the snapshot counts it from now on (and stops counting it once it is deleted).
  reserved_.Remove(pod.uid());
}

}  // namespace schedhost::contrib

SCHEDHOST_PLUGIN_LIBRARY(schedhost::contrib::CapacityScheduling)
