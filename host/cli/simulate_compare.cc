// `schedctl simulate --compare`: one input under two configs. The pending pods go through the
// whole simulation under each; every bound pod is replayed alone (scheduled as if pending, one
// cycle, against the cluster without it) under each. Where the two configs place a pod
// differently, scheduler::CompareCycles over the two cycles says which plugin turned it.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "host/api/admin_service.h"
#include "host/api/ui_api.h"
#include "host/cli/simulate.h"
#include "host/scheduler/clock.h"
#include "host/store/store.h"
#include "host/store/volume_controller.h"

namespace schedhost::cli {
namespace {

using PodPtr = std::shared_ptr<const model::Pod>;
using internal::IsPending;

std::string Key(std::string_view namespace_name, std::string_view name) {
  return std::string(namespace_name) + "/" + std::string(name);
}

// PendingRun is one config's whole simulation: the side of every pending input pod, by key.
struct PendingRun {
  std::map<std::string, ComparedSide> sides;
  nlohmann::json report;  // UiReport, with --html
};

PendingRun RunPending(const config::HostConfig& config, const std::vector<model::Object>& objects,
                      const std::vector<model::GenericObject>& generic,
                      const std::filesystem::path& plugin_dir, uint64_t seed, bool html) {
  PendingRun run;
  auto inspect = [&](store::Store& store, scheduler::Scheduler& sched) {
    if (html) {
      api::AdminService admin(store, sched, {.builtin_dir = plugin_dir});
      run.report = api::UiReport(admin, store, sched);
    }
    for (const model::Object& obj : objects) {
      if (!IsPending(obj)) continue;
      const model::Pod& input = *std::get<PodPtr>(obj);
      const std::string key = Key(input.namespace_name(), input.name());
      ComparedSide& side = run.sides[key];
      if (PodPtr pod = store.Get<model::Pod>(input.namespace_name(), input.name())) {
        side.explanation = sched.Explanation(pod->uid());
      }
      if (html) side.explain_json = run.report["explanations"].value(key, nlohmann::json());
    }
  };
  const SimulationResult result = Simulate(config, objects, generic, plugin_dir, seed, inspect);
  for (const SimulatedPod& p : result.pods) {
    auto side = run.sides.find(Key(p.namespace_name, p.name));
    if (side == run.sides.end()) continue;  // bound in the input: replayed instead
    side->second.node = p.node;
    side->second.message = p.message;
  }
  return run;
}

// Replayer schedules bound pods of the input one at a time under one config's profiles, each on
// a store of its own holding the rest of the cluster: one cycle, bound if it fits, nothing
// carried to the next pod.
class Replayer {
 public:
  Replayer(std::shared_ptr<const scheduler::ProfileSet> profiles,
           const std::filesystem::path& plugin_dir,
           const std::vector<model::GenericObject>& generic, uint64_t seed, bool html)
      : profiles_(std::move(profiles)),
        plugin_dir_(plugin_dir),
        generic_(generic),
        seed_(seed),
        html_(html) {}

  // Run places `pod` (unbound) on `cluster` less the object at `skip`.
  ComparedSide Run(const std::vector<const model::Object*>& cluster, const model::Object* skip,
                   const PodPtr& pod) {
    store::Store store;
    for (const model::Object* obj : cluster) {
      if (obj != skip) store.CreateObject(*obj);
    }
    store::VolumeController volumes(store.objects(), store::NodeHostnames(store));
    internal::ApplyGeneric(store, profiles_->DeclaredKinds(), generic_);
    volumes.Reconcile();
    const PodPtr created = std::get<PodPtr>(store.CreateObject(pod));

    scheduler::SchedulerOptions options;
    options.clock = std::make_shared<scheduler::VirtualClock>();
    options.seed = seed_;
    scheduler::Scheduler sched(store, profiles_, options);
    ComparedSide side;
    if (sched.profiles()->FrameworkFor(*created) == nullptr) {
      side.message = "no profile is named \"" + std::string(created->scheduler_name()) +
                     "\" (spec.schedulerName): this host does not schedule the pod";
    } else if (sched.ScheduleOne()) {
      sched.DrainBindings();
    }
    const PodPtr now = store.Get<model::Pod>(created->namespace_name(), created->name());
    if (now && !now->node_name().empty()) {
      side.node = std::string(now->node_name());
    } else if (side.message.empty()) {
      std::optional<scheduler::PodDiagnostics> d = sched.Diagnostics(created->uid());
      side.message = d && !d->message.empty() ? d->message : "no scheduling cycle ran";
    }
    side.explanation = sched.Explanation(created->uid());
    if (html_ && now) {
      api::AdminService admin(store, sched, {.builtin_dir = plugin_dir_});
      side.explain_json = api::UiExplanation(admin, *now);
    }
    sched.Stop();
    return side;
  }

