#include "host/api/ui_api.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/cache/node_info.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/model/enums.h"
#include "host/model/interner.h"
#include "host/model/node.h"
#include "host/queue/scheduling_queue.h"

namespace schedhost::api {
namespace {

constexpr const char* kJson = "application/json";

// Hex is the value of one hex digit, or -1.
int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Unescape decodes one query component ('+' is a space, %XX a byte). Hand-written: Debian 12's
// Boost (1.74) predates Boost.URL, and this is all of it the API needs.
std::string Unescape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && Hex(in[i + 1]) >= 0 &&
               Hex(in[i + 2]) >= 0) {
      out += static_cast<char>(Hex(in[i + 1]) * 16 + Hex(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

// ParseQuery splits "a=1&b=2" into its decoded keys and values (a later key wins).
std::map<std::string, std::string> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      out[Unescape(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : Unescape(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

// JsonAnswer answers `body` as one line of JSON; bytes of its strings that are not UTF-8 (a name
// from the query string) are replaced, not refused.
HttpAnswer JsonAnswer(unsigned status, const nlohmann::json& body) {
  return {status, kJson,
          body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"};
}

// Error is a JSON error answer.
HttpAnswer Error(unsigned status, std::string_view code, const std::string& message) {
  return JsonAnswer(status, {{"code", code}, {"message", message}});
}

// FromStatus answers a failed Admin call with its gRPC code mapped to HTTP.
HttpAnswer FromStatus(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND: return Error(404, "NOT_FOUND", status.error_message());
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Error(400, "INVALID_ARGUMENT", status.error_message());
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Error(409, "FAILED_PRECONDITION", status.error_message());
    default: return Error(500, "INTERNAL", status.error_message());
  }
}

// Json answers 200 with `message` in protobuf's JSON mapping (admin.proto's field names, zero
// values printed).
HttpAnswer Json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  const auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) return Error(500, "INTERNAL", "encoding JSON: " + status.ToString());
  return {200, kJson, out + "\n"};
}

// Param is the value of query parameter `key`, "" when it is absent.
std::string Param(const std::map<std::string, std::string>& q, const std::string& key) {
  auto it = q.find(key);
  return it == q.end() ? std::string() : it->second;
}

// Int reads a non-negative integer parameter, or fails with 400 naming it.
std::optional<int> Int(const std::map<std::string, std::string>& q, const std::string& key,
                       int fallback, int max, HttpAnswer* error) {
  auto it = q.find(key);
  if (it == q.end()) return fallback;
  int value = 0;
  const char* end = it->second.data() + it->second.size();
  const auto [ptr, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0 || value > max) {
    *error = Error(400, "INVALID_ARGUMENT",
                   key + " must be a whole number from 0 to " + std::to_string(max) + ", not \"" +
                       it->second + "\"");
    return std::nullopt;
  }
  return value;
}

// Page is where a page starts and how long it is, from `offset` and `limit`.
struct Page {
  int offset = 0;
  int limit = kDefaultPageLimit;
};

// ParsePage reads `offset` and `limit`, or fails with 400 naming the bad one.
std::optional<Page> ParsePage(const std::map<std::string, std::string>& q, HttpAnswer* error) {
  const std::optional<int> offset = Int(q, "offset", 0, 1'000'000'000, error);
  if (!offset) return std::nullopt;
  const std::optional<int> limit = Int(q, "limit", kDefaultPageLimit, kPageLimit, error);
  if (!limit) return std::nullopt;
  return Page{*offset, *limit};
}

// Explain answers /api/v1/explain: one page of the pod's explanation (see ui_api.h).
HttpAnswer Explain(AdminService& admin, std::string_view query) {
  const auto q = ParseQuery(query);
  v1::ExplainRequest request;
  request.set_namespace_(Param(q, "namespace"));
  request.set_name(Param(q, "name"));
  if (request.name().empty()) {
    return Error(400, "INVALID_ARGUMENT",
                 "name is required: /api/v1/explain?namespace=NS&name=POD");
  }
  HttpAnswer error;
  const std::optional<Page> at = ParsePage(q, &error);
  if (!at) return error;
  std::optional<bool> feasible;
  if (auto it = q.find("feasible"); it != q.end()) {
    if (it->second != "true" && it->second != "false") {
      return Error(400, "INVALID_ARGUMENT",
                   "feasible must be true or false, not \"" + it->second + "\"");
    }
    feasible = it->second == "true";
  }
  const std::string node_filter = Param(q, "node");

  v1::ExplainResponse response;
  const grpc::Status status = admin.Explain(nullptr, &request, &response);
  if (!status.ok()) return FromStatus(status);
  // Filter, then page, keeping the order FillExplanation gave (feasible first, best first).
  google::protobuf::RepeatedPtrField<v1::NodeExplanation> kept;
  for (v1::NodeExplanation& node : *response.mutable_nodes()) {
    if (feasible && node.feasible() != *feasible) continue;
    if (!node_filter.empty() && node.node().find(node_filter) == std::string::npos) continue;
    kept.Add(std::move(node));
  }
  const int total = kept.size();
  response.clear_nodes();
  for (int i = at->offset; i < total && i < at->offset + at->limit; ++i) {
    *response.add_nodes() = std::move(kept[i]);
  }
  HttpAnswer answer = Json(response);
  if (answer.status != 200) return answer;
  // The page's place in the whole: {"explanation": {...}, "nodes_total": N, ...}; the
  // explanation is spliced in as printed, without its trailing newline.
  answer.body = "{\"explanation\":" + answer.body.substr(0, answer.body.size() - 1) +
                ",\"nodes_total\":" + std::to_string(total) +
                ",\"offset\":" + std::to_string(at->offset) +
                ",\"limit\":" + std::to_string(at->limit) +
                "}\n";
  return answer;
}

// Resources renders a resource list as {"cpu": 4000, "memory": ...} (the host's units).
nlohmann::json Resources(std::span<const schedhost_resource> list) {
  nlohmann::json out = nlohmann::json::object();
  const model::Interner& names = model::Interner::Global();
  for (const schedhost_resource& r : list) out[std::string(names.Str(r.name))] = r.value;
  return out;
}

// PageOf renders the items of `list` that `at` selects with `item`.
template <class List, class Item>
nlohmann::json PageOf(const List& list, const Page& at, Item item) {
  nlohmann::json out = nlohmann::json::array();
  const auto end = std::min(list.size(), static_cast<size_t>(at.offset) + at.limit);
  for (auto i = static_cast<size_t>(at.offset); i < end; ++i) out.push_back(item(list[i]));
  return out;
}

// NodeJson is one node of /api/v1/nodes.
nlohmann::json NodeJson(const model::Node& node, scheduler::Scheduler& scheduler) {
  nlohmann::json taints = nlohmann::json::array();
  for (const model::Taint& t : node.data().spec.taints) {
    taints.push_back({{"key", t.key}, {"value", t.value}, {"effect", model::ToString(t.effect)}});
  }
  const std::unique_ptr<cache::NodeInfo> info = scheduler.cache().NodeInfoCopy(node.name());
  return {{"name", node.name()},
          {"unschedulable", node.data().spec.unschedulable},
          {"taints", std::move(taints)},
          {"allocatable", Resources(node.allocatable())},
          {"requested", info ? Resources(info->requested()) : nlohmann::json::object()},
          {"pods", info ? info->pods().size() : 0}};
}

// Nodes answers /api/v1/nodes: a page of the nodes (by name) with what each offers and what its
// pods request, as the scheduler's cache counts it (assumed pods included).
HttpAnswer Nodes(store::Store& store, scheduler::Scheduler& scheduler, std::string_view query) {
  const auto q = ParseQuery(query);
  HttpAnswer error;
  const std::optional<Page> at = ParsePage(q, &error);
  if (!at) return error;
  const std::string name_filter = Param(q, "name");
  const auto nodes = store.List<model::Node>([&](const model::Node& n) {
    return name_filter.empty() || n.name().find(name_filter) != std::string::npos;
  });
  const auto total = static_cast<int>(nodes.size());
  return JsonAnswer(200, {{"nodes", PageOf(nodes, *at, [&](const auto& n) {
                             return NodeJson(*n, scheduler);
                           })},
                          {"nodes_total", total},
                          {"offset", at->offset},
                          {"limit", at->limit}});
}

// Plugins renders a plugin set as a JSON array of names.
nlohmann::json Plugins(const queue::PluginSet& set) {
  nlohmann::json out = nlohmann::json::array();
  for (const queue::PluginName& name : set) out.push_back(std::string(name.view()));
  return out;
}

// PendingJson is one pod of /api/v1/queue.
nlohmann::json PendingJson(const queue::PendingPod& p, const scheduler::Scheduler& scheduler) {
  nlohmann::json gates = nlohmann::json::array();
  const schedhost_pod_view* view = p.pod->view();
  for (size_t g = 0; g < view->scheduling_gates_len; ++g) {
    gates.push_back(std::string(view->scheduling_gates[g].data, view->scheduling_gates[g].len));
  }
  const std::optional<scheduler::PodDiagnostics> diag = scheduler.Diagnostics(p.pod->uid());
  return {{"namespace", std::string(p.pod->namespace_name())},
          {"name", std::string(p.pod->name())},
          {"where", queue::LocationName(p.where)},
          {"attempts", p.attempts},
          {"rejected_by", Plugins(p.unschedulable_plugins)},
          {"pending_plugins", Plugins(p.pending_plugins)},
          {"scheduling_gates", std::move(gates)},
          {"backoff_left_ms",
           std::chrono::duration_cast<std::chrono::milliseconds>(p.backoff_left).count()},
          {"message", diag ? diag->message : ""},
          {"nominated_node", diag ? diag->nominated_node : ""}};
}

// SortedPending is every pending pod, by namespace/name.
std::vector<queue::PendingPod> SortedPending(scheduler::Scheduler& scheduler) {
  std::vector<queue::PendingPod> pending = scheduler.queue().PendingPods();
  std::sort(pending.begin(), pending.end(),
            [](const queue::PendingPod& a, const queue::PendingPod& b) {
              return a.pod->Key() < b.pod->Key();
            });
  return pending;
}

// Queue answers /api/v1/queue: a page of the pending pods (by namespace/name) with where each
// waits, which plugins rejected its last attempt, its gates, its backoff and its message.
HttpAnswer Queue(scheduler::Scheduler& scheduler, std::string_view query) {
  const auto q = ParseQuery(query);
  HttpAnswer error;
  const std::optional<Page> at = ParsePage(q, &error);
  if (!at) return error;
  const std::string where = Param(q, "where");
  constexpr std::array<queue::PodLocation, 5> kPlaces = {
      queue::PodLocation::kActive, queue::PodLocation::kBackoff,
      queue::PodLocation::kUnschedulable, queue::PodLocation::kGated,
      queue::PodLocation::kInFlight};
  if (!where.empty() && std::none_of(kPlaces.begin(), kPlaces.end(), [&](queue::PodLocation l) {
        return queue::LocationName(l) == where;
      })) {
    return Error(400, "INVALID_ARGUMENT",
                 "where must be active, backoff, unschedulable, gated or in_flight, not \"" +
                     where + "\"");
  }
  const std::string name_filter = Param(q, "name");
  std::vector<queue::PendingPod> pending = SortedPending(scheduler);
  std::erase_if(pending, [&](const queue::PendingPod& p) {
    return (!where.empty() && queue::LocationName(p.where) != where) ||
           (!name_filter.empty() && p.pod->Key().find(name_filter) == std::string::npos);
  });
  const auto total = static_cast<int>(pending.size());
  nlohmann::json page =
      PageOf(pending, *at, [&](const queue::PendingPod& p) { return PendingJson(p, scheduler); });
  return JsonAnswer(200, {{"pods", std::move(page)},
                          {"pods_total", total},
                          {"offset", at->offset},
                          {"limit", at->limit}});
}

// Shadows answers /api/v1/shadows: Admin.GetShadows for `profile` (all when absent), with both
// cycles of the disagreement of the pod `uid` names.
HttpAnswer Shadows(AdminService& admin, std::string_view query) {
  const auto q = ParseQuery(query);
  v1::ShadowRequest request;
  request.set_profile(Param(q, "profile"));
  request.set_uid(Param(q, "uid"));
  v1::ShadowResponse response;
  const grpc::Status status = admin.GetShadows(nullptr, &request, &response);
  return status.ok() ? Json(response) : FromStatus(status);
}

// AdminJson answers with an Admin call that takes an empty request, as JSON.
template <class Request, class Response>
HttpAnswer AdminJson(AdminService& admin, grpc::Status (AdminService::*call)(
                                              grpc::ServerContext*, const Request*, Response*)) {
  const Request request;
  Response response;
  const grpc::Status status = (admin.*call)(nullptr, &request, &response);
  return status.ok() ? Json(response) : FromStatus(status);
}

// PodPhase is a pod's phase as the scheduler sees it (the host does not run kubelets, so it has
// no Running or Succeeded): Terminating for a preemption victim being deleted, Scheduled once
// bound, else Pending.
std::string_view PodPhase(const model::Pod& pod) {
  if (pod.data().status.terminating_by_preemption) return "Terminating";
  return pod.node_name().empty() ? "Pending" : "Scheduled";
}

// PodJson is one pod of /api/v1/pods.
nlohmann::json PodJson(const model::Pod& pod) {
  return {{"namespace", std::string(pod.namespace_name())},
          {"name", std::string(pod.name())},
          {"node", std::string(pod.node_name())},
          {"nominated_node", std::string(pod.nominated_node_name())},
          {"phase", PodPhase(pod)}};
}

// Phases counts `pods` by PodPhase, every phase present.
nlohmann::json Phases(const std::vector<std::shared_ptr<const model::Pod>>& pods) {
  nlohmann::json out = {{"Scheduled", 0}, {"Pending", 0}, {"Terminating", 0}};
  for (const auto& pod : pods) {
    nlohmann::json& n = out[std::string(PodPhase(*pod))];
    n = n.get<int>() + 1;
  }
  return out;
}

// Pods answers /api/v1/pods: a page of the pods (by namespace/name) with their node and phase,
// and every pod counted by phase.
HttpAnswer Pods(store::Store& store, std::string_view query) {
  const auto q = ParseQuery(query);
  HttpAnswer error;
  const std::optional<Page> at = ParsePage(q, &error);
  if (!at) return error;
  const std::string phase = Param(q, "phase");
  if (!phase.empty() && phase != "Scheduled" && phase != "Pending" && phase != "Terminating") {
    return Error(400, "INVALID_ARGUMENT",
                 "phase must be Scheduled, Pending or Terminating, not \"" + phase + "\"");
  }
  const std::string name_filter = Param(q, "name");
  const auto node = q.find("node");
  const auto all = store.List<model::Pod>();
  std::vector<std::shared_ptr<const model::Pod>> kept;
  for (const auto& pod : all) {
    if (!phase.empty() && PodPhase(*pod) != phase) continue;
    if (node != q.end() && pod->node_name() != node->second) continue;
    if (!name_filter.empty() && pod->Key().find(name_filter) == std::string::npos) continue;
    kept.push_back(pod);
  }
  return JsonAnswer(200, {{"pods", PageOf(kept, *at, [](const auto& p) { return PodJson(*p); })},
                          {"pods_total", kept.size()},
                          {"offset", at->offset},
                          {"limit", at->limit},
                          {"phases", Phases(all)}});
}

// Reloads answers /api/v1/reloads: the last reloads, newest first.
nlohmann::json Reloads(const AdminService& admin) {
  nlohmann::json out = nlohmann::json::array();
  for (const ReloadRecord& r : admin.ReloadHistory()) {
    out.push_back({{"result", r.result},
                   {"message", r.message},
                   {"unix_seconds", r.unix_seconds},
                   {"generation", r.generation}});
  }
  return {{"reloads", std::move(out)}};
}

// Timings sums a histogram family's count and sum per value of the labels at `keep` (the
// others, e.g. status, folded together), as [{name: value..., "count", "sum_seconds"}].
nlohmann::json Timings(const metrics::HistogramFamily& family,
                       const std::vector<std::pair<std::string, size_t>>& keep) {
  std::map<std::vector<std::string>, std::pair<uint64_t, double>> sums;
  family.ForEach([&](const metrics::LabelValues& labels, const metrics::Histogram& h) {
    std::vector<std::string> key;
    key.reserve(keep.size());
    for (const auto& [name, index] : keep) key.push_back(labels.at(index));
    const metrics::HistogramSnapshot snap = h.Snapshot();
    sums[key].first += snap.count();
    sums[key].second += snap.sum;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, total] : sums) {
    nlohmann::json row;
    for (size_t i = 0; i < keep.size(); ++i) row[keep[i].first] = key[i];
    row["count"] = total.first;
    row["sum_seconds"] = total.second;
    out.push_back(std::move(row));
  }
  return out;
}

// Latency answers /api/v1/latency: the attempt, extension point and plugin duration
// histograms' counts and sums since the host started (the UI turns two readings into a rate).
nlohmann::json Latency() {
  const metrics::SchedulerMetrics& m = metrics::Metrics();
  return {{"attempts", Timings(m.attempt_duration, {{"profile", 1}, {"result", 0}})},
          {"extension_points",
           Timings(m.extension_point_duration, {{"profile", 2}, {"extension_point", 0}})},
          {"plugins", Timings(m.plugin_duration, {{"plugin", 0}, {"extension_point", 1}})}};
}

// kPages are the files of the built pages and their types.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kPages = {{
    {"index.html", "text/html; charset=utf-8"},
    {"app.js", "text/javascript; charset=utf-8"},
    {"app.css", "text/css; charset=utf-8"},
}};

// ReadFile returns a file's bytes, or nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Page answers one of kPages from `dir`, read on every request (an upgraded package's pages are
// served without a restart).
std::optional<HttpAnswer> PageFile(const std::filesystem::path& dir, std::string_view path) {
  const std::string_view file = path == "/" ? "index.html" : path.substr(1);
  for (const auto& [name, type] : kPages) {
    if (name != file) continue;
    if (dir.empty()) {
      return Error(404, "NOT_IMPLEMENTED",
                   "this schedhostd was started without the web UI's pages; the JSON API is "
                   "under /api/v1/ (docs/web-ui.md)");
    }
    std::optional<std::string> body = ReadFile(dir / name);
    if (!body) {
      return Error(404, "NOT_IMPLEMENTED",
                   "the web UI's pages are not installed: cannot read " + (dir / name).string() +
                       " (build the ui target, or install the schedhost package)");
    }
    return HttpAnswer{200, std::string(type), std::move(*body)};
  }
  return std::nullopt;
}

// ProtoJson is `message` in protobuf's JSON mapping as a JSON value.
nlohmann::json ProtoJson(const google::protobuf::Message& message) {
  return nlohmann::json::parse(Json(message).body);
}

}  // namespace

std::filesystem::path UiPagesDir(const std::filesystem::path& exe) {
  const std::filesystem::path bin = exe.parent_path();
  for (const std::filesystem::path& dir :
       {bin.parent_path() / "ui", bin.parent_path() / "share/schedhost/ui"}) {
    std::error_code ec;
    if (std::filesystem::exists(dir / "index.html", ec)) return dir;
  }
  return kInstalledUiPagesDir;
}

nlohmann::json UiExplanation(AdminService& admin, const model::Pod& pod) {
  v1::ExplainRequest request;
  request.set_namespace_(std::string(pod.namespace_name()));
  request.set_name(std::string(pod.name()));
  v1::ExplainResponse response;
  if (!admin.Explain(nullptr, &request, &response).ok()) return nullptr;
  return ProtoJson(response);
}

nlohmann::json UiReport(AdminService& admin, store::Store& store,
                        scheduler::Scheduler& scheduler) {
  nlohmann::json report;
  // The three Admin answers as their endpoints give them; a failed call fails the report.
  auto admin_json = [&](auto call) {
    const HttpAnswer answer = AdminJson(admin, call);
    if (answer.status != 200) throw std::runtime_error("the report's " + answer.body);
    return nlohmann::json::parse(answer.body);
  };
  report["stats"] = admin_json(&AdminService::Stats);
  report["profiles"] = admin_json(&AdminService::ListProfiles);
  report["plugins"] = admin_json(&AdminService::ListPlugins);
  report["reloads"] = Reloads(admin);
  report["latency"] = Latency();
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& node : store.List<model::Node>()) nodes.push_back(NodeJson(*node, scheduler));
  report["nodes"] = std::move(nodes);
  nlohmann::json queue = nlohmann::json::array();
  for (const queue::PendingPod& p : SortedPending(scheduler)) {
    queue.push_back(PendingJson(p, scheduler));
  }
  report["queue"] = std::move(queue);
  const auto pods = store.List<model::Pod>();
  nlohmann::json pod_list = nlohmann::json::array();
  nlohmann::json explanations = nlohmann::json::object();
  for (const auto& pod : pods) {
    pod_list.push_back(PodJson(*pod));
    // Explain fails only for a name it refuses, which a stored pod never has.
    if (nlohmann::json e = UiExplanation(admin, *pod); !e.is_null()) {
      explanations[pod->Key()] = std::move(e);
    }
  }
  report["pods"] = std::move(pod_list);
  report["phases"] = Phases(pods);
  report["explanations"] = std::move(explanations);
  return report;
}

HttpRoute UiRoute(AdminService& admin, store::Store& store, scheduler::Scheduler& scheduler,
                  std::filesystem::path pages) {
  return [&admin, &store, &scheduler, pages = std::move(pages)](
             std::string_view path, std::string_view query) -> std::optional<HttpAnswer> {
    if (path == "/api/v1/stats") return AdminJson(admin, &AdminService::Stats);
    if (path == "/api/v1/profiles") return AdminJson(admin, &AdminService::ListProfiles);
    if (path == "/api/v1/plugins") return AdminJson(admin, &AdminService::ListPlugins);
    if (path == "/api/v1/explain") return Explain(admin, query);
    if (path == "/api/v1/nodes") return Nodes(store, scheduler, query);
    if (path == "/api/v1/queue") return Queue(scheduler, query);
    if (path == "/api/v1/pods") return Pods(store, query);
    if (path == "/api/v1/reloads") return JsonAnswer(200, Reloads(admin));
    if (path == "/api/v1/latency") return JsonAnswer(200, Latency());
    if (path == "/api/v1/shadows") return Shadows(admin, query);
    if (path.starts_with("/api/")) {
      return Error(404, "NOT_FOUND", "no endpoint " + std::string(path) + " (docs/web-ui.md)");
    }
    return PageFile(pages, path);
  };
}

}  // namespace schedhost::api
