// `schedctl watch`: Cluster.Watch, one line per event.
#include <chrono>
#include <iostream>

#include "host/cli/commands.h"
#include "host/cli/printers.h"
#include "host/cli/resources.h"

namespace schedhost::cli {
namespace {

std::string EventLine(const v1::WatchEvent& event) {
  const v1::Object& object = event.object();
  std::string line = v1::EventType_Name(event.type()) + " " + TypeNameOf(object) +
                     "/" + object.name();
  if (!object.namespace_().empty()) line += " namespace=" + object.namespace_();
  line += " rv=" + std::to_string(event.resource_version());
  if (object.kind() == v1::POD) {
    const Json pod = ParseManifest(object);
    const Json& spec = pod.contains("spec") ? pod["spec"] : Json::object();
    const Json& status = pod.contains("status") ? pod["status"] : Json::object();
    line += " node=" + spec.value("nodeName", std::string());
    line += " nominated=" + status.value("nominatedNodeName", std::string());
  }
  return line;
}

}  // namespace

int RunWatch(Client& client, const WatchOptions& o, std::ostream& out, std::ostream& err) {
  const Resource* r = &ResourceFor(o.resource);
  if (o.timeout_seconds < 0) {
    err << "error: --timeout must not be negative\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  v1::WatchRequest request;
  if (r->kind == v1::DECLARED) {
    request.add_resources(o.resource);
  } else {
    request.add_kinds(r->kind);
  }
  if (r->namespaced) request.set_namespace_(NamespaceOf(o.scope));
  request.set_resource_version(o.resource_version);
  grpc::ClientContext context;
  if (o.timeout_seconds > 0) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(o.timeout_seconds)));
  }
  auto reader = client.cluster().Watch(&context, request);
  v1::WatchEvent event;
  uint64_t seen = 0;
  try {
    while ((o.count == 0 || seen < o.count) && reader->Read(&event)) {
      out << EventLine(event) << std::endl;  // flushed: a script reads events as they come
      ++seen;
    }
  } catch (const std::exception& e) {
    context.TryCancel();
    err << "error: " << e.what() << "\n";
    return 1;
  }
  if (o.count != 0 && seen >= o.count) {
    context.TryCancel();
    reader->Finish();
    return 0;
  }
  grpc::Status status = reader->Finish();
  // --timeout ending the stream is the asked-for end, not a failure.
  if (status.ok() ||
      (o.timeout_seconds > 0 && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)) {
    return 0;
  }
  if (r->kind == v1::DECLARED && IsUnknownResource(status)) {
    return ReportUnknownResource(o.resource, status, err);
  }
  return ReportError(status, err);
}

}  // namespace schedhost::cli
