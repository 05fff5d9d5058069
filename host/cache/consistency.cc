#include "host/cache/consistency.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace schedhost::cache {
namespace {

uint64_t Version(const auto& object) { return object.resource_version(); }

}  // namespace

std::vector<std::string> CompareWithStore(const Cache& cache, const store::Store& store) {
  const CacheDump dump = cache.Dump();
  std::vector<std::string> out;

  std::map<std::string_view, const model::Node*> cached_nodes;
  for (const auto& node : dump.nodes) cached_nodes.emplace(node->name(), node.get());
  const auto stored_nodes = store.List<model::Node>();
  std::map<std::string_view, const model::Node*> store_nodes;
  for (const auto& node : stored_nodes) {
    store_nodes.emplace(node->name(), node.get());
    auto found = cached_nodes.find(node->name());
    if (found == cached_nodes.end()) {
      out.push_back("node " + node->name() + ": in the store, missing from the cache");
    } else if (Version(*found->second) != Version(*node)) {
      out.push_back("node " + node->name() + ": resource version " +
                    std::to_string(Version(*found->second)) + " in the cache, " +
                    std::to_string(Version(*node)) + " in the store");
    }
  }
  for (const auto& [name, node] : cached_nodes) {
    if (store_nodes.count(name) == 0) {
      out.push_back("node " + std::string(name) + ": in the cache, not in the store");
    }
  }

  std::map<std::string_view, const CachedPod*> cached_pods;  // by uid
  for (const CachedPod& cp : dump.pods) cached_pods.emplace(cp.pod->uid(), &cp);
  const auto stored_pods = store.List<model::Pod>();
  std::map<std::string_view, const model::Pod*> store_pods;  // by uid
  for (const auto& pod : stored_pods) {
    store_pods.emplace(pod->uid(), pod.get());
    if (pod->node_name().empty()) continue;  // pending pods are the queue's business
    auto found = cached_pods.find(pod->uid());
    if (found == cached_pods.end()) {
      out.push_back(DescribePod(*pod) + ": bound to " + std::string(pod->node_name()) +
                    " in the store, missing from the cache");
    } else if (found->second->node_name != pod->node_name()) {
      out.push_back(DescribePod(*pod) + ": " + (found->second->assumed ? "assumed" : "cached") +
                    " on " + found->second->node_name + ", bound to " +
                    std::string(pod->node_name()) + " in the store");
    }
  }
  for (const CachedPod& cp : dump.pods) {
    if (cp.assumed) continue;  // binding in flight or confirmation pending
    auto found = store_pods.find(cp.pod->uid());
    if (found == store_pods.end()) {
      out.push_back(DescribePod(*cp.pod) + ": in the cache on " + cp.node_name +
                    ", not in the store");
    } else if (found->second->node_name().empty()) {
      out.push_back(DescribePod(*cp.pod) + ": in the cache on " + cp.node_name +
                    ", unbound in the store");
    } else if (Version(*found->second) != Version(*cp.pod)) {
      out.push_back(DescribePod(*cp.pod) + ": resource version " +
                    std::to_string(Version(*cp.pod)) + " in the cache, " +
                    std::to_string(Version(*found->second)) + " in the store");
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace schedhost::cache
