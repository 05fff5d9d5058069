// schedhost::testing::Simulate and Explain: `schedctl simulate -o json` and `schedctl simulate
// --explain -o json` (host/cli/simulate*.cc) called in-process, their results as values.
#include "host/cli/simulate.h"

#include <nlohmann/json.hpp>

#include "host/config/host_config.h"
#include "host/testing/internal.h"

namespace schedhost::testing {
namespace {

using nlohmann::ordered_json;

// Inputs are the config and the objects Simulate and Explain both start from.
struct Inputs {
  config::HostConfig config;
  std::vector<model::Object> objects;
  std::vector<model::GenericObject> generic;  // objects of kinds plugins declare
  std::filesystem::path plugin_dir;
};

Inputs Read(std::string_view config_toml, std::string_view manifests,
            const SimulateOptions& options) {
  Inputs in;
  in.config = config_toml.empty()
                  ? config::ParseConfig("", "(built-in defaults)", {})
                  : config::ParseConfig(config_toml, "schedhost.toml", options.base_dir);
  if (!options.libraries.empty()) {
    in.config.libraries.clear();
    for (const std::string& path : options.libraries) {
      config::LibrarySpec spec;
      spec.path = std::filesystem::absolute(path);
      in.config.libraries.push_back(std::move(spec));
    }
  }
  in.objects = model::DecodeManifests(manifests, "manifests.yaml", {}, &in.generic);
  in.plugin_dir = internal::ResolvePluginDir(options.plugin_dir);
  return in;
}

// Key matches "namespace/name", or "name" for the default namespace.
bool Matches(std::string_view key, const std::string& ns, const std::string& name) {
  if (key.find('/') == std::string_view::npos) return ns == "default" && key == name;
  return key == ns + "/" + name;
}

Result StatusFrom(const ordered_json& j) {
  Result r;
  r.plugin = j.value("plugin", "");
  const std::string code = j.value("code", "");
  for (int c = 0; c <= static_cast<int>(Code::kPending); ++c) {
    if (CodeName(static_cast<Code>(c)) == code) r.code = static_cast<Code>(c);
  }
  if (j.contains("reasons")) r.reasons = j["reasons"].get<std::vector<std::string>>();
  return r;
}

Explanation ExplanationFrom(const ordered_json& j) {
  Explanation e;
  e.namespace_name = j.at("namespace").get<std::string>();
  e.name = j.at("name").get<std::string>();
  if (j.contains("gated")) e.gated = StatusFrom(j["gated"]);
  if (j.contains("preFilter")) e.pre_filter = StatusFrom(j["preFilter"]);
  for (const auto& n : j.value("nodes", ordered_json::array())) {
    NodeVerdict v;
    v.name = n.at("name").get<std::string>();
    v.feasible = n.at("feasible").get<bool>();
    if (!v.feasible) v.result = StatusFrom(n);
    e.nodes.push_back(std::move(v));
  }
  for (const auto& s : j.value("scores", ordered_json::array())) {
    NodeScore ns;
    ns.node = s.at("name").get<std::string>();
    ns.total = s.at("total").get<int64_t>();
    for (const auto& p : s.at("plugins")) {
      ns.plugins.push_back({p.at("plugin").get<std::string>(), p.at("raw").get<int64_t>(),
                            p.at("normalized").get<int64_t>(), p.at("weighted").get<int64_t>()});
    }
    e.scores.push_back(std::move(ns));
  }
  if (j.contains("best")) e.best = j["best"].get<std::vector<std::string>>();
  if (j.contains("placed")) e.placed = j["placed"].get<std::string>();
  e.message = j.value("message", "");
  if (j.contains("postFilter")) {
    e.nominated_node = j["postFilter"].value("nominatedNode", "");
    e.victims = j["postFilter"].value("victims", std::vector<std::string>{});
  }
  return e;
}

}  // namespace

const Placement* SimulationResult::Find(std::string_view pod) const {
  for (const Placement& p : pods) {
    if (Matches(pod, p.namespace_name, p.name)) return &p;
  }
  return nullptr;
}

const Explanation* ExplainResult::Find(std::string_view pod) const {
  for (const Explanation& e : pods) {
    if (Matches(pod, e.namespace_name, e.name)) return &e;
  }
  return nullptr;
}

SimulationResult Simulate(std::string_view config_toml, std::string_view manifests,
                          const SimulateOptions& options) {
  return internal::Guard("Simulate", [&] {
    Inputs in = Read(config_toml, manifests, options);
    cli::SimulationResult r =
        cli::Simulate(in.config, in.objects, in.generic, in.plugin_dir, options.seed);
    SimulationResult out;
    for (const cli::SimulatedPod& p : r.pods) {
      out.pods.push_back({p.namespace_name, p.name, p.node, p.nominated_node, p.status, p.message});
    }
    for (const cli::Eviction& e : r.evicted)
      out.evicted.push_back({e.namespace_name, e.name, e.by});
    out.idle = r.run.idle;
    return out;
  });
}

ExplainResult Explain(std::string_view config_toml, std::string_view manifests,
                      const SimulateOptions& options) {
  return internal::Guard("Explain", [&] {
    Inputs in = Read(config_toml, manifests, options);
    const ordered_json doc = cli::ExplainEachPod(std::move(in.config), in.objects, in.plugin_dir,
                                                 options.seed, in.generic);
    ExplainResult out;
    for (const auto& pod : doc.at("pods")) out.pods.push_back(ExplanationFrom(pod));
    out.json = doc.dump(2);
    return out;
  });
}

}  // namespace schedhost::testing
