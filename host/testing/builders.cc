// NodeYaml, PodYaml, NamespaceYaml: small manifests for tests, every string double-quoted so a
// label value never turns into a YAML number or boolean.
#include <schedhost/testing.hpp>

namespace schedhost::testing {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Map(const std::map<std::string, std::string>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) out += (out.size() > 1 ? ", " : "") + Quote(k) + ": " + Quote(v);
  return out + "}";
}

}  // namespace

std::string NodeYaml(const std::string& name, const Labels& labels,
                     const std::map<std::string, std::string>& allocatable) {
  Labels all = labels;
  all.emplace("kubernetes.io/hostname", name);
  std::map<std::string, std::string> alloc = {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}};
  for (const auto& [k, v] : allocatable) alloc[k] = v;
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + Quote(name) +
         "\n  labels: " + Map(all) + "\nstatus:\n  allocatable: " + Map(alloc) +
         "\n  capacity: " + Map(alloc) + "\n";
}

std::string PodYaml(const std::string& name, const Labels& labels,
                    const std::map<std::string, std::string>& requests, const std::string& node,
                    const std::string& namespace_name) {
  std::string out = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + Quote(name) +
                    "\n  namespace: " + Quote(namespace_name) + "\n  labels: " + Map(labels) +
                    "\nspec:\n";
  if (!node.empty()) out += "  nodeName: " + Quote(node) + "\n";
  out +=
      "  containers:\n  - name: main\n    image: \"registry.k8s.io/pause:3.9\"\n"
      "    resources: {requests: " +
      Map(requests) + "}\n";
  return out;
}

std::string NamespaceYaml(const std::string& name, const Labels& labels) {
  return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + Quote(name) +
         "\n  labels: " + Map(labels) + "\n";
}

}  // namespace schedhost::testing
