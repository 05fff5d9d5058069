// AdminService: Reload (build, validate, swap), ListProfiles, ListPlugins and Stats. Explain's
// rendering lives in admin_explain.cc.
#include "host/api/admin_service.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "host/api/cluster_kinds.h"
#include "host/config/config_error.h"
#include "host/config/config_tree.h"
#include "host/config/host_config.h"
#include "host/framework/plugin_instance.h"
#include "host/loader/loader.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/scheduler/profile_set.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::api {
namespace {

// ArgsJson renders a plugin's arguments tree as JSON, tables' keys in file order.
nlohmann::ordered_json ArgsJson(const config::ConfigNode& node) {
  switch (node.kind) {
    case SCHEDHOST_CONFIG_TABLE: {
      nlohmann::ordered_json out = nlohmann::ordered_json::object();
      for (const config::ConfigNode& child : node.children) out[child.key] = ArgsJson(child);
      return out;
    }
    case SCHEDHOST_CONFIG_ARRAY: {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (const config::ConfigNode& child : node.children) out.push_back(ArgsJson(child));
      return out;
    }
    case SCHEDHOST_CONFIG_STRING: return node.string_value;
    case SCHEDHOST_CONFIG_INT: return node.int_value;
    case SCHEDHOST_CONFIG_FLOAT: return node.float_value;
    case SCHEDHOST_CONFIG_BOOL: return node.bool_value;
    default: return nullptr;
  }
}

constexpr std::array<std::string_view, config::kNumPoints> kUpstreamPointNames = {
    "PreEnqueue", "QueueSort", "PreFilter", "Filter",  "PostFilter", "PreScore",
    "Score",      "Reserve",   "Permit",    "PreBind", "Bind",       "PostBind",
};

std::string Str(schedhost_str s) { return s.len == 0 ? std::string() : std::string(s.data, s.len); }

// EnablingProfiles returns the scheduler names of the profiles that enable `plugin` anywhere.
std::vector<std::string> EnablingProfiles(const scheduler::ProfileSet& set,
                                          std::string_view plugin) {
  std::vector<std::string> out;
  for (const config::ExpandedProfile& p : set.profiles()) {
    bool enabled = false;
    for (const auto& point : p.points) {
      for (const config::EnabledPlugin& e : point) enabled = enabled || e.name == plugin;
    }
    if (enabled) out.push_back(p.name);
  }
  return out;
}

// RestartOnlyChanges names the settings of `next` that differ from `running` and that only a
// restart applies (the profile set carries everything else).
std::vector<std::string> RestartOnlyChanges(const config::HostConfig& running,
                                            const config::HostConfig& next) {
  std::vector<std::string> out;
  auto tls = [](const config::HostConfig& c) {
    if (!c.api_tls) return std::string();
    return c.api_tls->cert.string() + "|" + c.api_tls->key.string() + "|" +
           (c.api_tls->client_ca ? c.api_tls->client_ca->string() : "");
  };
  if (running.api_listen != next.api_listen) out.emplace_back("api.listen");
  if (tls(running) != tls(next)) out.emplace_back("api.tls");
  if (running.metrics_listen != next.metrics_listen) out.emplace_back("metrics.listen");
  if (running.ui_listen != next.ui_listen) out.emplace_back("ui.listen");
  if (running.pod_initial_backoff != next.pod_initial_backoff) {
    out.emplace_back("host.pod_initial_backoff");
  }
  if (running.pod_max_backoff != next.pod_max_backoff) out.emplace_back("host.pod_max_backoff");
  if (running.log_level != next.log_level) out.emplace_back("log.level");
  if (running.state_dir != next.state_dir) out.emplace_back("host.state_dir");
  if (running.unload != next.unload) out.emplace_back("host.unload");
  if (running.watch_config != next.watch_config) out.emplace_back("host.watch_config");
  return out;
}

// VersionState names a library version's state for ListPlugins: the live set's ("shadow" when
// only a shadow profile's own libraries hold it), or held only by replaced sets that are still
// draining (or by the pin).
std::string VersionState(const loader::LibraryVersion& v, const scheduler::ProfileSet& live,
                         bool pin) {
  if (v.state == loader::LibraryVersion::State::kNotUnloadable) return "not-unloadable";
  for (const auto& lib : live.registry().Libraries()) {
    if (lib.get() == v.library) return "live";
  }
  for (const scheduler::ShadowProfile& shadow : live.shadows()) {
    if (shadow.registry == nullptr) continue;
    for (const auto& lib : shadow.registry->Libraries()) {
      if (lib.get() == v.library) return "shadow";
    }
  }
  return pin ? "pinned" : "draining";
}

}  // namespace

