#include "capacity_scheduling.h"

#include <string>
#include <vector>
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
    : Plugin(host), state_key_(host.Intern("CapacityScheduling/QuotaState")) {
  ParseCapacitySchedulingArgs(args);
}

std::shared_ptr<const CapacityScheduling::Quotas> CapacityScheduling::QuotasOf(
    const CycleState& state) {
  // The objects' identities and versions first: cheap, and enough to tell whether anything
  // changed since the last cycle. The host lists them by namespace, then name.
  struct Listed {
    std::string namespace_name;
    std::string name;
    Args object;
  };
  std::vector<Listed> listed;
  std::vector<std::string> from;
  const int32_t rc = host().ListObjects(state, 0, "", [&](Args object) {
    const Args meta = object["metadata"];
    listed.push_back({meta["namespace"].String("default"), meta["name"].String(""), object});
    from.push_back(listed.back().namespace_name + "/" + listed.back().name + "@" +
                   meta["resourceVersion"].String(""));
    return true;
  });
  auto table_of = [this](const std::vector<capacity::QuotaSpec>& specs) {
    return std::make_shared<const QuotaTable>(
        specs, [this](std::string_view n) { return host().Intern(n); });
  };
  std::lock_guard lock(quotas_mu_);
  if (rc != SCHEDHOST_OK) {
    std::string why;
    host().KindAvailable(0, &why);
    if (why.empty()) why = "the host answered " + std::to_string(rc);
    if (!quotas_ || quotas_->unavailable != why) {
      auto q = std::make_shared<Quotas>();
      q->table = table_of({});
      q->unavailable = std::move(why);
      quotas_ = std::move(q);
      quotas_from_.clear();
    }
    return quotas_;
  }
  if (quotas_ && quotas_->unavailable.empty() && from == quotas_from_) return quotas_;
  auto q = std::make_shared<Quotas>();
  std::vector<capacity::QuotaSpec> specs;
  for (size_t first = 0, last = 0; first < listed.size(); first = last) {
    const std::string& ns = listed[first].namespace_name;
    last = first + 1;
    while (last < listed.size() && listed[last].namespace_name == ns) ++last;
    if (last - first > 1) {
      std::string list;
      for (size_t i = first; i < last; ++i) list += (i == first ? "" : ", ") + listed[i].name;
      q->invalid.insert_or_assign(ns, "namespace " + ns + " has " +
                                          std::to_string(last - first) + " ElasticQuotas (" +
                                          list + "); CapacityScheduling takes one per namespace");
      continue;
    }
    try {
      specs.push_back(DecodeElasticQuota(listed[first].object, ns));
    } catch (const ArgsError& e) {
      q->invalid.insert_or_assign(ns, e.what());
    }
  }
  q->table = table_of(specs);
  if (quotas_ != nullptr) {
    host().Log(SCHEDHOST_LOG_INFO,
               "CapacityScheduling: " + std::to_string(specs.size()) + " ElasticQuota(s) in force" +
                   (q->invalid.empty()
                        ? std::string()
                        : ", " + std::to_string(q->invalid.size()) + " namespace(s) held: " +
                              q->invalid.begin()->second));
  }
  quotas_ = std::move(q);
  quotas_from_ = std::move(from);
  return quotas_;
}

