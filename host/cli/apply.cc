// `schedctl apply -f FILE...`: manifests to Cluster.Apply, one object per call, in file order
// (per file, objects of kinds the host does not type first: see RunApply).
//
// Every file is decoded with the host's own decoder before anything is sent, so a bad manifest
// is reported with its file, document and field path and changes nothing (kubectl validates
// client-side the same way). Each object then travels as its canonical JSON (api::EncodeJson of
// the decoded object): that splits multi-document files and `kind: List` items into single
// objects, and the server decodes it back to the same object. Only identity the user wrote is
// sent: metadata.resourceVersion (a precondition) and a uid that appears in the file, never the
// uid the decoder generates for an object without one.
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>
#include <variant>

#include "host/api/encode.h"
#include "host/cli/commands.h"
#include "host/cli/printers.h"
#include "host/cli/resources.h"
#include "host/model/decode.h"

namespace schedhost::cli {
namespace {

// Decoded is one object to apply and where it came from.
struct Decoded {
  std::string source;
  std::string manifest;   // JSON sent to the server
  std::string type_name;  // "pod", "priorityclass.scheduling.k8s.io"
  std::string name;
  std::string namespace_name;  // "" for a cluster-scoped kind

  // Label names the object as kubectl does ("pod/web-0"), with its namespace when that is not
  // "default": two pods of one name in two namespaces are told apart.
  std::string Label() const {
    std::string label = type_name + "/" + name;
    if (!namespace_name.empty() && namespace_name != "default") {
      label += " (namespace " + namespace_name + ")";
    }
    return label;
  }
};

// ReadInput returns the text of `path` ("-" reads `in`); throws naming the file.
std::string ReadInput(const std::string& path, std::istream& in) {
  std::ostringstream text;
  if (path == "-") {
    text << in.rdbuf();
    return text.str();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("the path \"" + path + "\" cannot be read");
  text << file.rdbuf();
  return text.str();
}

v1::Kind KindOf(const model::Object& object) {
  return std::visit(
      [](const auto& ptr) {
        using T = std::decay_t<decltype(*ptr)>;
        if constexpr (std::is_same_v<T, model::Pod>) return v1::POD;
        if constexpr (std::is_same_v<T, model::Node>) return v1::NODE;
        if constexpr (std::is_same_v<T, model::PodDisruptionBudget>) {
          return v1::POD_DISRUPTION_BUDGET;
        }
        if constexpr (std::is_same_v<T, model::PriorityClass>) return v1::PRIORITY_CLASS;
        return v1::NAMESPACE;
      },
      object);
}

Decoded ToRequest(const model::Object& object, const std::string& text, const std::string& source) {
  const auto [name, uid, resource_version] = std::visit(
      [](const auto& ptr) {
        return std::make_tuple(std::string(ptr->name()), std::string(ptr->uid()),
                               ptr->resource_version());
      },
      object);
  Json manifest = Json::parse(api::EncodeJsonWithoutIdentity(object));
  Json& out_meta = manifest["metadata"];
  if (!uid.empty() && text.find(uid) != std::string::npos) out_meta["uid"] = uid;
  if (resource_version != 0) out_meta["resourceVersion"] = std::to_string(resource_version);
  std::string namespace_name = out_meta.value("namespace", "");
  return Decoded{source, manifest.dump(), TypeName(ResourceOf(KindOf(object))), name,
                 std::move(namespace_name)};
}

const char* ResultWord(v1::ApplyResult result) {
  switch (result) {
    case v1::CREATED:
      return "created";
    case v1::CONFIGURED:
      return "configured";
    case v1::UNCHANGED:
      return "unchanged";
    default:
      return "applied";
  }
}

}  // namespace

int RunApply(Client& client, const std::vector<std::string>& files, std::istream& in,
             std::ostream& out, std::ostream& err) {
  std::vector<Decoded> requests;
  try {
    for (const std::string& path : files) {
      const std::string text = ReadInput(path, in);
      const std::string source = path == "-" ? "<stdin>" : path;
      std::vector<model::GenericObject> generic;
      const std::vector<model::Object> objects =
          model::DecodeManifests(text, source, model::DecodeLimits{}, &generic);
      // Objects of other kinds (a plugin's PodGroups, Tickets) go first, as the server sends
      // them whole: whether a loaded plugin declares their kind is the server's to say.
      for (const model::GenericObject& object : generic) {
        requests.push_back(Decoded{source, model::ValueTreeToJson(*object.tree),
                                   KindTypeName(object.kind, object.api_version), object.name,
                                   object.namespace_name});
      }
      for (const model::Object& object : objects) {
        requests.push_back(ToRequest(object, text, source));
      }
    }
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
  if (requests.empty()) {
    err << "error: no objects passed to apply\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  int exit_code = 0;
  // Like kubectl, a refused object does not stop the ones after it.
  for (const Decoded& r : requests) {
    v1::ApplyRequest request;
    request.set_manifest(r.manifest);
    v1::ApplyResponse response;
    auto context = client.Context();
    grpc::Status status = client.cluster().Apply(context.get(), request, &response);
    if (!status.ok()) {
      err << "Error from server (" << CodeName(status.error_code()) << "): error when applying "
          << r.Label() << " from \"" << r.source
          << "\": " << status.error_message() << "\n";
      exit_code = 1;
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE) break;  // the server went away
      continue;
    }
    out << r.Label() << " " << ResultWord(response.result()) << "\n";
  }
  return exit_code;
}

}  // namespace schedhost::cli
