// FakeHost: just enough of a schedhost host to call a plugin library through its C ABI entry,
// in-process and without schedhostd: dlopen the .so, negotiate, create an instance with
// arguments, and run Filter / Score on hand-made pod and node views.
//
// It implements the host functions a typical Filter/Score plugin calls (status reasons, logging,
// memory, interning, the argument tree); every other entry of the host API table is NULL, so a
// plugin that needs more fails loudly here rather than at run time in the host. Copy it into your
// own plugin's tests and extend it as your plugin needs.
//
//   FakeHost host;
//   const schedhost_plugin_descriptor* d = host.Load("build/node_pool.so", "NodePool");
//   FakeHost::Instance p = host.Create(d, FakeConfig::Table({{"label", FakeConfig::String("x")}}));
//   auto pod = host.MakePod("p", {{"x", "gpu"}});
//   auto node = host.MakeNode("n1", {{"x", "gpu"}});
//   FakeHost::Result r = host.Filter(p, *pod, *node);   // r.code, r.reasons
#pragma once

#include <dlfcn.h>
#include <schedhost/plugin.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The opaque ABI handles, as this fake host defines them.
struct schedhost_status {
  std::vector<std::string> reasons;
};

struct schedhost_host {
  std::vector<std::string> strings;  // id -> string
  std::map<std::string, schedhost_id, std::less<>> ids;
  std::vector<std::string> log;  // "level: message"
};

struct schedhost_config {
  int32_t kind = SCHEDHOST_CONFIG_NONE;
  std::string text;  // strings
  int64_t integer = 0;
  std::vector<std::pair<std::string, std::shared_ptr<schedhost_config>>> children;
  std::string location = "test.toml:1:1";
};

/// FakeConfig builds plugin argument trees (what plugin_config.<Name> holds in TOML).
struct FakeConfig {
  using Node = std::shared_ptr<schedhost_config>;
  /// String is a string value.
  static Node String(std::string s) {
    auto n = std::make_shared<schedhost_config>();
    n->kind = SCHEDHOST_CONFIG_STRING;
    n->text = std::move(s);
    return n;
  }
  /// Int is an integer value.
  static Node Int(int64_t v) {
    auto n = std::make_shared<schedhost_config>();
    n->kind = SCHEDHOST_CONFIG_INT;
    n->integer = v;
    return n;
  }
  /// Table is a table of `entries`; each child's location names its key.
  static Node Table(std::vector<std::pair<std::string, Node>> entries) {
    auto n = std::make_shared<schedhost_config>();
    n->kind = SCHEDHOST_CONFIG_TABLE;
    int line = 2;
    for (auto& [key, child] : entries)
      child->location = "test.toml:" + std::to_string(line++) + ":1";
    n->children = std::move(entries);
    return n;
  }
};

/// FakeHost loads plugin libraries and calls their descriptors like the host does.
class FakeHost {
 public:
  /// Result is a status: the code and the reasons the plugin reported.
  struct Result {
    int32_t code = SCHEDHOST_SUCCESS;
    std::vector<std::string> reasons;
  };
  /// Instance is a created plugin instance; destroyed with the FakeHost's descriptor.
  struct Instance {
    const schedhost_plugin_descriptor* descriptor = nullptr;
    void* self = nullptr;
  };
  /// Pod is a pod view with the storage it points into.
  struct Pod {
    schedhost_pod_view view{};
    std::string name;
    std::vector<schedhost_label> labels;
  };
  /// Node is a node info view (no pods) with its node view and storage.
  struct Node {
    schedhost_node_info_view info{};
    schedhost_node_view view{};
    std::string name;
    std::vector<schedhost_label> labels;
  };

