// schedhost::testing::Harness: the host's framework::testing::Harness behind plain values, plus
// the scheduling queue's questions (EventsToRegister, queueing hints) asked as the queue asks
// them.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "host/framework/plugin_instance.h"
#include "host/queue/cluster_event.h"
#include "host/scheduler/profile_runtime.h"
#include "host/testing/internal.h"

namespace schedhost::testing {

static_assert(static_cast<int32_t>(Code::kSuccess) == SCHEDHOST_SUCCESS &&
              static_cast<int32_t>(Code::kError) == SCHEDHOST_ERROR &&
              static_cast<int32_t>(Code::kUnschedulable) == SCHEDHOST_UNSCHEDULABLE &&
              static_cast<int32_t>(Code::kUnschedulableAndUnresolvable) ==
                  SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE &&
              static_cast<int32_t>(Code::kWait) == SCHEDHOST_WAIT &&
              static_cast<int32_t>(Code::kSkip) == SCHEDHOST_SKIP &&
              static_cast<int32_t>(Code::kPending) == SCHEDHOST_PENDING);

Error::Error(const std::string& what) : std::runtime_error(what) {}
Error::~Error() = default;

std::string CodeName(Code code) {
  return std::string(framework::CodeName(static_cast<framework::Code>(code)));
}

namespace internal {

Result ToResult(const framework::Status& status) {
  Result r;
  r.code = static_cast<Code>(status.code);
  r.plugin = status.plugin.str();
  for (const framework::Text& reason : status.reasons) r.reasons.push_back(reason.str());
  return r;
}

std::filesystem::path ResolvePluginDir(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("SCHEDHOST_PLUGIN_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  // Beside this library, as schedhostd looks beside itself: <prefix>/lib/schedhost/plugins from
  // <prefix>/lib/schedhost/testing, <build>/plugins from <build>/lib.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ResolvePluginDir), &info) == 0 || info.dli_fname == nullptr) {
    throw Error("cannot tell where libschedhost-testing.so is; set Options::plugin_dir");
  }
  const std::filesystem::path dir =
      std::filesystem::path(info.dli_fname).parent_path() / ".." / "plugins";
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return std::filesystem::weakly_canonical(dir);
  throw Error("no builtin plugin directory: " + dir.string() +
              " does not exist (install the schedhost package, which the testing package needs, "
              "or reinstall the testing component of a schedhost build under a prefix other "
              "than /usr, or set Options::plugin_dir or SCHEDHOST_PLUGIN_DIR)");
}

}  // namespace internal

using internal::Guard;

Harness::Harness(Options options) : impl_(std::make_unique<Impl>()) {
  Guard("loading plugins", [&] {
    loader::PluginRegistry& registry = impl_->host.registry();
    // The author's libraries first: where the plugin directory also holds a build of one of
    // their plugins (the installed copy), the one under test takes its place.
    for (const std::string& library : options.libraries) {
      registry.LoadLibrary(std::filesystem::absolute(library), framework::HostApi());
    }
    registry.LoadDirectory(internal::ResolvePluginDir(options.plugin_dir), framework::HostApi(),
                           /*skip_registered=*/true);
    if (!registry.load_errors().empty()) throw Error(registry.load_errors().front());
  });
}

Harness::Harness(Harness&&) noexcept = default;
Harness& Harness::operator=(Harness&&) noexcept = default;
Harness::~Harness() = default;

// A new profile ends the open cycles too: their CycleState points into the old one.
void Harness::SetConfig(std::string_view toml) {
  impl_->host.SetConfig(toml);
  ++impl_->generation;
}

void Harness::UsePlugins(const std::vector<std::string>& plugins, std::string_view extra_toml) {
  impl_->host.OnlyPlugins(plugins, extra_toml);
  ++impl_->generation;
}

void Harness::AddObjects(std::string_view yaml) {
  Guard("AddObjects", [&] {
    std::vector<model::GenericObject> generic;
    std::vector<model::Object> objects =
        model::DecodeManifests(yaml, "AddObjects", model::DecodeLimits{}, &generic);
    impl_->host.AddGeneric(generic);
    for (model::Object& obj : objects) {
      if (auto* pod = std::get_if<std::shared_ptr<const model::Pod>>(&obj)) {
        *pod = internal::WithUid(*pod);
      }
    }
    impl_->host.AddObjects(objects);
  });
  ++impl_->generation;
}

std::vector<std::string> Harness::PluginNames() {
  return Guard("building the profile", [&] { return impl_->host.framework().PluginNames(); });
}

Result Harness::PreEnqueue(std::string_view pod_yaml) {
  return Guard("PreEnqueue", [&] {
    auto pod = internal::DecodePod(pod_yaml, "PreEnqueue pod");
    return internal::ToResult(impl_->host.framework().RunPreEnqueuePlugins(pod->view()));
  });
}

ScheduleResult Harness::ScheduleOne(std::string_view pod_yaml) {
  return Guard("ScheduleOne", [&] {
    auto pod = internal::DecodePod(pod_yaml, "ScheduleOne pod");
    ScheduleResult r;
    r.node = impl_->host.Schedule(*pod, &r.message);
    return r;
  });
}

std::vector<std::string> Harness::Bindings() const { return impl_->host.bindings(); }

std::vector<EventRegistration> Harness::EventsToRegister() {
  return Guard("EventsToRegister", [&] {
    std::vector<EventRegistration> out;
    for (const auto& [plugin, regs] : impl_->host.framework().EventsToRegister()) {
      for (const queue::EventRegistration& reg : regs) {
        out.push_back({plugin, reg.event.resource, reg.event.actions, reg.hint != nullptr});
      }
    }
    return out;
  });
}

namespace {

using NodePtr = std::shared_ptr<const model::Node>;
using PodPtr = std::shared_ptr<const model::Pod>;

// MakeEvent builds the event the host's event router would send; nullopt when the router sends
// none (a node update that changes nothing scheduling-relevant).
std::optional<queue::ClusterEvent> MakeEvent(const Event& e) {
  auto node = [](const std::string& yaml) {
    return internal::DecodeOne<model::Node>(yaml, "event node");
  };
  auto pod = [](const std::string& yaml) { return internal::DecodePod(yaml, "event pod"); };
  switch (e.kind) {
    case Event::Kind::kNodeAdd:
      return queue::MakeNodeAddEvent(node(e.new_object));
    case Event::Kind::kNodeUpdate:
      return queue::MakeNodeUpdateEvent(node(e.old_object), node(e.new_object));
    case Event::Kind::kNodeDelete:
      return queue::MakeNodeDeleteEvent(node(e.old_object));
    case Event::Kind::kAssignedPodAdd:
      return queue::MakeAssignedPodAddEvent(pod(e.new_object));
    case Event::Kind::kAssignedPodUpdate:
      return queue::MakeAssignedPodUpdateEvent(pod(e.old_object), pod(e.new_object));
    case Event::Kind::kAssignedPodDelete:
      return queue::MakeAssignedPodDeleteEvent(pod(e.old_object));
  }
  throw Error("unknown Event::Kind " + std::to_string(static_cast<int>(e.kind)));
}

}  // namespace

QueueingHint Harness::Hint(std::string_view plugin, std::string_view pod_yaml, const Event& event) {
  return Guard("Hint", [&] {
    framework::Framework& fw = impl_->host.framework();
    const framework::PluginInstance* instance = fw.FindPlugin(plugin);
    if (instance == nullptr) {
      throw Error("Hint: the profile has no plugin \"" + std::string(plugin) + "\"");
    }
    const PodPtr pod = internal::DecodePod(pod_yaml, "Hint pod");
    const std::optional<queue::ClusterEvent> ev = MakeEvent(event);
    if (!ev) return QueueingHint::kSkip;  // the router moves no pod for it
    for (const auto& [name, regs] : fw.EventsToRegister()) {
      if (name != plugin) continue;
      return scheduler::AskQueueingHint(*instance, regs, *pod, *ev) ? QueueingHint::kQueue
                                                                    : QueueingHint::kSkip;
    }
    return QueueingHint::kQueue;  // no registrations: interested in every event, as upstream
  });
}

}  // namespace schedhost::testing