std::string_view UpstreamPointName(size_t point_index) {
  return point_index < kUpstreamPointNames.size() ? kUpstreamPointNames.at(point_index)
                                                  : std::string_view("Unknown");
}

AdminService::AdminService(store::Store& store, scheduler::Scheduler& scheduler,
                           AdminOptions options)
    : store_(store), scheduler_(scheduler), options_(std::move(options)) {}

grpc::Status AdminService::Reload(grpc::ServerContext*, const v1::ReloadRequest*,
                                  v1::ReloadResponse* response) {
  if (options_.config_file.empty()) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            "this host was started without a config file (schedhostd --config FILE), so there "
            "is nothing to reload"};
  }
  std::lock_guard lock(reload_mu_);
  const std::string file = options_.config_file.string();
  try {
    // Parse, validate, load the libraries and create every plugin instance (on the host's
    // control thread when it has one), while the scheduling loop keeps running on the live set.
    config::HostConfig config = config::LoadConfigFile(options_.config_file);
    std::vector<std::shared_ptr<const loader::Library>> libraries;
    std::string names;
    size_t count = 0;
    uint64_t generation = 0;
    auto build_and_swap = [&] {
      std::shared_ptr<const scheduler::ProfileSet> set =
          options_.build
              ? options_.build(config)
              : scheduler::ProfileSet::Build(config, options_.builtin_dir, options_.in_process,
                                             options_.library_store);
      libraries = set->registry().Libraries();
      for (const config::ExpandedProfile& p : set->profiles()) {
        names += (names.empty() ? "" : ", ") + p.name;
      }
      count = set->profiles().size();
      generation = scheduler_.ReplaceProfiles(std::move(set));
    };
    if (options_.lifecycle) {
      options_.lifecycle(build_and_swap);
    } else {
      build_and_swap();
    }
    if (options_.library_store) options_.library_store->MarkLive(libraries, generation);
    std::string message = file + ": generation " + std::to_string(generation) + " is live (" +
                          std::to_string(count) + " profile(s): " + names + ")";
    if (options_.running) {
      std::string restart;
      for (const std::string& name : RestartOnlyChanges(*options_.running, config)) {
        restart += (restart.empty() ? "" : ", ") + name;
      }
      if (!restart.empty()) message += "; changed settings that only a restart applies: " + restart;
    }
    metrics::CountConfigReload(true);
    spdlog::info("reload: {}", message);
    response->set_ok(true);
    response->set_message(message);
    response->set_generation(generation);
  } catch (const std::runtime_error& e) {  // ConfigError, ProfileSetError, SchedulerError
    // Config errors already read "file:line:col: ..."; others get the file in front.
    std::string what = e.what();
    if (what.rfind(file, 0) != 0) what = file + ": " + what;
    what += " (reload refused; the running profiles are unchanged)";
    metrics::CountConfigReload(false);
    spdlog::error("reload: {}", what);
    response->set_ok(false);
    response->set_message(what);
    response->set_generation(scheduler_.generation());
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::lock_guard record(record_mu_);
  reloads_.push_front(
      {response->ok() ? "success" : "failure", response->message(), now, response->generation()});
  if (reloads_.size() > kReloadHistory) reloads_.pop_back();
  return grpc::Status::OK;
}

