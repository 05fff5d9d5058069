// `schedctl simulate`: apply the manifests to an embedded store in upstream's order, run the
// scheduler on a virtual clock until idle, and report every input pod.
#include "host/cli/simulate.h"

#include <algorithm>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "host/api/admin_service.h"
#include "host/api/ui_api.h"
#include "host/scheduler/clock.h"
#include "host/scheduler/profile_set.h"
#include "host/store/store.h"
#include "host/store/volume_controller.h"

namespace schedhost::cli {
namespace {

using PodPtr = std::shared_ptr<const model::Pod>;

// Rank is the apply order of an object: Namespaces first (as kubectl applies them, so pods
// never see their namespace appear late), PriorityClasses (pods resolve their priority from
// them on admission), then nodes, PDBs, bound pods and finally the pending pods.
constexpr int kPendingPodRank = 4;
int Rank(const model::Object& obj) {
  if (std::holds_alternative<std::shared_ptr<const model::Namespace>>(obj)) return -1;
  if (std::holds_alternative<std::shared_ptr<const model::PriorityClass>>(obj)) return 0;
  if (std::holds_alternative<std::shared_ptr<const model::Node>>(obj)) return 1;
  if (std::holds_alternative<std::shared_ptr<const model::PodDisruptionBudget>>(obj)) return 2;
  return std::get<PodPtr>(obj)->node_name().empty() ? kPendingPodRank : 3;
}

SimulatedPod Outcome(const model::Pod& input, const store::Store& store,
                     const scheduler::Scheduler& sched, const std::vector<Eviction>& evicted) {
  SimulatedPod out;
  out.namespace_name = input.namespace_name();
  out.name = input.name();
  out.status = "Pending";
  PodPtr pod = store.Get<model::Pod>(input.namespace_name(), input.name());
  if (!pod) {
    out.message = "deleted during the simulation";
    for (const Eviction& e : evicted) {
      if (e.namespace_name == input.namespace_name() && e.name == input.name()) {
        out.message = "preempted by " + e.by;
      }
    }
    return out;
  }
  if (!pod->nominated_node_name().empty()) {
    out.nominated_node = pod->nominated_node_name();
  }
  if (!pod->node_name().empty()) {
    out.node = pod->node_name();
    out.status = "Bound";
    return out;
  }
  const std::string scheduler_name(pod->scheduler_name());
  if (sched.profiles()->Find(scheduler_name) == nullptr) {
    out.message = "no profile is named \"" + scheduler_name +
                  "\" (spec.schedulerName): this host does not schedule the pod";
    return out;
  }
  std::optional<scheduler::PodDiagnostics> d = sched.Diagnostics(pod->uid());
  out.message = d && !d->message.empty() ? d->message : "not attempted before the simulation ended";
  return out;
}

constexpr std::string_view kPrefix = "schedctl simulate: ";

// LoadConfig is the config file at `path`, or the built-in defaults when it is "".
config::HostConfig LoadConfig(const std::string& path) {
  return path.empty() ? config::ParseConfig("", "(built-in defaults)", {})
                      : config::LoadConfigFile(path);
}

// Inputs are the objects of the manifest files, in file order.
struct Inputs {
  std::vector<model::Object> objects;
  std::vector<model::GenericObject> generic;  // of the kinds plugins declare
};

Inputs DecodeInputs(const std::vector<std::string>& paths) {
  Inputs in;
  for (const std::string& path : paths) {
    std::vector<model::Object> decoded = model::DecodeFile(path, {}, &in.generic);
    in.objects.insert(in.objects.end(), decoded.begin(), decoded.end());
  }
  return in;
}

// InputNames lists the manifest files' names, for a report's title.
std::string InputNames(const SimulateOptions& options) {
  std::string files;
  for (const std::string& path : options.manifest_paths) {
    files += (files.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
  }
  return files;
}

// PendingPodKey is "namespace/name" of the pod `--pod` names ("name": in default), which must
// be a pending pod of `objects`; throws SimulationError otherwise.
std::string PendingPodKey(const std::vector<model::Object>& objects, const std::string& pod) {
  std::string key = pod.find('/') == std::string::npos ? "default/" + pod : pod;
  for (const model::Object& obj : objects) {
    const auto* p = std::get_if<std::shared_ptr<const model::Pod>>(&obj);
    if (p == nullptr || (*p)->Key() != key) continue;
    if (!internal::IsPending(obj)) {
      throw SimulationError("--pod " + pod + ": pod " + key + " is bound in the manifests (to " +
                            std::string((*p)->node_name()) +
                            "); --explain explains pending pods only");
    }
    return key;
  }
  throw SimulationError("--pod " + pod + ": no pod " + key +
                        " in the manifests (a name alone is looked up in namespace default)");
}

}  // namespace

namespace internal {

std::vector<size_t> ApplyOrder(const std::vector<model::Object>& objects) {
  std::vector<size_t> order(objects.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return Rank(objects[a]) < Rank(objects[b]); });
  return order;
}

bool IsPending(const model::Object& obj) { return Rank(obj) == kPendingPodRank; }

void ApplyAll(store::Store& store, const std::vector<model::Object>& objects) {
  for (size_t i : ApplyOrder(objects)) {
    try {
      store.CreateObject(objects[i]);
    } catch (const store::StoreError& e) {
      throw SimulationError("object " + std::to_string(i + 1) + " of the input (" +
                            store::Describe(objects[i]) + ") was refused: " + e.what());
    }
  }
}

void ApplyGeneric(store::Store& store, const std::vector<store::KindInfo>& kinds,
                  const std::vector<model::GenericObject>& generic) {
  store.objects().Declare(kinds);
  for (const model::GenericObject& object : generic) {
    const std::string where = object.source + ": document " + std::to_string(object.document) +
                              " (" + object.Describe() + ")";
    std::shared_ptr<const store::StoredObject> stored;
    try {
      // Stamped as the daemon would (uid, resourceVersion), keeping the times documents give.
      stored = store.objects().ApplyDocument(
          object, store::ObjectWrite{.stamp = true, .keep_creation_timestamp = true});
    } catch (const store::StoreError& e) {
      throw SimulationError(where + " was refused: " + e.what());
    }
    if (!stored) {
      std::string declared;
      for (const store::KindInfo& k : kinds) {
        declared += (declared.empty() ? "" : ", ") + k.ApiVersion() + " " + k.kind;
      }
      throw SimulationError(where + ": kind: unsupported kind \"" + object.kind +
                            "\" of apiVersion \"" + object.api_version + "\"; supported: " +
                            std::string(model::kBuiltinKinds) +
                            ", and the kinds the loaded plugins declare (" +
                            (declared.empty() ? std::string("none") : declared) + ")");
    }
  }
}

}  // namespace internal

SimulationResult Simulate(
    const config::HostConfig& config, const std::vector<model::Object>& objects,
    const std::filesystem::path& plugin_dir, uint64_t seed,
    const std::function<void(store::Store&, scheduler::Scheduler&)>& inspect) {
  return Simulate(config, objects, {}, plugin_dir, seed, inspect);
}

SimulationResult Simulate(
    const config::HostConfig& config, const std::vector<model::Object>& objects,
    const std::vector<model::GenericObject>& generic, const std::filesystem::path& plugin_dir,
    uint64_t seed,
    const std::function<void(store::Store&, scheduler::Scheduler&)>& inspect) {
  std::shared_ptr<const scheduler::ProfileSet> profiles =
      scheduler::ProfileSet::Build(config, plugin_dir);
  store::Store store;
  internal::ApplyAll(store, objects);
  // The PV controller and a provisioner, so that claims bind as they would in a cluster
  // (acting only when a loaded plugin declares claims and volumes).
  store::VolumeController volumes(store.objects(), store::NodeHostnames(store));
  internal::ApplyGeneric(store, profiles->DeclaredKinds(), generic);
  volumes.Reconcile();

  scheduler::SchedulerOptions options;
  options.clock = std::make_shared<scheduler::VirtualClock>();
  options.seed = seed;
  options.pod_initial_backoff = config.pod_initial_backoff;
  options.pod_max_backoff = config.pod_max_backoff;
  SimulationResult result;
  // Evictions happen on the scheduling thread, which RunUntilIdle runs on this one.
  options.on_evicted = [&result](const model::Pod& victim, const model::Pod* preemptor) {
    result.evicted.push_back({std::string(victim.namespace_name()), std::string(victim.name()),
                              preemptor ? preemptor->Key() : std::string()});
  };
  scheduler::Scheduler sched(store, profiles, options);
  result.run = sched.RunUntilIdle();
  for (const model::Object& obj : objects) {
    if (const auto* pod = std::get_if<PodPtr>(&obj))
      result.pods.push_back(Outcome(**pod, store, sched, result.evicted));
  }
  if (inspect) inspect(store, sched);
  sched.Stop();
  return result;
}

int RunSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
  if (options.output != "table" && options.output != "json") {
    err << kPrefix << "-o must be json or table, not \"" << options.output << "\"\n";
    return 1;
  }
  if (options.explain && options.output != "json") {
    err << kPrefix << "--explain prints the explain document, which is JSON: add -o json\n";
    return 1;
  }
  if (options.explain && !options.html.empty()) {
    err << kPrefix << "--html writes the report of a simulation; --explain is a document of its "
                      "own: use one at a time\n";
    return 1;
  }
  if (!options.compare_path.empty() && options.explain) {
    err << kPrefix << "--compare prints where two configs place each pod; --explain is a "
                      "document of its own: use one at a time\n";
    return 1;
  }
  if (!options.pod.empty() && !options.explain) {
    err << kPrefix << "--pod picks the pod --explain explains: add --explain -o json\n";
    return 1;
  }
  if (options.manifest_paths.empty()) {
    err << kPrefix << "no manifests: pass them with -f FILE\n";
    return 1;
  }
  try {
    config::HostConfig cfg = LoadConfig(options.config_path);
    std::optional<config::HostConfig> old_cfg;
    if (!options.compare_path.empty()) {
      try {
        old_cfg = config::LoadConfigFile(options.compare_path);
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("--compare: ") + e.what());
      }
    }
    auto [objects, generic] = DecodeInputs(options.manifest_paths);
    if (old_cfg) {
      Comparison c = Compare(*old_cfg, cfg, objects, generic, options.plugin_dir, options.seed,
                             !options.html.empty());
      if (!options.html.empty()) {
        WriteHtmlReport(options.ui_dir, "schedctl simulate --compare: " + InputNames(options),
                        std::move(c.report), options.html);
      }
      out << (options.output == "json" ? FormatCompareJson(c) : FormatCompareTable(c));
      return 0;
    }
    if (options.explain) {
      const std::optional<std::string> only =
          options.pod.empty() ? std::nullopt : std::optional(PendingPodKey(objects, options.pod));
      nlohmann::ordered_json doc =
          ExplainEachPod(std::move(cfg), objects, options.plugin_dir, options.seed, generic);
      if (only) {
        // Every pending pod before it still had its cycle: the document places them first.
        nlohmann::ordered_json kept = nlohmann::ordered_json::array();
        for (auto& entry : doc["pods"]) {
          if (entry["namespace"].get<std::string>() + "/" + entry["name"].get<std::string>() ==
              *only) {
            kept.push_back(std::move(entry));
          }
        }
        doc["pods"] = std::move(kept);
      }
      out << doc.dump(2) << "\n";
      return 0;
    }
    // --html reads the report off the host before it stops.
    nlohmann::json report;
    std::function<void(store::Store&, scheduler::Scheduler&)> inspect;
    if (!options.html.empty()) {
      inspect = [&](store::Store& store, scheduler::Scheduler& sched) {
        api::AdminService admin(store, sched, {.builtin_dir = options.plugin_dir});
        report = api::UiReport(admin, store, sched);
      };
    }
    SimulationResult result =
        Simulate(cfg, objects, generic, options.plugin_dir, options.seed, inspect);
    if (!options.html.empty()) {
      WriteHtmlReport(options.ui_dir, "schedctl simulate: " + InputNames(options),
                      std::move(report), options.html);
    }
    if (!result.run.idle) {
      err << kPrefix << "warning: stopped by " << result.run.stopped_by
          << " with pods still being retried; the result is where they were then\n";
    }
    out << (options.output == "json" ? FormatJson(result) : FormatTable(result));
    return 0;
  } catch (const std::exception& e) {
    err << kPrefix << e.what()
        << PluginDirReplacedNote(options.plugin_dir, options.replaced_plugin_dir, e.what())
        << "\n";
    return 1;
  }
}

