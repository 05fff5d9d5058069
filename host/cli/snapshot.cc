// `schedctl snapshot`: list the cluster with Kubernetes mode's client and pager, trim each
// object to what scheduling reads, and write one multi-document manifest atomically.
#include "host/cli/snapshot.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <set>
#include <stdexcept>
#include <vector>

#include "host/cli/printers.h"
#include "host/config/host_config.h"
#include "host/kube/api_client.h"
#include "host/kube/kubeconfig.h"
#include "host/model/priority_class.h"
#include "host/scheduler/profile_set.h"

namespace schedhost::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kPrefix = "schedctl snapshot: ";

// KeepOnly removes every member of `object` whose key is not in `keys`.
void KeepOnly(json& object, const std::set<std::string, std::less<>>& keys) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end();) {
    it = keys.contains(it.key()) ? std::next(it) : object.erase(it);
  }
}

// TrimMetadata drops what no reader of any kind uses; `typed` keeps only what the model's
// ReadMeta reads (with the owners when `owners`).
void TrimMetadata(json& object, bool typed, bool owners) {
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return;
  for (const char* key : {"managedFields", "resourceVersion", "generation", "selfLink"}) {
    m->erase(key);
  }
  if (auto a = m->find("annotations"); a != m->end() && a->is_object()) {
    a->erase("kubectl.kubernetes.io/last-applied-configuration");
    if (a->empty()) m->erase(a);
  }
  if (typed) {
    std::set<std::string, std::less<>> keep = {"name", "namespace", "uid", "labels",
                                                "annotations", "creationTimestamp",
                                                "deletionTimestamp"};
    if (owners) keep.insert("ownerReferences");
    KeepOnly(*m, keep);
  }
}

void TrimContainers(json& spec, const char* key) {
  auto list = spec.find(key);
  if (list == spec.end() || !list->is_array()) return;
  for (json& container : *list) {
    KeepOnly(container, {"name", "image", "ports", "resources", "restartPolicy",
                         "restartPolicyRules", "volumeMounts"});
  }
}

void TrimPod(json& pod) {
  if (auto spec = pod.find("spec"); spec != pod.end() && spec->is_object()) {
    TrimContainers(*spec, "containers");
    TrimContainers(*spec, "initContainers");
    spec->erase("ephemeralContainers");
  }
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return;
  json kept = json::object();
  if (auto n = status->find("nominatedNodeName"); n != status->end()) kept[n.key()] = *n;
  // A preemption victim still terminating is told apart by this condition (see decode_pod.cc).
  const json& metadata = pod.value("metadata", json::object());
  if (metadata.contains("deletionTimestamp")) {
    for (const json& c : status->value("conditions", json::array())) {
      if (c.is_object() && c.value("type", "") == "DisruptionTarget") {
        json condition = c;
        KeepOnly(condition, {"type", "status", "reason"});
        kept["conditions"] = json::array({std::move(condition)});
      }
    }
  }
  if (kept.empty()) {
    pod.erase("status");
  } else {
    *status = std::move(kept);
  }
}

void TrimNode(json& node) {
  if (auto spec = node.find("spec"); spec != node.end()) {
    KeepOnly(*spec, {"taints", "unschedulable"});
  }
  auto status = node.find("status");
  if (status == node.end() || !status->is_object()) return;
  KeepOnly(*status, {"capacity", "allocatable", "images", "conditions"});
  if (auto c = status->find("conditions"); c != status->end() && c->is_array()) {
    for (json& condition : *c) KeepOnly(condition, {"type", "status"});
  }
}

// Objects are the trimmed objects of one kind, with the spec that listed them.
struct Listed {
  kube::Reflector::Spec spec;
  std::vector<json> objects;
};

// ListKind lists every object of `spec` the reflector would mirror, trimmed. A declared kind
// the server does not serve (404) is reported on `err` and skipped, as Kubernetes mode goes on
// without it; so is an optional kind the credentials may not read (403).
Listed ListKind(kube::ApiClient& client, kube::Reflector::Spec spec, std::ostream& err) {
  Listed listed{std::move(spec), {}};
  const kube::Reflector::Spec& s = listed.spec;
  try {
    kube::ListPages(client, s.path, s.field_selector,
                    kube::ListAccept(client, s.api_version, s.object_kind), s.name,
                    [&](json& page) {
                      auto items = page.find("items");
                      if (items == page.end() || !items->is_array()) return true;
                      for (json& item : *items) {
                        if (s.keep && !s.keep(item)) continue;
                        listed.objects.push_back(TrimObject(std::move(item), s));
                      }
                      return true;
                    });
  } catch (const kube::ApiError& e) {
    const bool missing_kind = s.declared && e.status() == 404;
    const bool forbidden_optional = s.optional && e.status() == 403;
    if (!missing_kind && !forbidden_optional) throw;
    err << kPrefix << "warning: " << s.name << " left out: " << e.what() << "\n";
  }
  return listed;
}

// PriorityClasses is the reflector's spec without the two built-in system classes: every store
// simulate runs on creates them, as the API server does, and would refuse them again.
kube::Reflector::Spec PriorityClasses() {
  kube::Reflector::Spec spec = kube::Reflector::PriorityClasses();
  spec.keep = [](const json& object) {
    const std::string name = object.value("metadata", json::object()).value("name", "");
    return name != model::kSystemClusterCritical && name != model::kSystemNodeCritical;
  };
  return spec;
}

