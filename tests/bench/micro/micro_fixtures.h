// Fixtures of schedhost-microbench: upstream-shaped nodes and pods (the workloads' templates:
// 4 CPUs, 32Gi, 110 pods, three zones; pods of 100m and 500Mi) made directly from model data,
// so a 50,000-node cluster takes no YAML decoding, and the plugin directories.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "host/model/node.h"
#include "host/model/pod.h"

namespace schedhost::bench::micro {

/// MakeNode returns node `node-<i>`: node-default's shape, zone `zone-<i % 3>`.
std::shared_ptr<const model::Node> MakeNode(size_t i);

/// MakePod returns pod-default's shape named `name`, bound to `node` unless it is empty,
/// labelled `color=<color>` unless `color` is empty.
std::shared_ptr<const model::Pod> MakePod(const std::string& name, const std::string& node,
                                          const std::string& color = "");

/// MakeSpreadPod returns a pending pod labelled color=blue with topology.kubernetes.io/zone
/// spread (maxSkew 5, DoNotSchedule, selector color=blue), as topology_spreading's pods.
std::shared_ptr<const model::Pod> MakeSpreadPod(const std::string& name);

/// BuiltinPluginDir is this build's builtin plugin directory.
std::filesystem::path BuiltinPluginDir();

/// BenchPluginPath is the BenchFilter plugin library built beside the micro-benchmarks.
std::filesystem::path BenchPluginPath();

}  // namespace schedhost::bench::micro
