// The kind table behind FindResource.
#include "host/cli/resources.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <ostream>

namespace schedhost::cli {
namespace {

constexpr std::array<Resource, 5> kResources = {{
    {v1::POD, "pod", "pods", "po", "", true},
    {v1::NODE, "node", "nodes", "no", "", false},
    {v1::POD_DISRUPTION_BUDGET, "poddisruptionbudget", "poddisruptionbudgets", "pdb", "policy",
     true},
    {v1::PRIORITY_CLASS, "priorityclass", "priorityclasses", "pc", "scheduling.k8s.io", false},
    {v1::NAMESPACE, "namespace", "namespaces", "ns", "", false},
}};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const Resource* FindResource(std::string_view name) {
  const std::string lower = Lower(name);
  for (const Resource& r : kResources) {
    // "pdbs" is not kubectl's, but people type it; the group-qualified forms are kubectl's.
    if (lower == r.singular || lower == r.plural ||
        (!r.short_name.empty() && lower == r.short_name) ||
        (!r.short_name.empty() && lower == std::string(r.short_name) + "s") ||
        (!r.group.empty() && (lower == TypeName(r) || lower == GroupPlural(r)))) {
      return &r;
    }
  }
  return nullptr;
}

const Resource* FindResourceOrReport(std::string_view name, std::ostream& err) {
  const Resource* r = FindResource(name);
  if (r == nullptr) {
    err << "error: the server doesn't have a resource type \"" << name << "\" (schedhost serves "
        << KnownResources() << ")\n";
  }
  return r;
}

const Resource& DeclaredResource() {
  static constexpr Resource kDeclared{v1::DECLARED, "", "", "", "", true};
  return kDeclared;
}

const Resource& ResourceFor(std::string_view name) {
  const Resource* r = FindResource(name);
  return r != nullptr ? *r : DeclaredResource();
}

const Resource& ResourceOf(v1::Kind kind) {
  for (const Resource& r : kResources) {
    if (r.kind == kind) return r;
  }
  return kResources.front();
}

std::string TypeName(const Resource& r) {
  std::string out(r.singular);
  if (!r.group.empty()) out += "." + std::string(r.group);
  return out;
}

std::string KindTypeName(std::string_view kind, std::string_view api_version) {
  std::string out = Lower(kind);
  const size_t slash = api_version.find('/');
  if (slash != std::string_view::npos) out += "." + std::string(api_version.substr(0, slash));
  return out;
}

std::string GroupPlural(const Resource& r) {
  std::string out(r.plural);
  if (!r.group.empty()) out += "." + std::string(r.group);
  return out;
}

std::string KnownResources() {
  std::string out;
  for (const Resource& r : kResources) {
    if (!out.empty()) out += ", ";
    out += std::string(r.plural) + " (" + std::string(r.short_name) + ")";
  }
  return out + ", and the kinds its plugins declare";
}

}  // namespace schedhost::cli
