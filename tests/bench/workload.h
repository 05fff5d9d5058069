// Workload: one benchmark workload file (tests/bench/workloads/*.toml), scheduler_perf's
// operations over manifest templates.
//
//   name = "scheduling_basic"
//   [[ops]]
//   op = "createNodes"              # createNodes | createPods | createObjects | barrier
//   count = 5000                              # multiplied by --scale (at least 1)
//   template = "templates/node-default.yaml"  # relative to the workload file
//   [[ops]]
//   op = "createPods"
//   count = 10000
//   template = "templates/pod-default.yaml"
//   measured = true
//   [[ops]]
//   op = "barrier"
//
// `createObjects` creates `count` (default 1, not scaled) objects of any kind from its template
// (PriorityClasses, PodDisruptionBudgets, Namespaces); pods it creates count as unmeasured.
//
// A template is one YAML manifest in which `{{index}}` is replaced by the object's index within
// its operation and `{{index % N}}` by that index modulo N (zones, priorities, ...).
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "host/model/decode.h"

namespace schedhost::bench {

/// WorkloadError reports a workload file the bench cannot run; what() names the file and field.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// OpKind is one of scheduler_perf's operations.
enum class OpKind { kCreateNodes, kCreatePods, kCreateObjects, kBarrier };

/// Op is one operation of a workload.
struct Op {
  OpKind kind = OpKind::kBarrier;
  /// count is how many objects the operation creates, already scaled.
  size_t count = 0;
  /// template_text is the manifest template (createNodes, createPods).
  std::string template_text;
  /// template_name is the template's path as the workload names it, for messages.
  std::string template_name;
  /// measured marks the pods whose scheduling is timed (createPods).
  bool measured = false;
};

/// Workload is a parsed, validated workload file.
struct Workload {
  std::string name;
  std::string description;
  std::filesystem::path path;
  std::vector<Op> ops;
};

/// LoadWorkload reads and validates the workload file at `path`, multiplying every count by
/// `scale` (rounded, at least 1); each template is rendered and decoded once to check it holds
/// exactly one object of the operation's kind. Throws WorkloadError.
Workload LoadWorkload(const std::filesystem::path& path, double scale);

/// RenderTemplate replaces `{{index}}` and `{{index % N}}` in `text` for object `index`; throws
/// WorkloadError for any other placeholder.
std::string RenderTemplate(std::string_view text, size_t index);

/// DecodeOne renders `op`'s template for `index` and decodes it; throws WorkloadError unless it
/// holds exactly one object.
model::Object DecodeOne(const Op& op, size_t index);

/// DecodeAny is DecodeOne that also takes an object of a kind the model does not type (a
/// createObjects template of a kind a plugin declares), returned as a GenericObject.
std::variant<model::Object, model::GenericObject> DecodeAny(const Op& op, size_t index);

}  // namespace schedhost::bench