CapacityScheduling::QuotaState CapacityScheduling::Snapshot(
    const Pod& pod, std::shared_ptr<const QuotaTable> table) {
  QuotaState s;
  const QuotaTable& t = *table;
  if (std::optional<size_t> q = t.IndexOf(pod.namespace_id())) {
    s.quota = static_cast<int64_t>(*q);
  }
  s.request = t.Project(pod.requests());
  s.used = t.EmptyUsage();
  // Usage is recomputed from the snapshot every cycle rather than kept from events: the
  // snapshot holds every bound and assumed pod, so a restart, a deleted pod or a missed event
  // cannot leave the count wrong. Nodes unchanged since the last cycle reuse their sums.
  std::lock_guard lock(nodes_mu_);
  if (nodes_table_ != table) {
    // The sums are per quota of one table: another table (an ElasticQuota change) starts over.
    nodes_.clear();
    nodes_table_ = table;
  }
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
    if (nu.generation != ni->generation() || nu.used.size() != t.size()) {
      nu.generation = ni->generation();
      nu.used = t.EmptyUsage();
      nu.uids.clear();
      for (Pod p : ni->pods()) {
        std::optional<size_t> q = t.IndexOf(p.namespace_id());
        if (!q) continue;
        nu.uids.emplace(p.uid());
        t.AddProjected(nu.used[*q], p.requests());
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
  reserved_.AddTo(t, s.used, counted);
  nominated_.PruneOlderThan(kNominationTtl);
  nominated_.AddTo(t, s.used, counted, pod.priority());
  s.table = std::move(table);
  return s;
}

Status CapacityScheduling::PreFilter(CycleState& state, const Pod& pod, PreFilterResult&) {
  const std::shared_ptr<const Quotas> quotas = QuotasOf(state);
  // Nothing is admitted on a guess: a quota the plugin cannot read or use holds the pods it
  // may govern.
  if (!quotas->unavailable.empty()) {
    return Status::UnschedulableAndUnresolvable("cannot read ElasticQuotas: " +
                                                quotas->unavailable);
  }
  if (auto bad = quotas->invalid.find(pod.namespace_name()); bad != quotas->invalid.end()) {
    return Status::UnschedulableAndUnresolvable(bad->second);
  }
  auto s = std::make_unique<QuotaState>(Snapshot(pod, quotas->table));
  const int64_t q = s->quota;
  std::optional<std::string> why;
  if (q >= 0) why = s->table->Check(static_cast<size_t>(q), s->used, s->request);
  state.Write(state_key_, std::move(s));
  if (why) return Status::Unschedulable(*why);
  return {};
}

void CapacityScheduling::Update(CycleState& state, const Pod& other, int sign) const {
  auto* s = state.Read<QuotaState>(state_key_);
  if (s == nullptr || !s->table) return;
  std::optional<size_t> q = s->table->IndexOf(other.namespace_id());
  if (!q) return;
  const capacity::Amounts req = s->table->Project(other.requests());
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
  if (s == nullptr || s->quota < 0 || !s->table) return {};
  if (std::optional<std::string> why =
          s->table->Check(static_cast<size_t>(s->quota), s->used, s->request)) {
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
    state.Write(state_key_, std::make_unique<QuotaState>(Snapshot(pod, QuotasOf(state)->table)));
    s = state.Read<QuotaState>(state_key_);
    if (s == nullptr) return Status::Error("CapacityScheduling: cannot keep the quota state");
  }
  const QuotaTable& t = *s->table;
  VictimRule rule;
  rule.table = &t;
  rule.preemptor_has_quota = s->quota >= 0;
  if (rule.preemptor_has_quota) {
    rule.preemptor_within_min = !t.OverMinWith(static_cast<size_t>(s->quota), s->used, s->request);
  }
  rule.borrowing.resize(t.size());
  for (size_t q = 0; q < t.size(); ++q) rule.borrowing[q] = t.Borrowing(q, s->used);
  schedhost_preemption_callbacks callbacks{};
  callbacks.struct_size = sizeof(callbacks);
  callbacks.user = &rule;
  callbacks.is_eligible_victim = &CapacityScheduling::EligibleVictim;
  Status result = host().Preempt(state, pod, statuses, &callbacks);
  if (result.ok() && s->quota >= 0) {
    nominated_.Add(pod.uid(), pod.namespace_id(), pod.requests(), pod.priority());
  }
  return result;
}

Status CapacityScheduling::Reserve(CycleState&, const Pod& pod, std::string_view) {
  nominated_.Remove(pod.uid());
  // Every reserved pod is remembered, quota or not: the table may gain its namespace (a new
  // ElasticQuota) before the pod reaches the snapshot.
  reserved_.Add(pod.uid(), pod.namespace_id(), pod.requests());
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