 private:
  std::shared_ptr<const scheduler::ProfileSet> profiles_;
  std::filesystem::path plugin_dir_;
  const std::vector<model::GenericObject>& generic_;
  uint64_t seed_;
  bool html_;
};

// Unbound is `pod` as if it had never been scheduled.
PodPtr Unbound(const model::Pod& pod) {
  model::PodData data = pod.Decode();
  data.spec.node_name.clear();
  data.status.nominated_node_name.clear();
  return model::Pod::Make(std::move(data));
}

// Judge fills `pod`'s verdict from its two sides.
void Judge(ComparedPod& pod) {
  pod.differs = pod.old_side.node != pod.new_side.node;
  if (!pod.differs) return;
  const std::string old_node = pod.old_side.node.value_or("");
  const std::string new_node = pod.new_side.node.value_or("");
  if (!pod.old_side.explanation || !pod.new_side.explanation) {
    pod.diff.same_node = false;
    pod.diff.detail = std::string(pod.old_side.explanation ? "new" : "old") +
                      " ran no scheduling cycle for the pod, or its record was dropped";
    return;
  }
  pod.diff = scheduler::CompareCycles(*pod.old_side.explanation, old_node,
                                      *pod.new_side.explanation, new_node, "old", "new");
  if (pod.diff.same_node) {
    // Both cycles rank each other's node among their best: the seeded tie-break, or (for a
    // pending pod) the pods placed before it, chose differently.
    pod.diff.same_node = false;
    pod.diff.detail = "old and new score " + (old_node.empty() ? new_node : old_node) +
                      " among their best nodes: the tie-break between equal nodes, or the pods "
                      "placed before this one, chose differently";
  }
}

// SideJson is a side for the report; the explanation only for a pod that differs (the page
// opens those, and a cluster's worth of explanations would make the file large).
nlohmann::json SideJson(const ComparedSide& side, bool differs) {
  return {{"node", side.node ? nlohmann::json(*side.node) : nlohmann::json(nullptr)},
          {"message", side.message},
          {"explanation", differs ? side.explain_json : nlohmann::json()}};
}

// Declares is true when `kinds` holds the kind of `object`.
bool Declares(const std::vector<store::KindInfo>& kinds, const model::GenericObject& object) {
  return std::any_of(kinds.begin(), kinds.end(), [&](const store::KindInfo& k) {
    return k.ApiVersion() == object.api_version && k.kind == object.kind;
  });
}

// Readable is `generic` less the objects of kinds `mine` does not declare and `theirs` does: a
// snapshot holds the kinds of either config, and a config has no use for a kind it does not
// read. A kind neither declares stays, to be refused as simulate refuses it.
std::vector<model::GenericObject> Readable(const std::vector<store::KindInfo>& mine,
                                           const std::vector<store::KindInfo>& theirs,
                                           const std::vector<model::GenericObject>& generic) {
  std::vector<model::GenericObject> out;
  for (const model::GenericObject& object : generic) {
    if (Declares(mine, object) || !Declares(theirs, object)) out.push_back(object);
  }
  return out;
}

// Sequential is `config` with Filter and Score on one thread.
config::HostConfig Sequential(config::HostConfig config) {
  config.parallelism = 1;
  return config;
}

}  // namespace

Comparison Compare(const config::HostConfig& old_input, const config::HostConfig& new_input,
                   const std::vector<model::Object>& objects,
                   const std::vector<model::GenericObject>& generic,
                   const std::filesystem::path& plugin_dir, uint64_t seed, bool html) {
  // One thread each: a cycle that stops at percentageOfNodesToScore then stops at the same
  // nodes in every run. Threads find the first feasible nodes in whatever order they race to
  // them (upstream's too), so identical configs would seem to differ on a large cluster.
  const config::HostConfig old_config = Sequential(old_input);
  const config::HostConfig new_config = Sequential(new_input);
  Comparison comparison;
  comparison.old_config = old_config.source;
  comparison.new_config = new_config.source;
  // The replays' profile sets, built first: they say which kinds each config reads.
  auto old_profiles = scheduler::ProfileSet::Build(old_config, plugin_dir);
  auto new_profiles = scheduler::ProfileSet::Build(new_config, plugin_dir);
  const std::vector<model::GenericObject> old_generic =
      Readable(old_profiles->DeclaredKinds(), new_profiles->DeclaredKinds(), generic);
  const std::vector<model::GenericObject> new_generic =
      Readable(new_profiles->DeclaredKinds(), old_profiles->DeclaredKinds(), generic);
  PendingRun old_run = RunPending(old_config, objects, old_generic, plugin_dir, seed, html);
  PendingRun new_run = RunPending(new_config, objects, new_generic, plugin_dir, seed, html);
  for (const model::Object& obj : objects) {
    if (!IsPending(obj)) continue;
    const model::Pod& pod = *std::get<PodPtr>(obj);
    const std::string key = Key(pod.namespace_name(), pod.name());
    ComparedPod& c = comparison.pods.emplace_back();
    c.namespace_name = pod.namespace_name();
    c.name = pod.name();
    c.kind = "pending";
    c.old_side = std::move(old_run.sides[key]);
    c.new_side = std::move(new_run.sides[key]);
    Judge(c);
  }

  std::vector<const model::Object*> cluster;
  for (size_t i : internal::ApplyOrder(objects)) {
    if (!IsPending(objects[i])) cluster.push_back(&objects[i]);
  }
  Replayer old_replay(std::move(old_profiles), plugin_dir, old_generic, seed, html);
  Replayer new_replay(std::move(new_profiles), plugin_dir, new_generic, seed, html);
  for (const model::Object& obj : objects) {
    const auto* pod = std::get_if<PodPtr>(&obj);
    if (pod == nullptr || IsPending(obj)) continue;
    const PodPtr unbound = Unbound(**pod);
    ComparedPod& c = comparison.pods.emplace_back();
    c.namespace_name = (*pod)->namespace_name();
    c.name = (*pod)->name();
    c.kind = "replay";
    c.runs_on = std::string((*pod)->node_name());
    c.old_side = old_replay.Run(cluster, &obj, unbound);
    c.new_side = new_replay.Run(cluster, &obj, unbound);
    Judge(c);
  }

  if (html) {
    comparison.report = std::move(new_run.report);
    nlohmann::json pods = nlohmann::json::array();
    for (const ComparedPod& c : comparison.pods) {
      pods.push_back({{"namespace", c.namespace_name},
                      {"name", c.name},
                      {"kind", c.kind},
                      {"runs_on", c.runs_on ? nlohmann::json(*c.runs_on) : nlohmann::json()},
                      {"differs", c.differs},
                      {"point", c.diff.point},
                      {"plugin", c.diff.plugin},
                      {"detail", c.diff.detail},
                      {"old", SideJson(c.old_side, c.differs)},
                      {"new", SideJson(c.new_side, c.differs)}});
    }
    comparison.report["compare"] = {{"old_config", comparison.old_config},
                                    {"new_config", comparison.new_config},
                                    {"pods", std::move(pods)}};
  }
  return comparison;
}

}  // namespace schedhost::cli
