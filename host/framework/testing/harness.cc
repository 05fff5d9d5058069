#include "host/framework/testing/harness.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "host/config/expand.h"
#include "host/config/host_config.h"
#include "host/framework/plugin_instance.h"
#include "host/model/decode.h"
#include "host/store/object_write.h"

namespace schedhost::framework::testing {

std::string PluginDir() {
  const char* dir = std::getenv("SCHEDHOST_PLUGIN_DIR");
  if (dir == nullptr || *dir == '\0') {
    throw std::runtime_error("SCHEDHOST_PLUGIN_DIR is not set (run the test through ctest)");
  }
  return dir;
}

Harness::Harness(bool load_builtin) : registry_(std::make_unique<loader::PluginRegistry>()) {
  if (load_builtin) {
    registry_->LoadDirectory(PluginDir(), HostApi());
    if (!registry_->load_errors().empty()) {
      throw std::runtime_error("loading builtin plugins: " + registry_->load_errors().front());
    }
  }
}

Harness::~Harness() = default;

void Harness::RegisterInProcess(const schedhost_plugin_descriptor* descriptor) {
  registry_->RegisterInProcess(descriptor);
  framework_.reset();
}

void Harness::SetConfig(std::string_view toml) {
  config_toml_ = std::string(toml);
  framework_.reset();
}

void Harness::OnlyPlugins(const std::vector<std::string>& plugins, std::string_view extra_toml) {
  std::string toml =
      "[[profile]]\nname = \"test\"\n[profile.plugins.multi_point]\n"
      "disabled = [{ name = \"*\" }]\n"
      "enabled = [{ name = \"PrioritySort\" }, { name = \"DefaultBinder\" }";
  for (const auto& p : plugins) toml += ", { name = \"" + p + "\" }";
  toml += "]\n";
  toml += extra_toml;
  SetConfig(toml);
}

void Harness::AddObjects(std::string_view yaml) {
  AddObjects(model::DecodeManifests(yaml, "test"));
}

void Harness::AddObjects(const std::vector<model::Object>& objects) {
  for (const auto& obj : objects) {
    if (auto* node = std::get_if<std::shared_ptr<const model::Node>>(&obj)) {
      nodes_.push_back(*node);
    } else if (auto* pod = std::get_if<std::shared_ptr<const model::Pod>>(&obj)) {
      pods_.push_back(*pod);
    } else if (auto* ns = std::get_if<std::shared_ptr<const model::Namespace>>(&obj)) {
      namespaces_.push_back(*ns);
    }
  }
  snapshot_.reset();
}

std::shared_ptr<const model::Pod> Harness::MakePod(std::string_view yaml) const {
  for (auto& obj : model::DecodeManifests(yaml, "test")) {
    if (auto* pod = std::get_if<std::shared_ptr<const model::Pod>>(&obj)) return *pod;
  }
  throw std::runtime_error("MakePod: no Pod in manifest");
}

const PluginInstance& Harness::Plugin(std::string_view name, config::Point point) {
  for (const auto& ref : framework().plugins(point)) {
    if (ref.plugin->name == name) return *ref.plugin;
  }
  throw std::runtime_error(std::string(name) + " is not a " +
                           std::string(config::PointName(point)) + " plugin of the profile");
}

std::span<const schedhost_event_registration> Registrations(const PluginInstance& plugin) {
  const schedhost_event_registration* regs = nullptr;
  size_t n = 0;
  if (plugin.desc->events_to_register(plugin.instance, &regs, &n) != SCHEDHOST_SUCCESS) {
    throw std::runtime_error(plugin.name + ": events_to_register failed");
  }
  return {regs, n};
}

Framework& Harness::framework() {
  if (!framework_) {
    config::HostConfig cfg = config::ParseConfig(config_toml_, "test.toml", {});
    auto lookup = [this](std::string_view name) -> std::optional<uint32_t> {
      const loader::PluginEntry* e = registry_->Find(name);
      if (e == nullptr) return std::nullopt;
      return loader::ImplementedPoints(*e->descriptor);
    };
    config::ExpandedProfile expanded =
        config::ExpandProfile(cfg.profiles.at(0), lookup, registry_->Names());
    FrameworkOptions options;
    options.parallelizer = std::make_shared<Parallelizer>(2);
    options.percentage_of_nodes_to_score = cfg.percentage_of_nodes_to_score;
    options.batch_plugin_calls = cfg.batch_plugin_calls;
    framework_ = Framework::Build(expanded, *registry_, options);
    framework_->SetBinder([this](const schedhost_pod_view* pod, std::string_view node) {
      bindings_.push_back(std::string(pod->namespace_name.data, pod->namespace_name.len) + "/" +
                          std::string(pod->name.data, pod->name.len) + " -> " + std::string(node));
      return Status::Success();
    });
  }
  if (framework_->objects() == nullptr) {
    objects_.Declare(framework_->DeclaredKinds());
    framework_->SetObjects(&objects_);
    // Plugins write to the same objects they read, as in embedded mode.
    framework_->SetObjectWriter([this](const store::KindInfo& kind, store::ObjectWriteOp op,
                                       std::string_view ns, std::string_view name,
                                       std::string_view body) {
      store::WriteObject(objects_, kind, op, ns, name, body);
    });
    std::vector<model::GenericObject> pending;
    pending.swap(generic_);
    AddGeneric(pending);
  }
  framework_->SetSnapshot(&snapshot());
  return *framework_;
}

void Harness::AddGeneric(const std::vector<model::GenericObject>& objects) {
  if (!framework_) {
    generic_.insert(generic_.end(), objects.begin(), objects.end());
    return;
  }
  for (const model::GenericObject& o : objects) {
    if (!objects_.ApplyDocument(o, store::ObjectWrite{.stamp = true})) {
      throw std::runtime_error(o.Describe() + ": no plugin of the profile declares " +
                               o.api_version + " " + o.kind);
    }
  }
}

const cache::Snapshot& Harness::snapshot() {
  if (!snapshot_) {
    snapshot_ = cache::Snapshot::Build(nodes_, pods_, namespaces_);
    if (framework_) framework_->SetSnapshot(snapshot_.get());
    bare_views_.clear();
    for (const schedhost_node_info_view* v : snapshot_->views()) {
      schedhost_node_info_view& bare = bare_views_.emplace_back(*v);
      bare.summary = schedhost_node_summary{};
    }
  }
  return *snapshot_;
}

const schedhost_node_info_view* Harness::View(size_t i) {
  return hide_summaries_ ? &bare_views_[i] : snapshot().views()[i];
}

std::vector<Harness::NodeResult> Harness::RunFilter(const model::Pod& pod, bool run_all_filters) {
  Framework& fw = framework();
  const cache::Snapshot& snap = snapshot();
  CycleState state;
  state.run_all_filters = run_all_filters;
  std::vector<NodeResult> out;
  auto [subset, pre] = fw.RunPreFilterPlugins(state, pod.view());
  for (size_t i = 0; i < snap.size(); ++i) {
    std::string name(snap.at(i).node()->name());
    if (!pre.ok()) {
      out.push_back({name, pre});
    } else if (subset && !subset->count(name)) {
      out.push_back({name, Status::Make(Code::kUnschedulableAndUnresolvable,
                                        "node(s) didn't satisfy plugin(s) PreFilter result")});
    } else {
      out.push_back({name, fw.RunFilterPlugins(state, pod.view(), View(i))});
    }
  }
  return out;
}

Status Harness::RunScoreDetailed(const model::Pod& pod, std::vector<ScoredNode>& out,
                                 std::span<const Parallelizer::Range> ranges) {
  Framework& fw = framework();
  const cache::Snapshot& snap = snapshot();
  CycleState state;
  auto [subset, pre] = fw.RunPreFilterPlugins(state, pod.view());
  if (!pre.ok()) return pre;
  std::vector<const schedhost_node_info_view*> feasible;
  for (size_t i = 0; i < snap.size(); ++i) {
    if (subset && !subset->count(std::string(snap.at(i).node()->name()))) continue;
    if (fw.RunFilterPlugins(state, pod.view(), View(i)).ok()) feasible.push_back(View(i));
  }
  Status s = fw.RunPreScorePlugins(state, pod.view(), feasible);
  if (!s.ok()) return s;
  ScoreTable table;
  s = fw.RunScorePlugins(state, pod.view(), feasible, table, ranges);
  out.clear();
  for (size_t i = 0; s.ok() && i < table.nodes.size(); ++i) {
    ScoredNode& row = out.emplace_back();
    row.node_info = table.nodes[i].node_info;
    row.total = table.nodes[i].total;
    for (size_t k = 0; k < table.columns; ++k) {
      row.raw.push_back(table.Raw(i, k));
      row.weighted.push_back(table.Weighted(i, k));
    }
  }
  return s;
}

std::vector<std::pair<std::string, int64_t>> Harness::RunScore(const model::Pod& pod) {
  std::vector<ScoredNode> scores;
  Status s = RunScoreDetailed(pod, scores);
  if (!s.ok()) throw std::runtime_error("RunScore: " + s.Message());
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(scores.size());
  for (const auto& ns : scores) {
    out.emplace_back(std::string(ns.node_info->node->name.data, ns.node_info->node->name.len),
                     ns.total);
  }
  return out;
}

std::string Harness::Schedule(const model::Pod& pod, std::string* failure) {
  Framework& fw = framework();
  const cache::Snapshot& snap = snapshot();
  CycleState state;
  auto [subset, pre] = fw.RunPreFilterPlugins(state, pod.view());
  NodeStatuses statuses;
  std::vector<const schedhost_node_info_view*> feasible;
  if (pre.ok()) {
    for (size_t i = 0; i < snap.size(); ++i) {
      const std::string& name = snap.at(i).node()->name();
      if (subset && !subset->count(name)) continue;
      Status s = fw.RunFilterPlugins(state, pod.view(), View(i));
      if (s.ok()) {
        feasible.push_back(View(i));
      } else {
        statuses.emplace_back(name, std::move(s));
      }
    }
  }
  if (feasible.empty()) {
    if (failure) *failure = FitErrorMessage(snap.size(), statuses, pre.ok() ? nullptr : &pre);
    return "";
  }
  Status s = fw.RunPreScorePlugins(state, pod.view(), feasible);
  ScoreTable scores;
  if (s.ok()) s = fw.RunScorePlugins(state, pod.view(), feasible, scores);
  if (!s.ok()) {
    if (failure) *failure = s.Message();
    return "";
  }
  const NodeScore* best = &scores.nodes.front();
  for (const auto& ns : scores.nodes) {
    if (ns.total > best->total) best = &ns;
  }
  std::string node(best->node_info->node->name.data, best->node_info->node->name.len);
  s = fw.RunReservePluginsReserve(state, pod.view(), node);
  if (s.ok()) s = fw.RunPermitPlugins(state, pod.view(), node).status;
  if (s.ok()) s = fw.RunPreBindPlugins(state, pod.view(), node);
  if (s.ok()) s = fw.RunBindPlugins(state, pod.view(), node);
  if (!s.ok()) {
    fw.RunReservePluginsUnreserve(state, pod.view(), node);
    if (failure) *failure = s.Message();
    return "";
  }
  fw.RunPostBindPlugins(state, pod.view(), node);
  return node;
}

}  // namespace schedhost::framework::testing
