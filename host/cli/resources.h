// The resource kinds schedctl names on its command line, with kubectl's spellings: the names
// and short names a user may type (`pods`, `po`, `pdb`, `pc`, ...), the plural used in errors
// (`pods "x" not found`) and the type printed by apply and delete (`pod/web-1 created`,
// `poddisruptionbudget.policy "x" deleted`).
//
//   const Resource* r = FindResource("po");   // r->kind == v1::POD, r->singular == "pod"
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "schedhost/v1/cluster.pb.h"

namespace schedhost::cli {

// Resource describes one kind as kubectl spells it.
struct Resource {
  v1::Kind kind;
  std::string_view singular;    // "pod"
  std::string_view plural;      // "pods"
  std::string_view short_name;  // "po"; "" when kubectl has none
  std::string_view group;       // "" for core, "policy", "scheduling.k8s.io"
  bool namespaced;
};

// FindResource returns the resource `name` names (singular, plural or short, any case; also
// the Kubernetes kind "PodDisruptionBudget"), or nullptr.
const Resource* FindResource(std::string_view name);

// FindResourceOrReport is FindResource, writing kubectl's "the server doesn't have a resource
// type" error (with the known names) to `err` when there is none.
const Resource* FindResourceOrReport(std::string_view name, std::ostream& err);

// DeclaredResource stands for a name FindResource does not know: the server resolves it among
// the kinds its plugins declare (plural, singular, kind or plural.group).
const Resource& DeclaredResource();

// ResourceFor is FindResource, or DeclaredResource when the name is not a built-in kind's.
const Resource& ResourceFor(std::string_view name);

// ResourceOf returns the resource of a proto kind (never null for a known kind).
const Resource& ResourceOf(v1::Kind kind);

// TypeName is kubectl's type prefix for output lines: "pod", "poddisruptionbudget.policy".
std::string TypeName(const Resource& r);

// KindTypeName is kubectl's type prefix for an object of a kind schedctl does not know (a kind
// a plugin declares): the kind in lower case and the group of `api_version`
// ("ticket.example.schedhost.io"; just the kind for the core group).
std::string KindTypeName(std::string_view kind, std::string_view api_version);

// GroupPlural is kubectl's resource name in errors: "pods", "priorityclasses.scheduling.k8s.io".
std::string GroupPlural(const Resource& r);

// KnownResources lists what FindResource accepts, for error messages.
std::string KnownResources();

}  // namespace schedhost::cli