  FakeHost() {
    // Ids fixed by the ABI (SCHEDHOST_ID_*), in order.
    for (const char* s :
         {"", "cpu", "memory", "ephemeral-storage", "pods", "kubernetes.io/hostname",
          "topology.kubernetes.io/zone", "topology.kubernetes.io/region", "metadata.name",
          "default", "node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready",
          "node.kubernetes.io/unreachable", "TCP", "UDP", "SCTP", "hugepages-"}) {
      Intern(&host_, {s, std::char_traits<char>::length(s)});
    }
    api_.struct_size = sizeof(api_);
    api_.abi_major = SCHEDHOST_ABI_MAJOR;
    api_.abi_minor = SCHEDHOST_ABI_MINOR;
    api_.status_add_reason = [](schedhost_status* st, schedhost_str r) noexcept {
      st->reasons.emplace_back(r.data, r.len);
    };
    api_.log = [](schedhost_host* h, int32_t level, schedhost_str m) noexcept {
      h->log.push_back(std::to_string(level) + ": " + std::string(m.data, m.len));
    };
    api_.alloc = [](size_t n) noexcept { return std::malloc(n); };
    api_.free = [](void* p) noexcept { std::free(p); };
    api_.intern = &Intern;
    api_.lookup_id = [](schedhost_host* h, schedhost_str s) noexcept -> schedhost_id {
      auto it = h->ids.find(std::string_view(s.data, s.len));
      return it == h->ids.end() ? SCHEDHOST_ID_EMPTY : it->second;
    };
    api_.id_string = [](schedhost_host* h, schedhost_id id) noexcept -> schedhost_str {
      if (id >= h->strings.size()) return {};
      return {h->strings[id].data(), h->strings[id].size()};
    };
    api_.config_kind = [](const schedhost_config* c) noexcept -> int32_t {
      return c == nullptr ? SCHEDHOST_CONFIG_NONE : c->kind;
    };
    api_.config_get = [](const schedhost_config* c,
                         schedhost_str key) noexcept -> const schedhost_config* {
      if (c == nullptr) return nullptr;
      for (const auto& [k, child] : c->children) {
        if (k == std::string_view(key.data, key.len)) return child.get();
      }
      return nullptr;
    };
    api_.config_len = [](const schedhost_config* c) noexcept -> size_t {
      return c == nullptr ? 0 : c->children.size();
    };
    api_.config_at = [](const schedhost_config* c, size_t i,
                        schedhost_str* key) noexcept -> const schedhost_config* {
      if (c == nullptr || i >= c->children.size()) return nullptr;
      if (key != nullptr) *key = {c->children[i].first.data(), c->children[i].first.size()};
      return c->children[i].second.get();
    };
    api_.config_string = [](const schedhost_config* c, schedhost_str* out) noexcept -> int32_t {
      if (c == nullptr || c->kind != SCHEDHOST_CONFIG_STRING) return SCHEDHOST_E_WRONG_TYPE;
      *out = {c->text.data(), c->text.size()};
      return SCHEDHOST_OK;
    };
    api_.config_int = [](const schedhost_config* c, int64_t* out) noexcept -> int32_t {
      if (c == nullptr || c->kind != SCHEDHOST_CONFIG_INT) return SCHEDHOST_E_WRONG_TYPE;
      *out = c->integer;
      return SCHEDHOST_OK;
    };
    api_.config_float = [](const schedhost_config*, double*) noexcept -> int32_t {
      return SCHEDHOST_E_WRONG_TYPE;
    };
    api_.config_bool = [](const schedhost_config*, int32_t*) noexcept -> int32_t {
      return SCHEDHOST_E_WRONG_TYPE;
    };
    api_.config_location = [](const schedhost_config* c) noexcept -> schedhost_str {
      if (c == nullptr) return {};
      return {c->location.data(), c->location.size()};
    };
  }
  ~FakeHost() {
    for (const Instance& i : instances_) {
      if (i.descriptor->destroy != nullptr) i.descriptor->destroy(i.self);
    }
    if (library_ != nullptr) dlclose(library_);
  }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  /// Load dlopens `path` as the host does (RTLD_NOW | RTLD_LOCAL), negotiates ABI 1 and returns
  /// the descriptor of plugin `name`. Throws std::runtime_error saying what failed.
  const schedhost_plugin_descriptor* Load(const std::string& path, std::string_view name) {
    library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    auto entry =
        reinterpret_cast<schedhost_plugin_library_fn>(dlsym(library_, SCHEDHOST_ENTRY_SYMBOL));
    if (entry == nullptr) throw std::runtime_error(path + " has no " SCHEDHOST_ENTRY_SYMBOL);
    negotiation_ = {};
    negotiation_.struct_size = sizeof(negotiation_);
    negotiation_.host_abi_major = SCHEDHOST_ABI_MAJOR;
    negotiation_.host_abi_minor = SCHEDHOST_ABI_MINOR;
    negotiation_.host_version = {"fake", 4};
    negotiation_.api = &api_;
    if (entry(&negotiation_) != 0) {
      throw std::runtime_error(path + " refused the host: " +
                               std::string(negotiation_.error.data, negotiation_.error.len));
    }
    for (size_t i = 0; i < negotiation_.plugins_len; ++i) {
      const schedhost_plugin_descriptor* d = negotiation_.plugins[i];
      if (std::string_view(d->name.data, d->name.len) == name) return d;
    }
    throw std::runtime_error(path + " has no plugin " + std::string(name));
  }

