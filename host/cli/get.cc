// `schedctl get` and `schedctl delete`.
#include <iostream>

#include "host/cli/commands.h"
#include "host/cli/printers.h"
#include "host/cli/resources.h"
#include "host/cli/tables.h"

namespace schedhost::cli {
namespace {

// NotFound writes kubectl's `Error from server (NotFound): pods "x" not found` (for a declared
// kind, the name as the user typed it).
int NotFound(const Resource& r, std::string_view typed, const std::string& name,
             std::ostream& err) {
  err << "Error from server (NotFound): "
      << (r.kind == v1::DECLARED ? std::string(typed) : GroupPlural(r)) << " \"" << name
      << "\" not found\n";
  return 1;
}

// Failed reports a refused call: an unknown resource name as kubectl words it.
int Failed(const Resource& r, std::string_view typed, const grpc::Status& status,
           std::ostream& err) {
  if (r.kind == v1::DECLARED && IsUnknownResource(status)) {
    return ReportUnknownResource(typed, status, err);
  }
  return ReportError(status, err);
}

}  // namespace

int RunGet(Client& client, const GetOptions& o, std::ostream& out, std::ostream& err) {
  const Resource* r = &ResourceFor(o.resource);
  if (!o.name.empty() && !o.selector.empty()) {
    err << "error: name cannot be provided when a selector is specified\n";
    return 1;
  }
  if (!o.name.empty() && o.scope.all_namespaces) {
    err << "error: a resource cannot be retrieved by name across all namespaces\n";
    return 1;
  }
  const bool table = o.output.empty() || o.output == "wide";
  if (!table && o.output != "json" && o.output != "yaml" && o.output != "name") {
    err << "error: unable to match a printer suitable for the output format \"" << o.output
        << "\", allowed formats are: json, name, wide, yaml\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  const std::string ns = r->namespaced ? NamespaceOf(o.scope) : "";
  std::vector<v1::Object> objects;
  std::string list_version;
  if (!o.name.empty()) {
    v1::GetRequest request;
    request.set_kind(r->kind);
    if (r->kind == v1::DECLARED) request.set_resource(o.resource);
    request.set_namespace_(ns);
    request.set_name(o.name);
    v1::GetResponse response;
    auto context = client.Context();
    grpc::Status status = client.cluster().Get(context.get(), request, &response);
    if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
      return NotFound(*r, o.resource, o.name, err);
    }
    if (!status.ok()) return Failed(*r, o.resource, status, err);
    objects.push_back(response.object());
  } else {
    v1::ListRequest request;
    request.set_kind(r->kind);
    if (r->kind == v1::DECLARED) request.set_resource(o.resource);
    request.set_namespace_(ns);
    request.set_label_selector(o.selector);
    v1::ListResponse response;
    auto context = client.Context();
    grpc::Status status = client.cluster().List(context.get(), request, &response);
    if (!status.ok()) return Failed(*r, o.resource, status, err);
    objects.assign(response.items().begin(), response.items().end());
    list_version = std::to_string(response.resource_version());
  }
  try {
    if (!table) {
      PrintObjects(objects, !o.name.empty(), o.output, list_version, out);
      return 0;
    }
    if (objects.empty()) {
      // kubectl says so on stderr, so a script reading stdout sees no table.
      err << "No resources found"
          << (r->namespaced && !ns.empty() ? " in " + ns + " namespace" : "") << ".\n";
      return 0;
    }
    std::vector<Json> items;
    items.reserve(objects.size());
    for (const v1::Object& object : objects) items.push_back(ParseManifest(object));
    MakeTable(*r, items, o.output == "wide", r->namespaced && o.scope.all_namespaces).Print(out);
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int RunDelete(Client& client, const std::string& resource, const std::string& name,
              const ScopeOptions& scope, std::ostream& out, std::ostream& err) {
  const Resource* r = &ResourceFor(resource);
  if (scope.all_namespaces) {
    err << "error: a resource cannot be retrieved by name across all namespaces\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  v1::DeleteRequest request;
  request.set_kind(r->kind);
  if (r->kind == v1::DECLARED) request.set_resource(resource);
  if (r->namespaced) request.set_namespace_(NamespaceOf(scope));
  request.set_name(name);
  v1::DeleteResponse response;
  auto context = client.Context();
  grpc::Status status = client.cluster().Delete(context.get(), request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return NotFound(*r, resource, name, err);
  }
  if (!status.ok()) return Failed(*r, resource, status, err);
  out << TypeNameOf(response.object()) << " \"" << name << "\" deleted\n";
  return 0;
}

}  // namespace schedhost::cli
