// `schedctl describe pod NAME`: the pod object (Cluster.Get) and its last scheduling attempt
// (Admin.Explain), in kubectl describe's layout. schedhost keeps no Event objects; the Events
// section is derived from the last attempt: a pod the host bound gets upstream's Scheduled
// event, a pending one its FailedScheduling message. When Explain is not available the object
// part is still printed and the attempt part says why it is missing.
#include <algorithm>
#include <iostream>

#include "host/cli/commands.h"
#include "host/cli/printers.h"
#include "host/cli/resources.h"
#include "host/cli/tables.h"

namespace schedhost::cli {
namespace {

std::string JoinMap(const Json& map, const char* separator) {
  std::string out;
  if (!map.is_object()) return out;
  for (const auto& [k, v] : map.items()) {
    if (!out.empty()) out += separator;
    out += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::string Tolerations(const Json& spec) {
  std::string out;
  for (const Json& t : spec.value("tolerations", Json::array())) {
    if (!out.empty()) out += ", ";
    out += t.value("key", std::string());
    if (t.value("operator", std::string()) == "Exists") {
      out += t.contains("key") ? " op=Exists" : "op=Exists";
    } else if (t.contains("value")) {
      out += "=" + t.value("value", std::string());
    }
    if (t.contains("effect")) out += ":" + t.value("effect", std::string());
  }
  return out;
}

void PrintContainers(const Json& spec, std::ostream& out) {
  out << "Containers:\n";
  for (const Json& c : spec.value("containers", Json::array())) {
    out << "  " << c.value("name", std::string()) << ":\n";
    out << "    Image:  " << OrNone(c.value("image", std::string())) << "\n";
    const Json resources = c.value("resources", Json::object());
    for (const char* block : {"limits", "requests"}) {
      if (!resources.contains(block)) continue;
      out << "    " << (block[0] == 'l' ? "Limits" : "Requests") << ":\n";
      size_t width = 0;
      for (const auto& [name, q] : resources[block].items()) width = std::max(width, name.size());
      for (const auto& [name, q] : resources[block].items()) {
        out << "      " << name << ":" << std::string(width - name.size() + 2, ' ')
            << (q.is_string() ? q.get<std::string>() : q.dump()) << "\n";
      }
    }
  }
}

}  // namespace

int RunDescribe(Client& client, const std::string& resource, const std::string& name,
                const ScopeOptions& scope, std::ostream& out, std::ostream& err) {
  const Resource* r = FindResourceOrReport(resource, err);
  if (r == nullptr) return 1;
  if (r->kind != v1::POD) {
    err << "error: schedctl describes pods only; use `schedctl get " << r->plural
        << " NAME -o yaml` for " << r->plural << "\n";
    return 1;
  }
  if (scope.all_namespaces) {
    err << "error: a resource cannot be retrieved by name across all namespaces\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  const std::string ns = NamespaceOf(scope);
  v1::GetRequest get;
  get.set_kind(v1::POD);
  get.set_namespace_(ns);
  get.set_name(name);
  v1::GetResponse pod_response;
  grpc::Status status = client.cluster().Get(client.Context().get(), get, &pod_response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    err << "Error from server (NotFound): pods \"" << name << "\" not found\n";
    return 1;
  }
  if (!status.ok()) return ReportError(status, err);

  v1::ExplainRequest explain_request;
  explain_request.set_namespace_(ns);
  explain_request.set_name(name);
  v1::ExplainResponse explain;
  grpc::Status explained =
      client.admin().Explain(client.Context().get(), explain_request, &explain);
  std::string unavailable;
  if (!explained.ok()) {
    unavailable = explained.error_code() == grpc::StatusCode::UNIMPLEMENTED
                      ? "the server does not implement schedhost.v1.Admin/Explain"
                      : CodeName(explained.error_code()) + ": " + explained.error_message();
  }

  Json pod;
  try {
    pod = ParseManifest(pod_response.object());
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
  const Json spec = pod.value("spec", Json::object());
  const Json meta = pod.value("metadata", Json::object());
  const std::string node = spec.value("nodeName", std::string());
  const std::string nominated =
      pod.value("status", Json::object()).value("nominatedNodeName", std::string());
  const std::string scheduler = spec.value("schedulerName", std::string("default-scheduler"));
  std::string gates;
  for (const Json& g : spec.value("schedulingGates", Json::array())) {
    gates += (gates.empty() ? "" : ", ") + g.value("name", std::string());
  }
  const std::string priority = spec.contains("priority") ? spec["priority"].dump() : "0";

  Table head({"Name:", name});
  head.AddRow({"Namespace:", meta.value("namespace", ns)});
  head.AddRow({"Priority:", priority});
  head.AddRow({"Priority Class Name:", OrNone(spec.value("priorityClassName", std::string()))});
  head.AddRow({"Scheduler:", scheduler});
  head.AddRow({"Node:", OrNone(node)});
  head.AddRow({"Nominated Node:", OrNone(nominated)});
  head.AddRow({"Labels:", OrNone(JoinMap(meta.value("labels", Json::object()), ","))});
  head.AddRow({"Created:", meta.value("creationTimestamp", std::string("<unknown>")) + " (" +
                               Age(pod) + " ago)"});
  head.AddRow({"Status:", PodStatus(pod)});
  head.AddRow({"Scheduling Gates:", OrNone(gates)});
  head.AddRow(
      {"Node-Selectors:", OrNone(JoinMap(spec.value("nodeSelector", Json::object()), ","))});
  head.AddRow({"Tolerations:", OrNone(Tolerations(spec))});
  if (unavailable.empty()) {
    head.AddRow({"Profile:", OrNone(explain.profile())});
    head.AddRow({"Attempts:", std::to_string(explain.attempts())});
    head.AddRow({"Last Failure:", OrNone(node.empty() ? explain.message() : "")});
  } else {
    head.AddRow({"Attempts:", "<unavailable: " + unavailable + ">"});
  }
  head.Print(out);
  PrintContainers(spec, out);

  if (!unavailable.empty()) {
    out << "Events:  <unavailable: " << unavailable << ">\n";
    return 0;
  }
  const std::string from = explain.profile().empty() ? scheduler : explain.profile();
  std::vector<std::string> event;
  if (!node.empty() && explain.attempts() > 0) {
    event = {"  Normal", "Scheduled", from,
             "Successfully assigned " + meta.value("namespace", ns) + "/" + name + " to " + node};
  } else if (node.empty() && !explain.message().empty()) {
    event = {"  Warning", "FailedScheduling", from, explain.message()};
  }
  if (event.empty()) {
    out << "Events:  <none>\n";
    return 0;
  }
  out << "Events:\n";
  Table events({"  Type", "Reason", "From", "Message"});
  events.AddRow({"  ----", "------", "----", "-------"});
  events.AddRow(std::move(event));
  events.Print(out);
  return 0;
}

}  // namespace schedhost::cli
