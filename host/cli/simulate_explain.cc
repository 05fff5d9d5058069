// `schedctl simulate --explain`: one scheduling cycle per pending pod, each against the input's
// cluster plus the earlier pods that fitted, reported as the explain document of
// docs/conformance.md. Each cycle runs the real scheduler (queue, PreEnqueue, the cycle,
// PostFilter) on a store of its own, so one pod's preemption never changes what the next sees,
// and ends after Reserve and Permit (Unreserve, no PreBind or Bind): no plugin writes anything.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "host/cli/simulate.h"
#include "host/scheduler/clock.h"
#include "host/scheduler/profile_set.h"
#include "host/store/store.h"

namespace schedhost::cli {
namespace {

using nlohmann::ordered_json;
using PodPtr = std::shared_ptr<const model::Pod>;
using internal::IsPending;

ordered_json StatusJson(const framework::Status& s) {
  ordered_json reasons = ordered_json::array();
  for (const framework::Text& r : s.reasons) reasons.push_back(r.str());
  return ordered_json{{"plugin", s.plugin.str()},
                      {"code", std::string(framework::CodeName(s.code))},
                      {"reasons", std::move(reasons)}};
}

// Placement is an earlier pending pod that fitted and the node the document placed it on.
struct Placement {
  PodPtr pod;
  std::string node;
};

// Cycle holds what one pod's cycle needs beyond the document being written.
class Cycle {
 public:
  Cycle(std::shared_ptr<const scheduler::ProfileSet> profiles, uint64_t seed,
        const std::vector<model::GenericObject>& generic)
      : profiles_(std::move(profiles)), seed_(seed), generic_(generic) {}

  const std::vector<store::KindInfo>& DeclaredKinds() const { return profiles_->DeclaredKinds(); }

  // Run explains `pod` against `cluster` plus `placed` into `out`; returns the node the pod is
  // placed on ("" when it fits nowhere or did not get a cycle).
  std::string Run(const std::vector<model::Object>& cluster, const std::vector<Placement>& placed,
                  const model::Object& pod_object, ordered_json& out) {
    store::Store store;
    for (const model::Object& obj : cluster) store.CreateObject(obj);
    internal::ApplyGeneric(store, profiles_->DeclaredKinds(), generic_);
    for (const Placement& p : placed) {
      PodPtr created = std::get<PodPtr>(store.CreateObject(p.pod));
      store.Bind(created->namespace_name(), created->name(), created->uid(), 0, p.node);
    }
    const PodPtr pod = std::get<PodPtr>(store.CreateObject(pod_object));

    std::vector<std::string> victims;
    scheduler::SchedulerOptions options;
    options.clock = std::make_shared<scheduler::VirtualClock>();
    options.seed = seed_;
    options.bind = false;
    options.on_evicted = [&victims](const model::Pod& victim, const model::Pod*) {
      victims.push_back(victim.Key());
    };
    scheduler::Scheduler sched(store, profiles_, options);
    std::string placed_on = Explain(sched, store, *pod, victims, out);
    sched.Stop();
    return placed_on;
  }

 private:
  std::string Explain(scheduler::Scheduler& sched, const store::Store& store, const model::Pod& pod,
                      std::vector<std::string>& victims, ordered_json& out) {
    framework::Framework* fw = sched.profiles()->FrameworkFor(pod);
    if (fw == nullptr) {
      throw SimulationError("pod " + pod.Key() +
                            " names no profile of the config (schedulerName \"" +
                            std::string(pod.scheduler_name()) + "\")");
    }
    if (framework::Status gate = fw->RunPreEnqueuePlugins(pod.view()); !gate.ok()) {
      out["gated"] = StatusJson(gate);
      return "";
    }
    if (!sched.ScheduleOne()) {
      throw SimulationError("pod " + pod.Key() + " was admitted but never reached a cycle");
    }
    std::shared_ptr<const scheduler::CycleExplanation> e = sched.Explanation(pod.uid());
    if (e == nullptr) throw SimulationError("the cycle of pod " + pod.Key() + " left no record");
    if (e->nodes.size() != e->num_all_nodes) {
      throw SimulationError("the cycle of pod " + pod.Key() + " evaluated " +
                            std::to_string(e->nodes.size()) + " of " +
                            std::to_string(e->num_all_nodes) + " nodes");
    }
    if (e->pre_filter_failure && !e->nodes.empty()) {
      out["preFilter"] = StatusJson(e->nodes.front().status);
    }

    std::vector<const scheduler::NodeVerdict*> by_name;
    for (const scheduler::NodeVerdict& v : e->nodes) by_name.push_back(&v);
    std::sort(by_name.begin(), by_name.end(),
              [](const auto* a, const auto* b) { return a->node < b->node; });
    ordered_json nodes = ordered_json::array();
    ordered_json scores = ordered_json::array();
    std::vector<std::string> best;
    int64_t best_total = 0;
    size_t feasible = 0;
    for (const scheduler::NodeVerdict* v : by_name) {
      const bool fits = v->outcome == scheduler::NodeOutcome::kFeasible;
      ordered_json node{{"name", v->node}, {"feasible", fits}};
      if (!fits) {
        ordered_json s = StatusJson(v->status);
        // A node PreFilter's node set left out has no rejecting plugin: the field is left out.
        if (!v->status.plugin.empty()) node["plugin"] = std::move(s["plugin"]);
        node["code"] = std::move(s["code"]);
        node["reasons"] = std::move(s["reasons"]);
      }
      nodes.push_back(std::move(node));
      if (!fits) continue;
      ++feasible;
      if (best.empty() || v->total > best_total) {
        best = {v->node};
        best_total = v->total;
      } else if (v->total == best_total) {
        best.push_back(v->node);
      }
      if (v->raw.empty()) continue;
      scores.push_back(ScoreJson(*e, *v));
    }
    out["nodes"] = std::move(nodes);
    if (feasible >= 2) out["scores"] = std::move(scores);
    if (!best.empty()) {
      out["best"] = best;
      out["placed"] = best.front();
      return best.front();
    }

    std::optional<scheduler::PodDiagnostics> d = sched.Diagnostics(pod.uid());
    out["message"] = d ? d->message : std::string();
    const PodPtr now = store.Get<model::Pod>(pod.namespace_name(), pod.name());
    std::sort(victims.begin(), victims.end());
    out["postFilter"] = ordered_json{
        {"nominatedNode", now ? std::string(now->nominated_node_name()) : std::string()},
        {"victims", victims}};
    return "";
  }

