#include "host/kube/reflector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <unordered_set>
#include <variant>
#include <vector>

#include "host/kube/proto_codec.h"
#include "host/model/decode.h"

namespace schedhost::kube {
namespace {

// Expired is a watch or list whose resourceVersion the server no longer has (410).
struct Expired {
  std::string message;
};

std::string StringAt(const nlohmann::json& object, const char* section, const char* key) {
  auto s = object.find(section);
  if (s == object.end() || !s->is_object()) return {};
  auto v = s->find(key);
  return v != s->end() && v->is_string() ? v->get<std::string>() : std::string();
}

bool HasField(const nlohmann::json& object, const char* section, const char* key) {
  auto s = object.find(section);
  if (s == object.end() || !s->is_object()) return false;
  auto v = s->find(key);
  return v != s->end() && !v->is_null();
}

std::string ResourceVersionOf(const nlohmann::json& object) {
  return StringAt(object, "metadata", "resourceVersion");
}

}  // namespace

Reflector::Spec Reflector::Pods() {
  Spec spec;
  spec.name = "pods";
  spec.path = "/api/v1/pods";
  // As kube-scheduler's informer: pods that finished hold nothing and are never scheduled.
  spec.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  spec.kind = model::ApiKind::kPod;
  spec.store_kind = store::Kind::kPod;
  spec.api_version = "v1";
  spec.object_kind = "Pod";
  spec.keep = [](const nlohmann::json& pod) {
    const std::string phase = StringAt(pod, "status", "phase");
    if (phase == "Succeeded" || phase == "Failed") return false;
    // A pod being deleted before it was placed is never scheduled; a placed one still holds
    // its node's resources until it is gone.
    const bool assigned = !StringAt(pod, "spec", "nodeName").empty();
    return assigned || !HasField(pod, "metadata", "deletionTimestamp");
  };
  return spec;
}

Reflector::Spec Reflector::Nodes() {
  Spec spec{"nodes", "/api/v1/nodes", "", model::ApiKind::kNode, store::Kind::kNode, nullptr};
  spec.api_version = "v1";
  spec.object_kind = "Node";
  return spec;
}

Reflector::Spec Reflector::PodDisruptionBudgets() {
  Spec spec{"poddisruptionbudgets",
            "/apis/policy/v1/poddisruptionbudgets",
            "",
            model::ApiKind::kPodDisruptionBudget,
            store::Kind::kPodDisruptionBudget,
            nullptr};
  spec.api_version = "policy/v1";
  spec.object_kind = "PodDisruptionBudget";
  return spec;
}

Reflector::Spec Reflector::PriorityClasses() {
  Spec spec{"priorityclasses",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            "",
            model::ApiKind::kPriorityClass,
            store::Kind::kPriorityClass,
            nullptr,
            /*optional=*/true};
  spec.api_version = "scheduling.k8s.io/v1";
  spec.object_kind = "PriorityClass";
  return spec;
}

Reflector::Spec Reflector::Namespaces() {
  Spec spec{
      "namespaces", "/api/v1/namespaces", "", model::ApiKind::kNamespace, store::Kind::kNamespace,
      nullptr};
  spec.api_version = "v1";
  spec.object_kind = "Namespace";
  return spec;
}

Reflector::Spec Reflector::Declared(const store::KindInfo& kind) {
  Spec spec;
  spec.name = kind.Key();
  spec.path = CollectionPath(kind, "");
  spec.declared = kind;
  spec.api_version = kind.ApiVersion();
  spec.object_kind = kind.kind;
  return spec;
}

Reflector::Reflector(ApiClient& client, store::Store& store, Spec spec)
    : client_(client),
      store_(store),
      spec_(std::move(spec)),
      declared_key_(spec_.declared ? spec_.declared->Key() : ""),
      checks_storage_(spec_.declared && model::IsCheckedStorageKind(spec_.declared->ApiVersion(),
                                                                    spec_.declared->kind)) {}

Reflector::~Reflector() {
  Stop();
  Join();
}

void Reflector::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  stop_.store(true);
  cv_.notify_all();
}

