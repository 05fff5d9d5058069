#include "tests/bench/micro/micro_fixtures.h"

#include <utility>
#include <variant>
#include <vector>

#include "host/model/decode.h"

namespace schedhost::bench::micro {
namespace {

constexpr std::string_view kNodeYaml = R"(apiVersion: v1
kind: Node
metadata:
  name: node-template
status:
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
)";

constexpr std::string_view kPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: pod-template
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.9
    ports:
    - containerPort: 80
    resources:
      requests: {cpu: 100m, memory: 500Mi}
      limits: {cpu: 100m, memory: 500Mi}
)";

constexpr std::string_view kSpreadPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: spread-template
  labels: {color: blue}
spec:
  topologySpreadConstraints:
  - maxSkew: 5
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels: {color: blue}
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.9
    resources:
      requests: {cpu: 100m, memory: 500Mi}
)";

std::shared_ptr<const model::Pod> DecodePod(std::string_view yaml) {
  return std::get<std::shared_ptr<const model::Pod>>(
      model::DecodeManifests(yaml, "micro_fixtures").at(0));
}

model::PodData Named(model::PodData data, const std::string& name) {
  data.metadata.name = name;
  data.metadata.uid.clear();  // Make generates a fresh one
  return data;
}

}  // namespace

std::shared_ptr<const model::Node> MakeNode(size_t i) {
  static const model::NodeData kTemplate =
      std::get<std::shared_ptr<const model::Node>>(
          model::DecodeManifests(kNodeYaml, "micro_fixtures").at(0))
          ->data();
  model::NodeData data = kTemplate;
  data.metadata.name = "node-" + std::to_string(i);
  data.metadata.uid.clear();
  data.metadata.labels = {{"kubernetes.io/hostname", data.metadata.name},
                          {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}};
  return model::Node::Make(std::move(data));
}

std::shared_ptr<const model::Pod> MakePod(const std::string& name, const std::string& node,
                                          const std::string& color) {
  static const model::PodData kTemplate = DecodePod(kPodYaml)->data();
  model::PodData data = Named(kTemplate, name);
  data.spec.node_name = node;
  if (!color.empty()) data.metadata.labels = {{"color", color}};
  return model::Pod::Make(std::move(data));
}

std::shared_ptr<const model::Pod> MakeSpreadPod(const std::string& name) {
  return model::Pod::Make(Named(DecodePod(kSpreadPodYaml)->data(), name));
}

std::filesystem::path BuiltinPluginDir() { return SCHEDHOST_MICRO_BUILTIN_PLUGIN_DIR; }

std::filesystem::path BenchPluginPath() { return SCHEDHOST_MICRO_BENCH_PLUGIN; }

}  // namespace schedhost::bench::micro