grpc::Status AdminService::ListProfiles(grpc::ServerContext*, const v1::ListProfilesRequest*,
                                        v1::ListProfilesResponse* response) {
  const auto runtime = scheduler_.profiles();  // keeps the set alive while we read it
  const scheduler::ProfileSet& set = runtime->set();
  response->set_generation(scheduler_.generation());
  for (const config::ExpandedProfile& p : set.profiles()) {
    v1::Profile* out = response->add_profiles();
    out->set_scheduler_name(p.name);
    const framework::Framework* fw = set.Find(p.name);
    out->set_percentage_of_nodes_to_score(fw != nullptr
                                              ? fw->percentage_of_nodes_to_score()
                                              : p.percentage_of_nodes_to_score.value_or(0));
    for (config::Point point : config::kAllPoints) {
      v1::ExtensionPointPlugins* ep = out->add_extension_points();
      ep->set_extension_point(std::string(UpstreamPointName(config::PointIndex(point))));
      for (const config::EnabledPlugin& e : p.PluginsAt(point)) {
        v1::PluginRef* ref = ep->add_plugins();
        ref->set_name(e.name);
        ref->set_weight(e.weight);
      }
    }
    for (const auto& [name, args] : p.plugin_config) {
      v1::PluginArgs* out_args = out->add_plugin_args();
      out_args->set_name(name);
      out_args->set_args_json(
          ArgsJson(*args).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::ListPlugins(grpc::ServerContext*, const v1::ListPluginsRequest*,
                                       v1::ListPluginsResponse* response) {
  const auto runtime = scheduler_.profiles();
  const scheduler::ProfileSet& set = runtime->set();
  const loader::PluginRegistry& registry = set.registry();
  for (const std::string& name : registry.Names()) {  // sorted
    const loader::PluginEntry* entry = registry.Find(name);
    if (entry == nullptr || entry->descriptor == nullptr) continue;
    v1::Plugin* out = response->add_plugins();
    out->set_name(name);
    out->set_version(Str(entry->descriptor->version));
    if (entry->library) {
      out->set_library_path(entry->library->path().string());
      out->set_sha256(entry->library->sha256());
      out->set_abi_version(std::to_string(entry->library->abi_major()) + "." +
                           std::to_string(entry->library->abi_minor()));
    } else {
      // Linked into the host: built against the host's own ABI.
      out->set_abi_version(std::to_string(SCHEDHOST_ABI_MAJOR) + "." +
                           std::to_string(SCHEDHOST_ABI_MINOR));
    }
    const uint32_t points = loader::ImplementedPoints(*entry->descriptor);
    for (size_t i = 0; i < config::kNumPoints; ++i) {
      if ((points & (uint32_t{1} << i)) != 0) {
        out->add_extension_points(std::string(UpstreamPointName(i)));
      }
    }
    for (std::string& profile : EnablingProfiles(set, name)) out->add_profiles(std::move(profile));
  }
  // The kinds the live plugins declare, with the plugins and whether the host can see them.
  std::map<std::string, std::pair<store::KindInfo, std::set<std::string>>> kinds;
  for (const auto& fw : set.frameworks()) {
    for (const std::string& name : fw->PluginNames()) {
      const framework::PluginInstance* plugin = fw->FindPlugin(name);
      if (plugin == nullptr) continue;
      for (const store::KindInfo& kind : plugin->kinds) {
        auto& entry = kinds[kind.Key()];
        entry.first = kind;
        entry.second.insert(name);
      }
    }
  }
  const auto snapshot = store_.objects().Snapshot();
  for (const auto& [key, entry] : kinds) {
    v1::DeclaredKind* out = response->add_declared_kinds();
    out->set_resource(key);
    out->set_api_version(entry.first.ApiVersion());
    out->set_kind(entry.first.kind);
    out->set_namespaced(entry.first.namespaced);
    for (const std::string& plugin : entry.second) out->add_plugins(plugin);
    std::string why;
    out->set_available(store_.objects().Available(key, &why));
    out->set_unavailable_reason(why);
    const store::KindObjects* table = snapshot->Find(key);
    out->set_objects(table == nullptr ? 0 : table->items().size());
  }
  if (options_.library_store) {
    for (const loader::LibraryVersion& v : options_.library_store->Versions()) {
      v1::LibraryVersion* out = response->add_library_versions();
      out->set_path(v.source_path.string());
      out->set_loaded_path(v.loaded_path.string());
      out->set_sha256(v.sha256);
      out->set_generation(v.last_generation);
      out->set_state(VersionState(v, runtime->set(), options_.library_store->pin()));
    }
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::Stats(grpc::ServerContext*, const v1::StatsRequest*,
                                 v1::StatsResponse* response) {
  const scheduler::SchedulerStats s = scheduler_.Stats();
  response->set_active_pods(s.queue.active);
  response->set_backoff_pods(s.queue.backoff);
  response->set_unschedulable_pods(s.queue.unschedulable);
  response->set_gated_pods(s.queue.gated);
  response->set_in_flight_pods(s.queue.in_flight);
  response->set_attempts_scheduled(s.attempts_scheduled);
  response->set_attempts_unschedulable(s.attempts_unschedulable);
  response->set_attempts_error(s.attempts_error);
  response->set_bound_pods(s.bound_pods);
  response->set_pods_per_second(s.pods_per_second);
  response->set_resource_version(store_.resource_version());
  response->set_config_generation(scheduler_.generation());
  response->set_draining_profile_sets(scheduler_.DrainingSets());
  if (options_.leadership) {
    if (const store::Leadership l = options_.leadership(); l.enabled) {
      v1::LeaderElection* le = response->mutable_leader_election();
      le->set_leading(l.leading);
      le->set_identity(l.identity);
      le->set_lease(l.lease);
      le->set_holder(l.holder);
      le->set_transitions(l.transitions);
      le->set_last_error(l.last_error);
    }
  }
  std::lock_guard record(record_mu_);
  if (!reloads_.empty()) {
    response->set_last_reload_result(reloads_.front().result);
    response->set_last_reload_message(reloads_.front().message);
    response->set_last_reload_unix_seconds(reloads_.front().unix_seconds);
  }
  return grpc::Status::OK;
}

std::vector<ReloadRecord> AdminService::ReloadHistory() const {
  std::lock_guard record(record_mu_);
  return {reloads_.begin(), reloads_.end()};
}

grpc::Status AdminService::Explain(grpc::ServerContext*, const v1::ExplainRequest* request,
                                   v1::ExplainResponse* response) {
  for (const grpc::Status& s : {internal::CheckName(request->name(), "name", true),
                                internal::CheckNamespace(request->namespace_(), "namespace")}) {
    if (!s.ok()) return s;
  }
  const std::string ns = request->namespace_().empty() ? "default" : request->namespace_();
  std::shared_ptr<const model::Pod> pod = store_.Get<model::Pod>(ns, request->name());
  if (!pod)
    return {grpc::StatusCode::NOT_FOUND, "pod " + ns + "/" + request->name() + " not found"};
  response->set_profile(std::string(pod->scheduler_name()));
  response->set_node(std::string(pod->node_name()));
  response->set_nominated_node(std::string(pod->nominated_node_name()));
  if (auto d = scheduler_.Diagnostics(pod->uid())) {
    response->set_attempts(d->attempts);
    response->set_message(d->message);
    if (!d->nominated_node.empty()) response->set_nominated_node(d->nominated_node);
  }
  if (pod->node_name().empty() && scheduler_.profiles()->FrameworkFor(*pod) == nullptr) {
    // Parked (or never queued): it waits until a reload brings a profile of that name.
    response->set_message("no profile named \"" + std::string(pod->scheduler_name()) +
                          "\"; the pod stays pending until a reload adds one");
  }
  if (auto e = scheduler_.Explanation(pod->uid())) FillExplanation(*e, *response);
  return grpc::Status::OK;
}

}  // namespace schedhost::api