  /// negotiation is what the library answered (ABI minor, SDK version, plugins).
  const schedhost_library_negotiation& negotiation() const { return negotiation_; }

  /// Create makes an instance with `args` (nullptr: no plugin_config). Throws
  /// std::runtime_error with the plugin's reasons when create fails.
  Instance Create(const schedhost_plugin_descriptor* d, const FakeConfig::Node& args = nullptr) {
    schedhost_status status;
    void* self = nullptr;
    if (d->create(&api_, &host_, args.get(), &self, &status) != SCHEDHOST_SUCCESS) {
      std::string message;
      for (const auto& r : status.reasons) message += (message.empty() ? "" : "; ") + r;
      throw std::runtime_error(message);
    }
    instances_.push_back({d, self});
    return instances_.back();
  }

  /// MakePod returns a pod view named `name` with `labels` (key, value).
  std::unique_ptr<Pod> MakePod(std::string name,
                               const std::vector<std::pair<std::string, std::string>>& labels) {
    auto pod = std::make_unique<Pod>();
    pod->name = std::move(name);
    pod->labels = MakeLabels(labels);
    pod->view.struct_size = sizeof(pod->view);
    pod->view.name = {pod->name.data(), pod->name.size()};
    pod->view.namespace_name = {"default", 7};
    pod->view.namespace_id = SCHEDHOST_ID_NAMESPACE_DEFAULT;
    pod->view.labels = {pod->labels.data(), pod->labels.size()};
    return pod;
  }

  /// MakeNode returns a node info view of an empty node named `name` with `labels`.
  std::unique_ptr<Node> MakeNode(std::string name,
                                 const std::vector<std::pair<std::string, std::string>>& labels) {
    auto node = std::make_unique<Node>();
    node->name = std::move(name);
    node->labels = MakeLabels(labels);
    node->view.struct_size = sizeof(node->view);
    node->view.name = {node->name.data(), node->name.size()};
    node->view.name_id = Intern(&host_, node->view.name);
    node->view.labels = {node->labels.data(), node->labels.size()};
    node->info.struct_size = sizeof(node->info);
    node->info.node = &node->view;
    return node;
  }

  /// Filter runs the instance's Filter on (pod, node).
  Result Filter(const Instance& i, const Pod& pod, const Node& node) {
    Result r;
    schedhost_status status;
    r.code = i.descriptor->filter(i.self, nullptr, &pod.view, &node.info, &status);
    r.reasons = status.reasons;
    return r;
  }

  /// Score runs the instance's Score on (pod, node) and stores the score in *score.
  Result Score(const Instance& i, const Pod& pod, const Node& node, int64_t* score) {
    Result r;
    schedhost_status status;
    r.code = i.descriptor->score(i.self, nullptr, &pod.view, &node.info, score, &status);
    r.reasons = status.reasons;
    return r;
  }

 private:
  static schedhost_id Intern(schedhost_host* h, schedhost_str s) noexcept {
    std::string key(s.data == nullptr ? "" : std::string(s.data, s.len));
    auto it = h->ids.find(key);
    if (it != h->ids.end()) return it->second;
    const auto id = static_cast<schedhost_id>(h->strings.size());
    h->strings.push_back(key);
    h->ids.emplace(std::move(key), id);
    return id;
  }

  // MakeLabels interns (key, value) pairs into a label set sorted by key id, as the host does.
  std::vector<schedhost_label> MakeLabels(
      const std::vector<std::pair<std::string, std::string>>& labels) {
    std::vector<schedhost_label> out;
    for (const auto& [k, v] : labels) {
      out.push_back({Intern(&host_, {k.data(), k.size()}), Intern(&host_, {v.data(), v.size()})});
    }
    std::sort(out.begin(), out.end(),
              [](const schedhost_label& a, const schedhost_label& b) { return a.key < b.key; });
    return out;
  }

  schedhost_host host_;
  schedhost_host_api api_{};
  schedhost_library_negotiation negotiation_{};
  void* library_ = nullptr;
  std::vector<Instance> instances_;
};