void Reflector::Join() {
  if (thread_.joinable()) thread_.join();
}

bool Reflector::WaitForSync(std::chrono::nanoseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_.load() || stop_.load(); }) &&
         synced_.load();
}

std::string Reflector::unavailable() const {
  std::lock_guard lock(mu_);
  return unavailable_;
}

bool Reflector::Namespaced() const {
  return spec_.declared ? spec_.declared->namespaced : store::Namespaced(spec_.store_kind);
}

void Reflector::Unavailable(const ApiError& error) {
  const std::string why =
      error.status() == 404
          ? "the API server does not serve " + spec_.path + " (is the CustomResourceDefinition "
                "for " + declared_key_ + " installed?)"
          : "the credentials may not list and watch " + declared_key_ +
                " (RBAC: grant the verbs list and watch on resource " + declared_key_ +
                "): " + error.what();
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    changed = unavailable_ != why;
    unavailable_ = why;
    ++stats_.errors;
    stats_.last_error = error.what();
  }
  // What was mirrored is no longer known to exist: nothing is read on a guess.
  index_.clear();
  try {
    store_.objects().Clear(declared_key_);
    store_.objects().SetUnavailable(declared_key_, why);
  } catch (const store::StoreError&) {
    // undeclared meanwhile: the reflector is being stopped
  }
  if (changed) spdlog::warn("kubernetes: declared kind {} is unavailable: {}", spec_.name, why);
}

std::string Reflector::fatal() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

ReflectorStats Reflector::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Reflector::Fail(const std::string& error, bool fatal) {
  spdlog::warn("kubernetes: {}: {}", spec_.name, error);
  std::lock_guard lock(mu_);
  ++stats_.errors;
  stats_.last_error = error;
  if (fatal) fatal_ = error;
}

bool Reflector::Sleep(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stop_.load(); });
}

std::string Reflector::KeyOf(const nlohmann::json& object) const {
  std::string name = StringAt(object, "metadata", "name");
  if (!Namespaced()) return name;
  return StringAt(object, "metadata", "namespace") + "/" + name;
}

