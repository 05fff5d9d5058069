// What a plugin declares beyond its extension points: the API kinds it reads (plugin.h,
// schedhost_kind_decl), read through struct_size, checked and turned into the store's KindInfo;
// and the parts of a pod it evaluates (abi 1.7), which decide whether a profile may schedule a
// pod that uses them.
#include <algorithm>
#include <cstddef>
#include <cctype>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"

namespace schedhost::framework {
namespace {

// The kinds the host types itself: plugins read them through pod and node views, PDB and
// PriorityClass views, and namespace_labels, never as trees.
constexpr std::pair<std::string_view, std::string_view> kTypedKinds[] = {
    {"", "pods"},
    {"", "nodes"},
    {"", "namespaces"},
    {"policy", "poddisruptionbudgets"},
    {"scheduling.k8s.io", "priorityclasses"},
};

// ValidName: lower-case letters, digits, '-' and '.', starting and ending alphanumeric (a DNS
// subdomain, as API groups and resource names are).
bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto alnum = [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// Holds tells whether descriptor `d` reaches `end` bytes: fields past its struct_size are never
// read (docs/abi.md rule 4). (SCHEDHOST_HAS_FIELD would compare a reference's address to NULL.)
bool Holds(const schedhost_plugin_descriptor& d, size_t end) { return d.struct_size >= end; }

}  // namespace

std::vector<store::KindInfo> KindsOf(const schedhost_plugin_descriptor& d,
                                     const std::string& who) {
  std::vector<store::KindInfo> out;
  // Read only within struct_size (docs/abi.md rule 4): a descriptor before abi 1.5 declares none.
  if (!Holds(d, offsetof(schedhost_plugin_descriptor, kinds_len) + sizeof(d.kinds_len)) ||
      d.kinds_len == 0) {
    return out;
  }
  if (d.kinds == nullptr) {
    throw FrameworkError(who + " declares " + std::to_string(d.kinds_len) +
                         " kinds but its kinds array is NULL");
  }
  for (size_t i = 0; i < d.kinds_len; ++i) {
    const schedhost_kind_decl* k = d.kinds[i];
    const std::string where = who + ": declared kind #" + std::to_string(i);
    if (k == nullptr) throw FrameworkError(where + " is NULL");
    if (!SCHEDHOST_HAS_FIELD(k, schedhost_kind_decl, field_selector)) {
      throw FrameworkError(where + " has struct_size " + std::to_string(k->struct_size) +
                           ", smaller than the abi 1.5 declaration (" +
                           std::to_string(sizeof(schedhost_kind_decl)) + " bytes)");
    }
    store::KindInfo info;
    info.group = std::string(View(k->group));
    info.version = std::string(View(k->version));
    info.resource = std::string(View(k->resource));
    info.kind = std::string(View(k->kind));
    const std::string named = where + " (" + info.ApiVersion() + " " + info.kind + ")";
    if (info.version.empty() || info.resource.empty() || info.kind.empty()) {
      throw FrameworkError(named + ": version, resource and kind are required");
    }
    if (!ValidName(info.resource) || info.resource.find('.') != std::string::npos) {
      throw FrameworkError(named + ": resource \"" + info.resource +
                           "\" is not a lower-case plural name such as \"podgroups\"");
    }
    if (!info.group.empty() && !ValidName(info.group)) {
      throw FrameworkError(named + ": group \"" + info.group + "\" is not a DNS subdomain");
    }
    if (k->scope != SCHEDHOST_KIND_CLUSTER && k->scope != SCHEDHOST_KIND_NAMESPACED) {
      throw FrameworkError(named + ": scope " + std::to_string(k->scope) +
                           " is neither SCHEDHOST_KIND_CLUSTER nor SCHEDHOST_KIND_NAMESPACED");
    }
    if (k->reserved0 != 0) throw FrameworkError(named + ": reserved0 must be zero");
    info.namespaced = k->scope == SCHEDHOST_KIND_NAMESPACED;
    if (k->label_selector.len != 0 || k->field_selector.len != 0) {
      throw FrameworkError(named +
                           ": this host mirrors whole kinds and does not support label or field "
                           "selectors on declared kinds yet; declare the kind without one and "
                           "skip the objects you do not need");
    }
    for (const auto& [group, resource] : kTypedKinds) {
      if (info.group == group && info.resource == resource) {
        throw FrameworkError(named + ": " + info.Key() +
                             " are typed by the host; read them through its views, not as "
                             "declared objects");
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<std::string> EvaluatesOf(const schedhost_plugin_descriptor& d, const std::string& who) {
  std::vector<std::string> out;
  // A descriptor before abi 1.7 evaluates nothing.
  if (!Holds(d, offsetof(schedhost_plugin_descriptor, evaluates_len) + sizeof(d.evaluates_len)) ||
      d.evaluates_len == 0) {
    return out;
  }
  if (d.evaluates == nullptr) {
    throw FrameworkError(who + " evaluates " + std::to_string(d.evaluates_len) +
                         " parts of a pod but its evaluates array is NULL");
  }
  for (size_t i = 0; i < d.evaluates_len; ++i) {
    const std::string part(View(d.evaluates[i]));
    const bool volume = part.starts_with("spec.volumes.") && part.size() > 13 &&
                        part.find('.', 13) == std::string::npos;
    if (!volume && part != "spec.resourceClaims" && part != "nodeDeclaredFeatures") {
      throw FrameworkError(who + ": evaluates[" + std::to_string(i) + "] \"" + part +
                           "\" is not a part of a pod the host asks plugins about; known: "
                           "spec.volumes.<source> (e.g. spec.volumes.persistentVolumeClaim), "
                           "spec.resourceClaims, nodeDeclaredFeatures");
    }
    out.push_back(part);
  }
  return out;
}

std::optional<Status> Framework::Unevaluated(const model::Pod& pod) const {
  if (!pod.HasNeeds()) return std::nullopt;
  for (const model::PodNeed& need : pod.data().spec.needs) {
    const bool evaluated = std::any_of(instances_.begin(), instances_.end(), [&](const auto& inst) {
      return std::find(inst->evaluates.begin(), inst->evaluates.end(), need.part) !=
             inst->evaluates.end();
    });
    if (evaluated) continue;
    // Nothing here can tell whether a node suits this part of the pod: it is not placed on a
    // guess (upstream's scheduler would evaluate it; a pod bound anyway may never start).
    // Rejected in the host's name: no plugin of the profile registered for events about it, so
    // any cluster event (a profile reload among them) retries the pod, as for a plugin without
    // EventsToRegister, instead of backing off and retrying for ever.
    static const Text kHost = Text::Intern("schedhost");
    return Status::Make(Code::kUnschedulableAndUnresolvable,
                        "pod's " + need.what + " at " + need.path + " needs a plugin that "
                        "evaluates " + need.part + ", and profile \"" + name_ + "\" has none",
                        kHost);
  }
  return std::nullopt;
}

std::vector<store::KindInfo> Framework::DeclaredKinds() const {
  std::vector<store::KindInfo> out;
  for (const auto& inst : instances_) {
    for (const store::KindInfo& k : inst->kinds) {
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
  }
  return out;
}

}  // namespace schedhost::framework