// TempFile is a file beside the output, renamed over it by Commit; removed unless committed.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    const std::filesystem::path path(target);
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    std::string base = path.filename().string();
    base.insert(0, 1, '.');
    base += ".XXXXXX";
    std::string name = (dir / base).string();
    const int fd = mkstemp(name.data());
    if (fd < 0) {
      throw std::runtime_error("cannot write " + target + ": " + std::strerror(errno) +
                               " (nothing was read from the cluster)");
    }
    file_ = fdopen(fd, "w");
    path_ = name;
  }
  ~TempFile() {
    if (file_ != nullptr) std::fclose(file_);
    if (!committed_) std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Commit writes `text` and renames the file over the target; throws, leaving the target as
  // it was, when either fails.
  void Commit(const std::string& text) {
    const bool written = std::fwrite(text.data(), 1, text.size(), file_) == text.size();
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    // The manifest is a file people read and share, not a secret: the usual mode, not 0600.
    const mode_t mask = umask(0);
    umask(mask);
    if (!written || !closed || chmod(path_.c_str(), 0666 & ~mask) != 0 ||
        std::rename(path_.c_str(), target_.c_str()) != 0) {
      throw std::runtime_error("cannot write " + target_ + ": " + std::strerror(errno));
    }
    committed_ = true;
  }

 private:
  std::string target_;
  std::string path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

std::string Plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

json TrimObject(json object, const kube::Reflector::Spec& spec) {
  if (!object.is_object()) return object;
  object["apiVersion"] = spec.api_version;
  object["kind"] = spec.object_kind;
  if (spec.declared) {
    TrimMetadata(object, /*typed=*/false, /*owners=*/true);
    return object;
  }
  TrimMetadata(object, /*typed=*/true, /*owners=*/spec.kind == model::ApiKind::kPod);
  switch (spec.kind) {
    case model::ApiKind::kPod: TrimPod(object); break;
    case model::ApiKind::kNode: TrimNode(object); break;
    case model::ApiKind::kPodDisruptionBudget:
      if (auto status = object.find("status"); status != object.end()) {
        KeepOnly(*status, {"disruptionsAllowed"});
      }
      break;
    case model::ApiKind::kPriorityClass:
      KeepOnly(object, {"apiVersion", "kind", "metadata", "value", "globalDefault",
                        "preemptionPolicy", "description"});
      break;
    case model::ApiKind::kNamespace: KeepOnly(object, {"apiVersion", "kind", "metadata"}); break;
  }
  return object;
}

int RunSnapshot(const SnapshotOptions& options, std::ostream& out, std::ostream& err) {
  if (options.output.empty()) {
    err << kPrefix << "no output file: pass it with -o FILE\n";
    return 1;
  }
  try {
    const config::HostConfig cfg = options.config_path.empty()
                                       ? config::ParseConfig("", "(built-in defaults)", {})
                                       : config::LoadConfigFile(options.config_path);
    // The kinds the config's plugins read; building the set also refuses a config they refuse.
    const std::vector<store::KindInfo> declared =
        scheduler::ProfileSet::Build(cfg, options.plugin_dir)->DeclaredKinds();
    const kube::ClusterAccess access = kube::LoadKubeconfig(options.kubeconfig, options.context);
    TempFile file(options.output);
    // JSON, not protobuf: the server leaves out empty fields, which protobuf's mapping fills in
    // ("", false), so the file reads as `kubectl get -o yaml` does; one list is fast either way.
    kube::ApiClient client(access, {.user_agent = "schedctl-snapshot", .protobuf = false});

    const auto start = std::chrono::steady_clock::now();
    std::vector<Listed> kinds;
    try {
      // Apply order, as simulate would apply them, so the file reads top-down.
      for (kube::Reflector::Spec spec :
           {kube::Reflector::Namespaces(), PriorityClasses(),
            kube::Reflector::Nodes(), kube::Reflector::PodDisruptionBudgets()}) {
        kinds.push_back(ListKind(client, std::move(spec), err));
      }
      for (const store::KindInfo& kind : declared) {
        kinds.push_back(ListKind(client, kube::Reflector::Declared(kind), err));
      }
      kinds.push_back(ListKind(client, kube::Reflector::Pods(), err));
    } catch (const kube::ApiError& e) {
      if (e.status() == 0) {
        throw std::runtime_error("cannot reach the API server " + access.server + " (" +
                                 access.source + "): " + e.what());
      }
      throw std::runtime_error("the API server " + access.server + " (" + access.source +
                               ") refused: " + e.what());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::string text = "# schedctl snapshot of " + access.server + "\n";
    std::string counts;
    size_t total = 0;
    size_t pending = 0;
    for (const Listed& listed : kinds) {
      for (const json& object : listed.objects) {
        text += "---\n" + ToYaml(object);
        if (!listed.spec.declared && listed.spec.kind == model::ApiKind::kPod &&
            object.value("spec", json::object()).value("nodeName", "").empty()) {
          ++pending;
        }
      }
      total += listed.objects.size();
      if (listed.objects.empty()) continue;
      counts += (counts.empty() ? "" : ", ") + std::to_string(listed.objects.size()) + " " +
                listed.spec.name;
      if (!listed.spec.declared && listed.spec.kind == model::ApiKind::kPod) {
        counts += " (" + std::to_string(pending) + " pending)";
      }
    }
    file.Commit(text);
    char took[32];
    std::snprintf(took, sizeof took, "%.2f", seconds);
    out << "Wrote " << Plural(total, "object") << " to " << options.output << " in " << took
        << " s: " << counts << "\n";
    return 0;
  } catch (const std::exception& e) {
    err << kPrefix << e.what() << "\n";
    return 1;
  }
}

}  // namespace schedhost::cli