  static ordered_json ScoreJson(const scheduler::CycleExplanation& e,
                                const scheduler::NodeVerdict& v) {
    std::vector<size_t> columns(e.score_plugins.size());
    for (size_t k = 0; k < columns.size(); ++k) columns[k] = k;
    std::sort(columns.begin(), columns.end(),
              [&](size_t a, size_t b) { return e.score_plugins[a] < e.score_plugins[b]; });
    ordered_json plugins = ordered_json::array();
    for (size_t k : columns) {
      // Weights are at least 1 (config validation), so the normalized score is exact.
      const int64_t weight = std::max<int64_t>(1, e.score_weights[k]);
      plugins.push_back(ordered_json{{"plugin", e.score_plugins[k]},
                                     {"raw", v.raw[k]},
                                     {"normalized", v.weighted[k] / weight},
                                     {"weighted", v.weighted[k]}});
    }
    return ordered_json{{"name", v.node}, {"total", v.total}, {"plugins", std::move(plugins)}};
  }

  std::shared_ptr<const scheduler::ProfileSet> profiles_;
  uint64_t seed_;
  const std::vector<model::GenericObject>& generic_;
};

}  // namespace

config::HostConfig ExplainConfig(config::HostConfig config) {
  // Every node is evaluated, whatever the config says: the document lists them all.
  config.percentage_of_nodes_to_score = 100;
  for (config::Profile& profile : config.profiles) profile.percentage_of_nodes_to_score = 100;
  return config;
}

nlohmann::ordered_json ExplainEachPod(config::HostConfig config,
                                      const std::vector<model::Object>& objects,
                                      const std::filesystem::path& plugin_dir, uint64_t seed,
                                      const std::vector<model::GenericObject>& generic) {
  return ExplainEachPod(scheduler::ProfileSet::Build(ExplainConfig(std::move(config)), plugin_dir),
                        objects, seed, generic);
}

nlohmann::ordered_json ExplainEachPod(std::shared_ptr<const scheduler::ProfileSet> profiles,
                                      const std::vector<model::Object>& objects, uint64_t seed,
                                      const std::vector<model::GenericObject>& generic) {
  Cycle cycle(std::move(profiles), seed, generic);

  // The whole input is applied once first: a refused object is reported by its place in the
  // input before any cycle runs. Each cycle then applies the cluster in the same order.
  {
    store::Store check;
    internal::ApplyAll(check, objects);
    internal::ApplyGeneric(check, cycle.DeclaredKinds(), generic);
  }
  std::vector<model::Object> cluster;
  for (size_t i : internal::ApplyOrder(objects)) {
    if (!IsPending(objects[i])) cluster.push_back(objects[i]);
  }

  std::vector<Placement> placed;
  ordered_json pods = ordered_json::array();
  for (const model::Object& obj : objects) {
    if (!IsPending(obj)) continue;
    const PodPtr& pod = std::get<PodPtr>(obj);
    ordered_json entry{{"namespace", std::string(pod->namespace_name())},
                       {"name", std::string(pod->name())}};
    std::string node = cycle.Run(cluster, placed, obj, entry);
    if (!node.empty()) placed.push_back({pod, std::move(node)});
    pods.push_back(std::move(entry));
  }
  return ordered_json{{"pods", std::move(pods)}};
}

}  // namespace schedhost::cli
