// The C API of the test harness (sdk/include/schedhost/testing.h): JSON requests dispatched to
// the C++ harness of testing.hpp, JSON answers. Every exception becomes {"error": ...}.

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedhost/testing.h"
#include "schedhost/testing.hpp"

using nlohmann::json;
namespace t = schedhost::testing;

struct schedhost_testing_harness {
  t::Harness harness;
};

struct schedhost_testing_cycle {
  t::Cycle cycle;
};

namespace {

char* Answer(const json& doc) {
  const std::string text = doc.dump();
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

char* Ok(json result) { return Answer(json{{"ok", std::move(result)}}); }
char* Fail(const std::string& why) { return Answer(json{{"error", why}}); }

json Parse(const char* text) {
  if (text == nullptr) throw t::Error("no request (NULL)");
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw t::Error(std::string("the request is not a JSON object: ").append(text));
  }
  return doc;
}

std::string Str(const json& req, const char* key) {
  const auto it = req.find(key);
  if (it == req.end()) throw t::Error(std::string("the request has no \"") + key + "\"");
  if (!it->is_string()) throw t::Error(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

std::string OptStr(const json& req, const char* key) {
  const auto it = req.find(key);
  if (it == req.end() || it->is_null()) return {};
  if (!it->is_string()) throw t::Error(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

std::vector<std::string> Strings(const json& req, const char* key) {
  std::vector<std::string> out;
  const auto it = req.find(key);
  if (it == req.end() || it->is_null()) return out;
  if (!it->is_array()) throw t::Error(std::string("\"") + key + "\" must be an array of strings");
  for (const json& s : *it) {
    if (!s.is_string()) throw t::Error(std::string("\"") + key + "\" must be an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

json ToJson(const t::Result& r) {
  return json{{"code", static_cast<int32_t>(r.code)},
              {"code_name", t::CodeName(r.code)},
              {"plugin", r.plugin},
              {"reasons", r.reasons},
              {"skipped", r.skipped}};
}

json ToJson(const std::vector<t::NodeScore>& scores) {
  json out = json::array();
  for (const t::NodeScore& s : scores) {
    json plugins = json::array();
    for (const t::PluginScore& p : s.plugins) {
      plugins.push_back(json{{"plugin", p.plugin},
                             {"raw", p.raw},
                             {"normalized", p.normalized},
                             {"weighted", p.weighted},
                             {"skipped", p.skipped}});
    }
    out.push_back(json{{"node", s.node}, {"total", s.total}, {"plugins", std::move(plugins)}});
  }
  return out;
}

t::Event ToEvent(const json& e) {
  if (!e.is_object()) throw t::Error("\"event\" must be an object");
  const std::string kind = Str(e, "kind");
  const std::string old_object = OptStr(e, "old");
  const std::string new_object = OptStr(e, "new");
  if (kind == "node_add") return t::Event::NodeAdd(new_object);
  if (kind == "node_update") return t::Event::NodeUpdate(old_object, new_object);
  if (kind == "node_delete") return t::Event::NodeDelete(old_object);
  if (kind == "assigned_pod_add") return t::Event::AssignedPodAdd(new_object);
  if (kind == "assigned_pod_update") return t::Event::AssignedPodUpdate(old_object, new_object);
  if (kind == "assigned_pod_delete") return t::Event::AssignedPodDelete(old_object);
  throw t::Error(std::string("unknown event kind \"") + kind +
                 "\" (node_add, node_update, node_delete, assigned_pod_add, "
                 "assigned_pod_update, assigned_pod_delete)");
}

json HarnessCall(t::Harness& h, const json& req) {
  const std::string op = Str(req, "op");
  if (op == "use_plugins") {
    h.UsePlugins(Strings(req, "plugins"), OptStr(req, "extra_toml"));
    return nullptr;
  }
  if (op == "set_config") {
    h.SetConfig(Str(req, "toml"));
    return nullptr;
  }
  if (op == "add_objects") {
    h.AddObjects(Str(req, "yaml"));
    return nullptr;
  }
  if (op == "plugin_names") return h.PluginNames();
  if (op == "pre_enqueue") return ToJson(h.PreEnqueue(Str(req, "pod")));
  if (op == "schedule_one") {
    const t::ScheduleResult r = h.ScheduleOne(Str(req, "pod"));
    return json{{"node", r.node}, {"message", r.message}};
  }
  if (op == "bindings") return h.Bindings();
  if (op == "events_to_register") {
    json out = json::array();
    for (const t::EventRegistration& r : h.EventsToRegister()) {
      out.push_back(json{{"plugin", r.plugin},
                         {"resource", r.resource},
                         {"actions", r.actions},
                         {"has_hint", r.has_hint}});
    }
    return out;
  }
  if (op == "hint") {
    const auto e = req.find("event");
    if (e == req.end()) throw t::Error("the request has no \"event\"");
    const t::QueueingHint hint = h.Hint(Str(req, "plugin"), Str(req, "pod"), ToEvent(*e));
    return hint == t::QueueingHint::kQueue ? "Queue" : "Skip";
  }
  throw t::Error(std::string("unknown harness op \"") + op +
                 "\" (use_plugins, set_config, add_objects, plugin_names, pre_enqueue, "
                 "schedule_one, bindings, events_to_register, hint)");
}

json CycleCall(t::Cycle& c, const json& req) {
  const std::string op = Str(req, "op");
  if (op == "pre_filter") return ToJson(c.PreFilter());
  if (op == "pre_filter_nodes") {
    const std::optional<std::vector<std::string>> nodes = c.PreFilterNodes();
    return nodes ? json(*nodes) : json(nullptr);
  }
  if (op == "add_pod") return ToJson(c.AddPod(Str(req, "pod"), Str(req, "node")));
  if (op == "remove_pod") return ToJson(c.RemovePod(Str(req, "pod"), Str(req, "node")));
  if (op == "filter") return ToJson(c.Filter(Str(req, "node")));
  if (op == "filter_all") {
    json out = json::array();
    for (const t::NodeResult& r : c.FilterAll()) {
      out.push_back(json{{"node", r.node}, {"result", ToJson(r.result)}});
    }
    return out;
  }
  if (op == "post_filter") {
    const t::PostFilterResult r = c.PostFilter();
    return json{{"result", ToJson(r.result)}, {"nominated_node", r.nominated_node}};
  }
  if (op == "pre_score") return ToJson(c.PreScore());
  if (op == "score") return ToJson(c.Score());
  if (op == "reserve") return ToJson(c.Reserve(Str(req, "node")));
  if (op == "unreserve") {
    c.Unreserve(Str(req, "node"));
    return nullptr;
  }
  if (op == "permit") {
    const t::PermitResult r = c.Permit(Str(req, "node"));
    json waits = json::array();
    for (const auto& [plugin, timeout] : r.waits) {
      waits.push_back(json{{"plugin", plugin}, {"timeout_ns", timeout.count()}});
    }
    return json{{"result", ToJson(r.result)}, {"waits", std::move(waits)}};
  }
  if (op == "pre_bind") return ToJson(c.PreBind(Str(req, "node")));
  if (op == "bind") return ToJson(c.Bind(Str(req, "node")));
  if (op == "post_bind") {
    c.PostBind(Str(req, "node"));
    return nullptr;
  }
  throw t::Error(std::string("unknown cycle op \"") + op +
                 "\" (pre_filter, pre_filter_nodes, add_pod, remove_pod, filter, filter_all, "
                 "post_filter, pre_score, score, reserve, unreserve, permit, pre_bind, bind, "
                 "post_bind)");
}

json Run(const json& req) {
  const std::string op = Str(req, "op");
  t::SimulateOptions options;
  options.libraries = Strings(req, "libraries");
  options.plugin_dir = OptStr(req, "plugin_dir");
  options.base_dir = OptStr(req, "base_dir");
  if (const auto seed = req.find("seed"); seed != req.end()) {
    if (!seed->is_number_unsigned()) throw t::Error("\"seed\" must be a non-negative integer");
    options.seed = seed->get<uint64_t>();
  }
  const std::string config = OptStr(req, "config");
  const std::string manifests = Str(req, "manifests");
  if (op == "explain") {
    const t::ExplainResult r = t::Explain(config, manifests, options);
    return json::parse(r.json);
  }
  if (op == "simulate") {
    const t::SimulationResult r = t::Simulate(config, manifests, options);
    json pods = json::array();
    for (const t::Placement& p : r.pods) {
      pods.push_back(json{{"namespace", p.namespace_name},
                          {"name", p.name},
                          {"node", p.node ? json(*p.node) : json(nullptr)},
                          {"nominated_node", p.nominated_node ? json(*p.nominated_node) : json(nullptr)},
                          {"status", p.status},
                          {"message", p.message}});
    }
    json evicted = json::array();
    for (const t::Eviction& e : r.evicted) {
      evicted.push_back(json{{"namespace", e.namespace_name}, {"name", e.name}, {"by", e.by}});
    }
    return json{{"pods", std::move(pods)}, {"evicted", std::move(evicted)}, {"idle", r.idle}};
  }
  throw t::Error(std::string("unknown run op \"") + op + "\" (simulate, explain)");
}

template <class Fn>
char* Guard(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    try {
      return Fail(e.what());
    } catch (...) {
      return nullptr;
    }
  } catch (...) {
    try {
      return Fail("unknown exception");
    } catch (...) {
      return nullptr;
    }
  }
}

}  // namespace

extern "C" {

uint32_t schedhost_testing_api_version(void) { return SCHEDHOST_TESTING_C_API_VERSION; }

char* schedhost_testing_harness_new(const char* options_json, schedhost_testing_harness** out) {
  if (out != nullptr) *out = nullptr;
  return Guard([&]() -> char* {
    if (out == nullptr) throw t::Error("no place for the harness (NULL out)");
    const json req = Parse(options_json == nullptr ? "{}" : options_json);
    t::Harness::Options options;
    options.libraries = Strings(req, "libraries");
    options.plugin_dir = OptStr(req, "plugin_dir");
    auto h = std::make_unique<schedhost_testing_harness>(
        schedhost_testing_harness{t::Harness(std::move(options))});
    *out = h.release();
    return Ok(nullptr);
  });
}

void schedhost_testing_harness_delete(schedhost_testing_harness* harness) { delete harness; }

char* schedhost_testing_harness_call(schedhost_testing_harness* harness,
                                     const char* request_json) {
  return Guard([&]() -> char* {
    if (harness == nullptr) throw t::Error("no harness (NULL)");
    return Ok(HarnessCall(harness->harness, Parse(request_json)));
  });
}

char* schedhost_testing_cycle_start(schedhost_testing_harness* harness, const char* pod_yaml,
                                    schedhost_testing_cycle** out) {
  if (out != nullptr) *out = nullptr;
  return Guard([&]() -> char* {
    if (harness == nullptr || out == nullptr || pod_yaml == nullptr) {
      throw t::Error("cycle_start needs a harness, a pod and a place for the cycle (NULL given)");
    }
    auto c = std::make_unique<schedhost_testing_cycle>(
        schedhost_testing_cycle{harness->harness.StartCycle(pod_yaml)});
    *out = c.release();
    return Ok(nullptr);
  });
}

void schedhost_testing_cycle_delete(schedhost_testing_cycle* cycle) { delete cycle; }

char* schedhost_testing_cycle_call(schedhost_testing_cycle* cycle, const char* request_json) {
  return Guard([&]() -> char* {
    if (cycle == nullptr) throw t::Error("no cycle (NULL)");
    return Ok(CycleCall(cycle->cycle, Parse(request_json)));
  });
}

char* schedhost_testing_run(const char* request_json) {
  return Guard([&]() -> char* { return Ok(Run(Parse(request_json))); });
}

void schedhost_testing_free(char* text) { std::free(text); }

}  // extern "C"