std::string PluginDirReplacedNote(const std::filesystem::path& given,
                                  const std::filesystem::path& builtin, std::string_view error) {
  if (builtin.empty() || error.find("\" is not known") == std::string_view::npos) return "";
  return "\n(--plugin-dir " + given.string() + " replaced the builtin plugin directory " +
         builtin.string() +
         ", so no builtin plugin is loaded; to load your plugins beside the builtins, leave "
         "--plugin-dir out and list your library in the config: [host] libraries = "
         "[{ path = \"/path/to/plugin.so\" }])";
}

int RunSimulateBatch(const SimulateOptions& options, std::istream& in, std::ostream& out,
                     std::ostream& err) {
  if (!options.explain || options.output != "json") {
    err << kPrefix
        << "--batch answers each file with its explain document: add --explain -o json\n";
    return 1;
  }
  if (!options.compare_path.empty()) {
    err << kPrefix << "--batch explains each file under one config; --compare compares two on "
                      "one input: use one at a time\n";
    return 1;
  }
  if (!options.manifest_paths.empty()) {
    err << kPrefix << "--batch reads the manifest files from stdin, one path per line: drop -f\n";
    return 1;
  }
  if (!options.html.empty()) {
    err << kPrefix << "--html writes the report of one simulation; --batch explains many: use "
                      "one at a time\n";
    return 1;
  }
  if (!options.pod.empty()) {
    err << kPrefix << "--pod picks one pod of one input; --batch explains every pod of many: use "
                      "one at a time\n";
    return 1;
  }
  config::HostConfig cfg;
  std::shared_ptr<const scheduler::ProfileSet> loaded;
  try {
    cfg = ExplainConfig(LoadConfig(options.config_path));
    // The libraries are loaded, checked and hashed here, once. This set's own profiles serve no
    // input (each gets a Rebuild), but building them reports a config the plugins refuse
    // before any input is read, as the single run would for every one of them.
    loaded = scheduler::ProfileSet::Build(cfg, options.plugin_dir);
  } catch (const std::exception& e) {
    err << kPrefix << e.what()
        << PluginDirReplacedNote(options.plugin_dir, options.replaced_plugin_dir, e.what())
        << "\n";
    return 1;
  }
  std::string path;
  while (std::getline(in, path)) {
    nlohmann::ordered_json answer;
    try {
      if (path.empty()) throw SimulationError("an empty line names no manifest file");
      auto [objects, generic] = DecodeInputs({path});
      answer = ExplainEachPod(loaded->Rebuild(cfg), objects, options.seed, generic);
    } catch (const std::exception& e) {
      answer = {{"error", std::string(kPrefix) + e.what()}};
    }
    // Exactly one line per input, whatever the strings hold: bytes that are not UTF-8 are
    // replaced rather than thrown on.
    out << answer.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n"
        << std::flush;
  }
  return 0;
}

}  // namespace schedhost::cli
