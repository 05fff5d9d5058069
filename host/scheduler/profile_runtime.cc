// ProfileRuntime: QueueSort, PreEnqueue and queueing hints through the loaded plugins.
#include "host/scheduler/profile_runtime.h"

#include <algorithm>

#include "host/config/config_tree.h"
#include "host/framework/plugin_instance.h"

namespace schedhost::scheduler {
namespace {

schedhost_queued_pod Queued(const queue::QueuedPodInfo& info) {
  schedhost_queued_pod q{};
  q.struct_size = sizeof(schedhost_queued_pod);
  q.pod = info.pod->view();
  q.timestamp_ns = framework::Nanos(info.timestamp);
  q.attempts = info.attempts;
  return q;
}

schedhost_event_object Object(const queue::EventObject& o) {
  return schedhost_event_object{o.pod ? o.pod->view() : nullptr, o.node ? o.node->view() : nullptr,
                                config::AsAbi(o.object.get())};
}

// DeclaredResource is the event resource a declared kind's event reads as for `plugin`: its own
// index of the kind, or WILDCARD when it does not declare the kind (a wildcard registration).
int32_t DeclaredResource(const framework::PluginInstance& plugin, std::string_view kind) {
  for (size_t i = 0; i < plugin.kind_keys.size(); ++i) {
    if (plugin.kind_keys[i] == kind) return SCHEDHOST_KIND_EVENT(i);
  }
  return SCHEDHOST_RESOURCE_WILDCARD;
}

}  // namespace

ProfileRuntime::ProfileRuntime(std::shared_ptr<const ProfileSet> set) : set_(std::move(set)) {
  if (!set_ || set_->frameworks().empty()) {
    throw ProfileSetError("the scheduler needs a ProfileSet with at least one profile");
  }
  sort_framework_ = set_->frameworks().front().get();
  for (const auto& fw : set_->frameworks()) {
    PluginMap& plugins = events_[fw->profile_name()];
    for (auto& [name, regs] : fw->EventsToRegister()) {
      PluginEvents& pe = plugins[name];
      pe.plugin = fw->FindPlugin(name);
      pe.registrations = std::move(regs);
    }
  }
}

bool ProfileRuntime::QueueSortLess(const queue::QueuedPodInfo& a,
                                   const queue::QueuedPodInfo& b) const {
  const schedhost_queued_pod qa = Queued(a);
  const schedhost_queued_pod qb = Queued(b);
  const framework::OutOfCycleReads reads;  // both questions see the same objects
  if (sort_framework_->QueueSortLess(qa, qb)) return true;
  if (sort_framework_->QueueSortLess(qb, qa)) return false;
  // Equal for QueueSort (e.g. same priority, same virtual timestamp): keep creation order.
  const int64_t ca = a.pod->creation_timestamp_ns();
  const int64_t cb = b.pod->creation_timestamp_ns();
  if (ca != cb) return ca < cb;
  const uint64_t ra = a.pod->resource_version();
  const uint64_t rb = b.pod->resource_version();
  if (ra != rb) return ra < rb;
  return a.pod->uid() < b.pod->uid();
}

queue::PreEnqueueResult ProfileRuntime::PreEnqueue(const model::Pod& pod) const {
  framework::Framework* fw = FrameworkFor(pod);
  if (fw == nullptr) return {};
  framework::Status s = fw->RunPreEnqueuePlugins(pod.view());
  if (s.ok()) return {};
  return queue::PreEnqueueResult{false, s.plugin.str(), s.Message()};
}

bool ProfileRuntime::Hint(std::string_view plugin, const model::Pod& pod,
                          const queue::ClusterEvent& ev) const {
  auto profile = events_.find(pod.scheduler_name());
  if (profile == events_.end()) return true;
  auto it = profile->second.find(plugin);
  if (it == profile->second.end() || it->second.plugin == nullptr) return true;
  return AskQueueingHint(*it->second.plugin, it->second.registrations, pod, ev);
}

bool AskQueueingHint(const framework::PluginInstance& plugin,
                     std::span<const queue::EventRegistration> registrations,
                     const model::Pod& pod, const queue::ClusterEvent& ev) {
  schedhost_cluster_event cev{ev.resource, ev.actions};
  const schedhost_event_object old_obj = Object(ev.old_obj);
  const schedhost_event_object new_obj = Object(ev.new_obj);
  const framework::OutOfCycleReads reads;
  for (const queue::EventRegistration& reg : registrations) {
    if (!queue::EventMatches(reg, ev)) continue;
    if (reg.hint == nullptr) return true;
    if (!ev.kind.empty()) cev.resource = DeclaredResource(plugin, ev.kind);
    if (reg.hint(plugin.instance, pod.view(), &cev, &old_obj, &new_obj) != SCHEDHOST_QUEUE_SKIP) {
      return true;
    }
  }
  return false;
}

queue::EventInterest ProfileRuntime::Interest(const queue::ClusterEvent& ev) const {
  queue::EventInterest out;
  for (const auto& [profile, plugins] : events_) {
    std::vector<std::string> deaf;
    for (const auto& [name, pe] : plugins) {
      if (pe.plugin == nullptr) continue;  // Hint answers true for it
      const bool hears =
          std::any_of(pe.registrations.begin(), pe.registrations.end(),
                      [&](const auto& reg) { return queue::EventMatches(reg, ev); });
      if (!hears) deaf.push_back(name);
    }
    out.deaf.emplace_back(profile, std::move(deaf));
  }
  return out;
}

queue::QueueCallbacks MakeQueueCallbacks(
    const std::shared_ptr<const ProfileRuntime>& initial,
    const std::function<std::shared_ptr<const ProfileRuntime>()>& current,
    const std::function<void(const model::Pod&, const queue::PreEnqueueResult&)>& on_pre_enqueue) {
  queue::QueueCallbacks cb;
  cb.less = [initial](const queue::QueuedPodInfo& a, const queue::QueuedPodInfo& b) {
    return initial->QueueSortLess(a, b);
  };
  cb.pre_enqueue = [current, on_pre_enqueue](const model::Pod& pod) {
    queue::PreEnqueueResult r = current()->PreEnqueue(pod);
    if (on_pre_enqueue) on_pre_enqueue(pod, r);
    return r;
  };
  cb.hint = [current](std::string_view plugin, const model::Pod& pod,
                      const queue::ClusterEvent& ev) { return current()->Hint(plugin, pod, ev); };
  cb.interest = [current](const queue::ClusterEvent& ev) { return current()->Interest(ev); };
  return cb;
}

}  // namespace schedhost::scheduler