void Reflector::Run() {
  std::mt19937_64 rng(std::random_device{}());
  std::chrono::milliseconds backoff(800);
  std::chrono::milliseconds unavailable_backoff(1000);
  std::string rv;
  while (!stop_.load()) {
    try {
      if (rv.empty()) {
        rv = List();
        backoff = std::chrono::milliseconds(800);
        unavailable_backoff = std::chrono::milliseconds(1000);
      }
      rv = Watch(rv);
      backoff = std::chrono::milliseconds(800);
      continue;  // the stream ended: resume from where it was, no list
    } catch (const Expired& e) {
      spdlog::info("kubernetes: {}: {}; listing again", spec_.name, e.message);
      std::lock_guard lock(mu_);
      ++stats_.expired;
      rv.clear();
      continue;
    } catch (const ApiError& e) {
      if (stop_.load() || client_.cancelled()) break;
      if (!declared_key_.empty() && (e.status() == 403 || e.status() == 404)) {
        Unavailable(e);
        MarkSynced();
        rv.clear();
        std::uniform_real_distribution<double> jitter(1.0, 1.5);
        const auto wait = std::chrono::milliseconds(
            static_cast<int64_t>(static_cast<double>(unavailable_backoff.count()) * jitter(rng)));
        unavailable_backoff = std::min(unavailable_backoff * 2, std::chrono::milliseconds(10'000));
        if (!Sleep(wait)) break;
        continue;
      }
      if (spec_.optional && e.status() == 403) {
        if (!synced_.load()) {
          spdlog::info(
              "kubernetes: {}: not readable with these credentials ({}); going on "
              "without them, trying again every 5 minutes",
              spec_.name, e.what());
          MarkSynced();
        }
        rv.clear();
        if (!Sleep(std::chrono::minutes(5))) break;
        continue;
      }
      Fail(e.what(), e.status() == 401 || e.status() == 403);
    } catch (const std::exception& e) {
      if (stop_.load() || client_.cancelled()) break;
      Fail(e.what(), false);
    }
    // After an error, list again once the backoff has passed (client-go's reflector does).
    rv.clear();
    std::uniform_real_distribution<double> jitter(1.0, 2.0);
    if (!Sleep(std::chrono::milliseconds(static_cast<int64_t>(backoff.count() * jitter(rng))))) {
      break;
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(30'000));
  }
}

std::string_view Reflector::Accept() const {
  return ListAccept(client_, spec_.api_version, spec_.object_kind);
}

std::string Reflector::List() {
  std::unordered_set<std::string> seen;
  std::string rv;
  try {
    // Apply pages as they come: the first page's objects reach the scheduler's cache at once.
    rv = ListPages(client_, spec_.path, spec_.field_selector, Accept(), spec_.name,
                   [&](nlohmann::json& list) {
                     for (const nlohmann::json& item :
                          list.value("items", nlohmann::json::array())) {
                       seen.insert(KeyOf(item));
                       Apply(item);
                     }
                     return !stop_.load();
                   });
  } catch (const ApiError& e) {
    if (e.status() == 410) throw Expired{"the list's continue token expired"};
    throw;
  }
  // What the store holds and the list did not name is gone.
  std::vector<std::string> vanished;
  for (const auto& [key, entry] : index_) {
    if (!seen.contains(key)) vanished.push_back(key);
  }
  for (const std::string& key : vanished) Remove(key);
  bool was_unavailable = false;
  {
    std::lock_guard lock(mu_);
    ++stats_.lists;
    fatal_.clear();
    was_unavailable = !unavailable_.empty();
    unavailable_.clear();
  }
  if (!declared_key_.empty()) {
    try {
      store_.objects().SetUnavailable(declared_key_, "");
    } catch (const store::StoreError&) {
    }
    if (was_unavailable) spdlog::info("kubernetes: declared kind {} is available again", spec_.name);
  }
  if (!synced_.load()) {
    spdlog::info("kubernetes: {}: synced ({} objects, resourceVersion {})", spec_.name,
                 index_.size(), rv);
    MarkSynced();
  }
  return rv;
}

void Reflector::MarkSynced() {
  std::lock_guard lock(mu_);
  synced_.store(true);
  cv_.notify_all();
}

std::string Reflector::Watch(std::string rv) {
  // The server ends a watch after timeoutSeconds; client-go picks 5 to 10 minutes at random.
  static thread_local std::mt19937 rng(std::random_device{}());
  const int timeout = std::uniform_int_distribution<int>(300, 599)(rng);
  std::string target = spec_.path +
                       "?watch=1&allowWatchBookmarks=true&resourceVersion=" + UrlEscape(rv) +
                       "&timeoutSeconds=" + std::to_string(timeout);
  if (!spec_.field_selector.empty()) target += "&fieldSelector=" + UrlEscape(spec_.field_selector);
  {
    std::lock_guard lock(mu_);
    ++stats_.watches;
  }
  JsonStream json_stream;
  proto::WatchStream proto_stream;
  std::string content_type;
  std::optional<Expired> expired;
  std::string error;
  std::string error_body;
  const int status = client_.Watch(
      target,
      [&](std::string_view bytes) {
        const bool protobuf = proto::IsProtobuf(content_type);
        if (protobuf) {
          proto_stream.Feed(bytes);
        } else {
          json_stream.Feed(bytes);
        }
        nlohmann::json event;
        while (protobuf ? proto_stream.Next(&event) : json_stream.Next(&event)) {
          const std::string type = event.value("type", "");
          const nlohmann::json& object = event["object"];
          if (type == "ERROR") {
            const int code = object.value("code", 0);
            const std::string message = object.value("message", "");
            if (code == 410) {
              expired = Expired{"watch from resourceVersion " + rv + " expired: " + message};
            } else {
              error = "watch error " + std::to_string(code) + ": " + message;
            }
            return false;
          }
          if (type == "BOOKMARK") {
            if (std::string v = ResourceVersionOf(object); !v.empty()) rv = std::move(v);
            continue;
          }
          if (stop_.load()) return false;  // stopped: apply nothing more
          if (type == "ADDED" || type == "MODIFIED") {
            Apply(object);
          } else if (type == "DELETED") {
            Remove(KeyOf(object));
          } else {
            error = "watch event of unknown type \"" + type + "\"";
            return false;
          }
          if (std::string v = ResourceVersionOf(object); !v.empty()) rv = std::move(v);
          std::lock_guard lock(mu_);
          ++stats_.events;
        }
        return !stop_.load();
      },
      std::min<std::chrono::milliseconds>(std::chrono::seconds(timeout + 30), spec_.idle_timeout),
      &error_body, Accept(), &content_type);
  if (expired) throw *expired;
  if (status == 410) throw Expired{"watch from resourceVersion " + rv + " expired"};
  if (status != 200) {
    Response r;
    r.status = status;
    r.body = std::move(error_body);
    r.content_type = std::move(content_type);
    throw ApiError::From(r, "watching " + spec_.name);
  }
  if (!error.empty()) throw std::runtime_error(error);
  return rv;
}

void Reflector::Apply(const nlohmann::json& object) {
  const std::string key = KeyOf(object);
  if (spec_.keep && !spec_.keep(object)) {
    if (index_.contains(key)) Remove(key);
    return;
  }
  const std::string rv = ResourceVersionOf(object);
  const std::string uid = StringAt(object, "metadata", "uid");
  auto it = index_.find(key);
  if (it != index_.end() && it->second.uid == uid && it->second.resource_version == rv) return;
  try {
    if (!declared_key_.empty()) {
      const std::string ns = Namespaced() ? StringAt(object, "metadata", "namespace") : "";
      const std::string name = StringAt(object, "metadata", "name");
      const std::string label =
          spec_.declared->kind + " " + (ns.empty() ? name : ns + "/" + name);
      if (checks_storage_) {
        // As embedded mode checks a manifest: a claim, volume or class whose scheduling fields
        // do not read as the API server defines them (a version skew: a field or value this
        // host does not know) is skipped and counted, not handed to the volume plugins.
        // A list's items carry no apiVersion and kind: the document gets the kind's.
        nlohmann::json typed = object;
        typed["apiVersion"] = spec_.declared->ApiVersion();
        typed["kind"] = spec_.declared->kind;
        std::vector<model::GenericObject> checked;
        model::DecodeManifests(typed.dump(), "the API server", {}, &checked);
      }
      store_.objects().Apply(declared_key_, ns, name,
                             std::make_shared<const model::ValueNode>(
                                 model::ValueTreeFromJson(object, label)));
    } else {
      model::ApiObject data = model::DecodeApiObject(object, spec_.kind);
      std::visit([this](auto& d) { store_.MirrorApply(std::move(d)); }, data);
    }
  } catch (const model::DecodeError& e) {
    spdlog::warn("kubernetes: {}: skipping {}: {}", spec_.name, key, e.what());
    std::lock_guard lock(mu_);
    ++stats_.decode_failures;
    return;
  } catch (const store::StoreError& e) {
    spdlog::warn("kubernetes: {}: cannot mirror {}: {}", spec_.name, key, e.what());
    std::lock_guard lock(mu_);
    ++stats_.decode_failures;
    return;
  }
  index_[key] = Entry{uid, rv};
}

void Reflector::Remove(const std::string& key) {
  if (index_.erase(key) == 0) return;
  const size_t slash = key.find('/');
  if (!declared_key_.empty()) {
    try {
      if (Namespaced() && slash != std::string::npos) {
        store_.objects().Delete(declared_key_, key.substr(0, slash), key.substr(slash + 1));
      } else {
        store_.objects().Delete(declared_key_, "", key);
      }
    } catch (const store::StoreError& e) {
      spdlog::warn("kubernetes: {}: cannot remove {}: {}", spec_.name, key, e.what());
    }
    return;
  }
  if (store::Namespaced(spec_.store_kind) && slash != std::string::npos) {
    store_.MirrorDelete(spec_.store_kind, key.substr(0, slash), key.substr(slash + 1));
  } else {
    store_.MirrorDelete(spec_.store_kind, "", key);
  }
}

}  // namespace schedhost::kube
