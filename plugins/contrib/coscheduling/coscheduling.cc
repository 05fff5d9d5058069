#include "coscheduling.h"

#include <functional>
#include <optional>
#include <set>
#include <span>
#include <utility>

namespace schedhost::contrib {
namespace {

using Clock = std::chrono::steady_clock;

std::string GroupName(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

std::string SecondsText(std::chrono::nanoseconds d) {
  const double s = static_cast<double>(d.count()) / 1e9;
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t + "s";
}

// NotHelped is PostFilter's "nothing done": Unschedulable without a reason, so the pod's message
// stays that of the plugins that rejected it.
Status NotHelped() { return {Code::kUnschedulable, std::vector<std::string>{}}; }

}  // namespace

Coscheduling::Coscheduling(const Host& host, const Args& args)
    : Plugin(host),
      args_(ParseCoschedulingArgs(args)),
      group_label_(host.Intern(kPodGroupLabel)),
      rejected_key_(host.Intern("Coscheduling/PreFilterRejected")),
      groups_(std::make_unique<GroupRegistry>()) {
  // A new member may complete a group; a deleted or released pod and a new or grown node may
  // make room; a deleted pending member corrects the member count.
  const int32_t node_actions = SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE |
                               SCHEDHOST_ACTION_UPDATE_NODE_LABEL |
                               SCHEDHOST_ACTION_UPDATE_NODE_TAINT;
  events_ = {
      {{SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_ADD}, &Coscheduling::Hint},
      {{SCHEDHOST_RESOURCE_UNSCHEDULED_POD, SCHEDHOST_ACTION_DELETE}, &Coscheduling::Hint},
      {{SCHEDHOST_RESOURCE_ASSIGNED_POD, SCHEDHOST_ACTION_DELETE}, &Coscheduling::Hint},
      {{SCHEDHOST_RESOURCE_NODE, node_actions}, &Coscheduling::Hint},
  };
}

std::optional<GroupKey> Coscheduling::GroupOf(const schedhost_pod_view* pod) const {
  if (pod == nullptr) return std::nullopt;
  std::optional<Id> v = Labels(pod->labels).Get(group_label_);
  if (!v || *v == SCHEDHOST_ID_EMPTY) return std::nullopt;
  return GroupKey{pod->namespace_id, *v};
}

Status Coscheduling::PreEnqueue(const Pod& pod) {
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return {};
  MinAvailable min = ParseMinAvailable(pod);
  if (!min.error.empty()) {
    return Status::UnschedulableAndUnresolvable(
        "pod group " + GroupName(pod.namespace_name(), host().IdString(key->name_id)) + ": " +
        min.error);
  }
  groups_->Observe(*key, pod.namespace_name(), host().IdString(key->name_id), pod.uid(),
                   pod.creation_timestamp_ns(), min.value);
  return {};
}

bool Coscheduling::Less(const QueuedPod& a, const QueuedPod& b) {
  // Upstream's order: priority, then the group's creation time (a pod alone: its own), then
  // namespace/group (or namespace/pod) name; the pod name last keeps the order total.
  const Pod pa = a.pod();
  const Pod pb = b.pod();
  if (pa.priority() != pb.priority()) return pa.priority() > pb.priority();
  auto key_of = [this](const Pod& p) {
    if (std::optional<GroupKey> g = GroupOf(p.raw())) {
      if (std::optional<SortKey> k = groups_->Sort(*g)) return *k;
    }
    return SortKey{p.creation_timestamp_ns(), p.namespace_name(), p.name()};
  };
  const SortKey ka = key_of(pa);
  const SortKey kb = key_of(pb);
  if (ka.created_ns != kb.created_ns) return ka.created_ns < kb.created_ns;
  if (ka.namespace_name != kb.namespace_name) return ka.namespace_name < kb.namespace_name;
  if (ka.name != kb.name) return ka.name < kb.name;
  return pa.name() < pb.name();
}

std::span<const schedhost_event_registration> Coscheduling::EventsToRegister() { return events_; }

int32_t Coscheduling::Hint(void* instance, const schedhost_pod_view* pod,
                           const schedhost_cluster_event* event,
                           const schedhost_event_object* old_obj,
                           const schedhost_event_object* new_obj) noexcept {
  try {
    auto* self = static_cast<Coscheduling*>(instance);
    std::optional<GroupKey> mine = self->GroupOf(pod);
    if (!mine || event == nullptr) return SCHEDHOST_QUEUE;
    const schedhost_pod_view* other = nullptr;
    if (new_obj != nullptr && new_obj->pod != nullptr) other = new_obj->pod;
    if (other == nullptr && old_obj != nullptr) other = old_obj->pod;
    std::optional<GroupKey> theirs = self->GroupOf(other);
    const bool sibling = theirs && *theirs == *mine;
    if (event->resource == SCHEDHOST_RESOURCE_NODE) {  // room may have appeared
      self->groups_->Lift(*mine);
      return SCHEDHOST_QUEUE;
    }
    if ((event->actions & SCHEDHOST_ACTION_ADD) != 0) {
      // Only a new member can help a group short of pods; another pod only takes room.
      if (!sibling) return SCHEDHOST_QUEUE_SKIP;
      if (event->resource != SCHEDHOST_RESOURCE_ASSIGNED_POD) {
        self->groups_->Observe(*mine, Pod(other).namespace_name(),
                               self->host().IdString(mine->name_id), Pod(other).uid(),
                               other->creation_timestamp_ns, ParseMinAvailable(Pod(other)).value);
      }
      return SCHEDHOST_QUEUE;
    }
    if (event->resource == SCHEDHOST_RESOURCE_UNSCHEDULED_POD) {  // fewer members never help
      if (sibling) self->groups_->Forget(*mine, Pod(other).uid());
      return SCHEDHOST_QUEUE_SKIP;
    }
    // An assigned pod went away. A sibling released by the group's own rejection frees nothing
    // the group could use: retrying on it is the churn that keeps a gang that does not fit
    // cycling. Anything else may have made room, so the group's denial ends early.
    if (sibling) return SCHEDHOST_QUEUE_SKIP;
    self->groups_->Lift(*mine);
    return SCHEDHOST_QUEUE;
  } catch (...) {
    return SCHEDHOST_QUEUE;
  }
}

namespace {

// WaitingOf collects the waiting pods of one group (handles are valid while they wait).
struct WaitingOf {
  const schedhost_host_api* api;
  std::function<bool(const schedhost_pod_view*)> in_group;
  std::vector<schedhost_waiting_pod*> found;
};

std::vector<schedhost_waiting_pod*> Collect(const Host& host,
                                            std::function<bool(const schedhost_pod_view*)> in) {
  WaitingOf w{host.api(), std::move(in), {}};
  host.api()->waiting_pods_iterate(
      host.handle(),
      [](void* user, schedhost_waiting_pod* wp) noexcept -> int32_t {
        auto* c = static_cast<WaitingOf*>(user);
        try {
          const schedhost_pod_view* p = c->api->waiting_pod_pod(wp);
          if (p != nullptr && c->in_group(p)) c->found.push_back(wp);
        } catch (...) {
        }
        return 0;
      },
      &w);
  return std::move(w.found);
}

}  // namespace

size_t Coscheduling::Placed(const GroupKey& key, std::string_view except_uid) const {
  std::set<std::string, std::less<>> uids;
  auto consider = [&](const schedhost_pod_view* p) {
    if (GroupOf(p) == key && ToView(p->uid) != except_uid) uids.emplace(ToView(p->uid));
    return false;
  };
  const size_t n = host().NodeCount();
  for (size_t i = 0; i < n; ++i) {
    std::optional<NodeInfo> ni = host().NodeAt(i);
    if (!ni) continue;
    for (Pod p : ni->pods()) consider(p.raw());
  }
  Collect(host(), consider);  // waiting pods are assumed, but count them even if not snapshotted
  return uids.size();
}

size_t Coscheduling::RejectWaiting(const GroupKey& key, std::string_view message) const {
  size_t n = 0;
  for (schedhost_waiting_pod* wp :
       Collect(host(), [&](const schedhost_pod_view* p) { return GroupOf(p) == key; })) {
    if (host().api()->waiting_pod_reject(wp, ToStr(kName), ToStr(message)) == SCHEDHOST_OK) ++n;
  }
  return n;
}

void Coscheduling::AllowWaiting(const GroupKey& key) const {
  for (schedhost_waiting_pod* wp :
       Collect(host(), [&](const schedhost_pod_view* p) { return GroupOf(p) == key; })) {
    host().api()->waiting_pod_allow(wp, ToStr(kName));
  }
}

Status Coscheduling::PreFilter(CycleState& state, const Pod& pod, PreFilterResult&) {
  state.Delete(rejected_key_);
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return {};
  const std::string_view name = host().IdString(key->name_id);
  const std::string group = GroupName(pod.namespace_name(), name);
  MinAvailable own = ParseMinAvailable(pod);
  // PostFilter runs after a PreFilter rejection too; the mark tells it the group was not tried.
  auto reject = [&](std::string why) {
    state.Write(rejected_key_, std::make_unique<bool>(true));
    return Status::UnschedulableAndUnresolvable(std::move(why));
  };
  if (!own.error.empty()) return reject("pod group " + group + ": " + own.error);
  // Without PreEnqueue (queue_sort only, or PreEnqueue disabled) the pod is met here first.
  const int32_t min = groups_->Observe(*key, pod.namespace_name(), name, pod.uid(),
                                       pod.creation_timestamp_ns(), own.value);
  if (std::optional<std::string> why = groups_->Denied(*key, Clock::now())) {
    return reject("pod group " + group + " is denied for " + SecondsText(args_.denied_group_retry) +
                  " after " + *why);
  }
  // Members: those met in the queue, plus those already assumed, bound or waiting.
  std::set<std::string, std::less<>> members = groups_->Members(*key);
  const size_t n = host().NodeCount();
  for (size_t i = 0; i < n; ++i) {
    std::optional<NodeInfo> ni = host().NodeAt(i);
    if (!ni) continue;
    for (Pod p : ni->pods()) {
      if (GroupOf(p.raw()) == key) members.emplace(p.uid());
    }
  }
  // A group just met may still be arriving (this host sends no event when a pending pod is
  // created, so a member rejected now would not come back when the rest arrive): within the
  // grace its members go on to wait at Permit instead.
  const bool assembling = args_.assembly_grace.count() > 0 &&
                          Clock::now() - groups_->MetAt(*key) < args_.assembly_grace;
  if (members.size() < static_cast<size_t>(min) && !assembling) {
    return reject("pod group " + group + " has " + std::to_string(members.size()) + " of the " +
                  std::to_string(min) + " pods it needs (" + std::string(kMinAvailableAnnotation) +
                  ")");
  }
  return {};
}

Status Coscheduling::PostFilter(CycleState& state, const Pod& pod, const NodeStatusMap&,
                                std::string&) {
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return NotHelped();
  // Rejected by this plugin's PreFilter (denied, too few members): no member was tried, so
  // there is nothing to release and no new denial to start.
  if (state.Read<bool>(rejected_key_) != nullptr) return NotHelped();
  const int32_t min = groups_->MinAvailable(*key);
  const size_t placed = Placed(*key, pod.uid());
  // Enough members are placed already: the group stands without this one.
  if (placed >= static_cast<size_t>(min)) {
    return NotHelped();
  }
  const std::string group = GroupName(pod.namespace_name(), host().IdString(key->name_id));
  const std::string reason = "member " + std::string(pod.name()) + " did not fit";
  const size_t rejected =
      RejectWaiting(*key, "pod group " + group + " rejected: " + reason + " (PostFilter)");
  if (args_.denied_group_retry.count() > 0) {
    groups_->Deny(*key, Clock::now() + args_.denied_group_retry, reason);
  }
  host().Log(SCHEDHOST_LOG_DEBUG, "pod group " + group + " rejected (" + reason + "), " +
                                      std::to_string(rejected) + " waiting member(s) released");
  return Status::Unschedulable("pod group " + group + " rejected: " + reason);
}

Status Coscheduling::Reserve(CycleState&, const Pod&, std::string_view) { return {}; }

void Coscheduling::Unreserve(CycleState&, const Pod& pod, std::string_view) {
  // A member that leaves (Permit timeout or rejection, a failed bind) takes its group with it:
  // the rest would otherwise hold their reservations until their own timers fire.
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return;
  const std::string group = GroupName(pod.namespace_name(), host().IdString(key->name_id));
  RejectWaiting(*key, "pod group " + group + " rejected: member " + std::string(pod.name()) +
                          " was unreserved");
}

Status Coscheduling::Permit(CycleState&, const Pod& pod, std::string_view,
                            std::chrono::nanoseconds& timeout) {
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return {};
  const int32_t min = groups_->MinAvailable(*key);
  // This pod is assumed now; the snapshot of this cycle does not hold it yet.
  const size_t placed = Placed(*key, pod.uid()) + 1;
  if (placed >= static_cast<size_t>(min)) {
    AllowWaiting(*key);
    return {};
  }
  timeout = args_.permit_waiting_time;
  return Status::Wait();
}

}  // namespace schedhost::contrib

SCHEDHOST_PLUGIN_LIBRARY(schedhost::contrib::Coscheduling)
