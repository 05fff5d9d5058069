#include "coscheduling.h"

#include <algorithm>
#include <ctime>
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

// NowRfc3339 is the time now as the API server writes it ("2026-12-05T05:41:09Z").
std::string NowRfc3339() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
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
      pods_id_(host.Intern("pods")),
      groups_(std::make_unique<GroupRegistry>()) {
  // A PodGroup created or changed may let its members in; a new member may complete a group;
  // a deleted or released pod and a new or grown node may make room; a deleted pending member
  // corrects the member count.
  const int32_t node_actions = SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE |
                               SCHEDHOST_ACTION_UPDATE_NODE_LABEL |
                               SCHEDHOST_ACTION_UPDATE_NODE_TAINT;
  events_ = {
      {{SCHEDHOST_KIND_EVENT(0), SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE},
       &Coscheduling::Hint},
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

std::variant<PodGroupSpec, Status> Coscheduling::ReadGroup(
    const CycleState* state, const GroupKey& key, std::string_view namespace_name) const {
  const std::string_view name = host().IdString(key.name_id);
  int32_t rc = SCHEDHOST_OK;
  const Args object = state != nullptr ? host().GetObject(*state, 0, namespace_name, name, &rc)
                                       : host().GetObject(0, namespace_name, name, &rc);
  const std::string group = GroupName(namespace_name, name);
  if (rc == SCHEDHOST_E_NOT_FOUND) {
    return Status::UnschedulableAndUnresolvable("PodGroup " + group + " not found");
  }
  if (rc != SCHEDHOST_OK) {
    std::string why;
    host().KindAvailable(0, &why);
    if (why.empty()) why = "the host answered " + std::to_string(rc);
    return Status::UnschedulableAndUnresolvable("cannot read PodGroup " + group + ": " + why);
  }
  // A PodGroup that does not decode is the object's fault: the message names it and the field,
  // and its members wait until it is fixed.
  try {
    return DecodePodGroup(host(), object);
  } catch (const ArgsError& e) {
    return Status::UnschedulableAndUnresolvable(e.what());
  }
}

Status Coscheduling::PreEnqueue(const Pod& pod) {
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return {};
  std::variant<PodGroupSpec, Status> group = ReadGroup(nullptr, *key, pod.namespace_name());
  if (Status* why = std::get_if<Status>(&group)) return std::move(*why);
  const PodGroupSpec& spec = std::get<PodGroupSpec>(group);
  Meet(*key, pod, spec);
  return {};
}

void Coscheduling::Meet(const GroupKey& key, const Pod& pod, const PodGroupSpec& spec) {
  groups_->Observe(key, pod.namespace_name(), host().IdString(key.name_id), pod.uid(),
                   spec.created_ns != 0 ? spec.created_ns : pod.creation_timestamp_ns());
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
    if (event->resource == SCHEDHOST_KIND_EVENT(0)) {  // the pod's own PodGroup, or not ours
      const Args group = EventObject(new_obj).object(self->host());
      const bool own =
          group.present() &&
          group["metadata"]["name"].String("") == self->host().IdString(mine->name_id) &&
          group["metadata"]["namespace"].String("default") == ToView(pod->namespace_name);
      if (!own) return SCHEDHOST_QUEUE_SKIP;
      self->groups_->Lift(*mine);  // a new minMember or minResources deserves a new try
      return SCHEDHOST_QUEUE;
    }
    std::optional<GroupKey> theirs = self->GroupOf(other);
    const bool sibling = theirs && *theirs == *mine;
    if (event->resource == SCHEDHOST_RESOURCE_NODE) {  // room may have appeared
      self->groups_->Lift(*mine);
      return SCHEDHOST_QUEUE;
    }
    if ((event->actions & SCHEDHOST_ACTION_ADD) != 0) {
      // Only a new member can help a group short of pods; another pod only takes room.
      if (!sibling) return SCHEDHOST_QUEUE_SKIP;
      // A pending sibling counts from now on; a group not met yet (its PodGroup missing) is
      // created by PreEnqueue, with the PodGroup's creation time, not here.
      if (event->resource != SCHEDHOST_RESOURCE_ASSIGNED_POD) {
        self->groups_->Join(*mine, Pod(other).uid());
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

void Coscheduling::OnNodes(const GroupKey& key, std::set<std::string, std::less<>>& uids) const {
  const size_t n = host().NodeCount();
  for (size_t i = 0; i < n; ++i) {
    std::optional<NodeInfo> ni = host().NodeAt(i);
    if (!ni) continue;
    for (Pod p : ni->pods()) {
      if (GroupOf(p.raw()) == key) uids.emplace(p.uid());
    }
  }
}

size_t Coscheduling::Placed(const GroupKey& key, std::string_view except_uid) const {
  std::set<std::string, std::less<>> uids;
  OnNodes(key, uids);
  // Waiting pods are assumed, but count them even if not snapshotted.
  Collect(host(), [&](const schedhost_pod_view* p) {
    if (GroupOf(p) == key) uids.emplace(ToView(p->uid));
    return false;
  });
  if (auto self = uids.find(except_uid); self != uids.end()) uids.erase(self);
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

std::optional<std::string> Coscheduling::LacksResources(const GroupKey& key,
                                                        const PodGroupSpec& spec) const {
  // What the group needs beyond what its own pods hold already: minResources, and minMember
  // pods (upstream counts pods as a resource too).
  std::vector<std::pair<Id, int64_t>> need = spec.min_resources;
  auto pods = std::find_if(need.begin(), need.end(), [&](const auto& r) { return r.first == pods_id_; });
  if (pods == need.end()) {
    need.emplace_back(pods_id_, spec.min_member);
  } else {
    pods->second = spec.min_member;
  }
  const size_t n = host().NodeCount();
  for (size_t i = 0; i < n; ++i) {
    std::optional<NodeInfo> ni = host().NodeAt(i);
    if (!ni) continue;
    std::vector<int64_t> own(need.size(), 0);  // what the group's pods on the node hold
    int64_t own_pods = 0;
    for (Pod p : ni->pods()) {
      if (GroupOf(p.raw()) != key) continue;
      ++own_pods;
      for (size_t r = 0; r < need.size(); ++r) own[r] += p.requests().Get(need[r].first);
    }
    for (size_t r = 0; r < need.size(); ++r) {
      const int64_t free =
          need[r].first == pods_id_
              ? ni->Allocatable(pods_id_) - static_cast<int64_t>(ni->pod_count()) + own_pods
              : ni->Allocatable(need[r].first) - ni->Requested(need[r].first) + own[r];
      need[r].second -= std::max<int64_t>(free, 0);
    }
  }
  std::string gap;
  for (const auto& [id, amount] : need) {
    if (amount <= 0) continue;
    const std::string_view name = host().IdString(id);
    std::string text = std::to_string(amount);
    if (name == "cpu") text = amount % 1000 == 0 ? std::to_string(amount / 1000) : text + "m";
    gap += (gap.empty() ? "" : ", ") + std::string(name) + " " + text;
  }
  if (gap.empty()) return std::nullopt;
  return gap;
}

Status Coscheduling::PreFilter(CycleState& state, const Pod& pod, PreFilterResult&) {
  state.Delete(rejected_key_);
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return {};
  const std::string_view name = host().IdString(key->name_id);
  const std::string group = GroupName(pod.namespace_name(), name);
  // PostFilter runs after a PreFilter rejection too; the mark tells it the group was not tried.
  auto reject = [&](Status why) {
    state.Write(rejected_key_, std::make_unique<bool>(true));
    return why;
  };
  std::variant<PodGroupSpec, Status> read = ReadGroup(&state, *key, pod.namespace_name());
  if (Status* why = std::get_if<Status>(&read)) return reject(std::move(*why));
  const PodGroupSpec& spec = std::get<PodGroupSpec>(read);
  // Without PreEnqueue (queue_sort only, or PreEnqueue disabled) the pod is met here first.
  Meet(*key, pod, spec);
  const auto now = Clock::now();
  if (std::optional<std::string> why = groups_->Denied(*key, now)) {
    return reject(Status::UnschedulableAndUnresolvable(
        "pod group " + group + " is denied for " + SecondsText(args_.denied_group_retry) +
        " after " + *why));
  }
  // Members: those met in the queue, plus those already assumed, bound or waiting.
  std::set<std::string, std::less<>> members = groups_->Members(*key);
  OnNodes(*key, members);
  // A group just met may still be arriving (a member rejected now comes back only on an event):
  // within the grace its members go on to wait at Permit instead.
  const bool assembling = args_.assembly_grace.count() > 0 &&
                          now - groups_->MetAt(*key) < args_.assembly_grace;
  if (members.size() < static_cast<size_t>(spec.min_member) && !assembling) {
    return reject(Status::UnschedulableAndUnresolvable(
        "pod group " + group + " has " + std::to_string(members.size()) + " of the " +
        std::to_string(spec.min_member) + " pods its PodGroup needs (spec.minMember)"));
  }
  // minResources: checked once per group while its members pass (as upstream, for the length
  // of a Permit wait), so later members do not count the earlier ones' room against it.
  if (!spec.min_resources.empty() && !groups_->Permitted(*key, now)) {
    if (std::optional<std::string> gap = LacksResources(*key, spec)) {
      return reject(Status::UnschedulableAndUnresolvable(
          "pod group " + group + ": the cluster's free resources lack " + *gap +
          " of its PodGroup's spec.minResources"));
    }
    groups_->Permit(*key, now + PermitTimeout(spec));
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
  std::variant<PodGroupSpec, Status> read = ReadGroup(&state, *key, pod.namespace_name());
  if (std::holds_alternative<Status>(read)) return NotHelped();
  const int32_t min = std::get<PodGroupSpec>(read).min_member;
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

Status Coscheduling::Permit(CycleState& state, const Pod& pod, std::string_view,
                            std::chrono::nanoseconds& timeout) {
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return {};
  std::variant<PodGroupSpec, Status> read = ReadGroup(&state, *key, pod.namespace_name());
  if (Status* why = std::get_if<Status>(&read)) return std::move(*why);
  const PodGroupSpec& spec = std::get<PodGroupSpec>(read);
  // This pod is assumed now; the snapshot of this cycle does not hold it yet.
  const size_t placed = Placed(*key, pod.uid()) + 1;
  if (placed >= static_cast<size_t>(spec.min_member)) {
    AllowWaiting(*key);
    return {};
  }
  timeout = PermitTimeout(spec);
  return Status::Wait();
}

std::chrono::nanoseconds Coscheduling::PermitTimeout(const PodGroupSpec& spec) const {
  if (spec.schedule_timeout.count() <= 0) return args_.permit_waiting_time;
  // The ABI caps a Permit wait; a longer scheduleTimeoutSeconds waits as long as it may.
  return std::min<std::chrono::nanoseconds>(
      spec.schedule_timeout, std::chrono::nanoseconds(SCHEDHOST_MAX_PERMIT_TIMEOUT_NS));
}

void Coscheduling::PostBind(CycleState& state, const Pod& pod, std::string_view) {
  std::optional<GroupKey> key = GroupOf(pod.raw());
  if (!key) return;
  std::variant<PodGroupSpec, Status> read = ReadGroup(&state, *key, pod.namespace_name());
  if (std::holds_alternative<Status>(read)) return;  // deleted meanwhile: nothing to record
  const PodGroupSpec& spec = std::get<PodGroupSpec>(read);
  const std::string_view name = host().IdString(key->name_id);
  std::lock_guard lock(status_mu_);
  Meet(*key, pod, spec);
  // Scheduled: the members bound through this plugin, and those the snapshot holds on a node
  // (bound before this host started, or assumed on their way).
  std::set<std::string, std::less<>> scheduled = groups_->Bound(*key, pod.uid());
  OnNodes(*key, scheduled);
  GroupStatus next;
  next.scheduled = static_cast<int64_t>(scheduled.size());
  next.phase = next.scheduled >= spec.min_member ? "Scheduled" : "Scheduling";
  // The phases after scheduling (Running, Finished, Failed) are the PodGroup controller's, from
  // the pods' phases: a group in one keeps it, and only its count moves.
  const Args status = host().GetObject(state, 0, pod.namespace_name(), name)["status"];
  const std::string phase = status["phase"].String("");
  if (phase == "Running" || phase == "Finished" || phase == "Failed") next.phase = phase;
  const bool has_start = !status["scheduleStartTime"].String("").empty();
  auto last = last_status_.find(*key);
  if (last != last_status_.end() && last->second == next) return;
  std::string patch = "{\"status\":{\"phase\":\"" + next.phase +
                      "\",\"scheduled\":" + std::to_string(next.scheduled);
  if (!has_start && last == last_status_.end()) {
    patch += ",\"scheduleStartTime\":\"" + NowRfc3339() + "\"";
  }
  patch += "}}";
  std::string why;
  const int32_t rc = host().WriteObject(0, SCHEDHOST_WRITE_MERGE_PATCH_STATUS,
                                        pod.namespace_name(), name, patch, &why);
  if (rc != SCHEDHOST_OK) {
    host().Log(rc == SCHEDHOST_E_NOT_FOUND ? SCHEDHOST_LOG_DEBUG : SCHEDHOST_LOG_WARN,
               "Coscheduling: writing the status of PodGroup " +
                   GroupName(pod.namespace_name(), name) + " failed: " + why);
    return;
  }
  last_status_.insert_or_assign(*key, std::move(next));
}

}  // namespace schedhost::contrib

SCHEDHOST_PLUGIN_LIBRARY(schedhost::contrib::Coscheduling)
