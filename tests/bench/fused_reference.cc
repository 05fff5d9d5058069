#include "tests/bench/fused_reference.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "host/framework/framework.h"
#include "host/model/node.h"
#include "host/model/pod.h"

namespace schedhost::bench {
namespace {

using Clock = std::chrono::steady_clock;

// NodeShape is what the fused loop knows of a node.
struct NodeShape {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t pods = 0;
  bool unschedulable = false;
};

// PodShape is what the fused loop knows of a pod: its requests and its host port (0: none).
struct PodShape {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int32_t host_port = 0;
};

int64_t Get(std::span<const schedhost_resource> list, schedhost_id id) {
  for (const schedhost_resource& r : list) {
    if (r.name == id) return r.value;
  }
  return 0;
}

NodeShape ShapeOf(const model::Node& node, const std::string& where) {
  if (!node.data().spec.taints.empty()) {
    throw FusedShapeError(where + ": node " + node.name() +
                          " has taints (the fused loop does not model TaintToleration)");
  }
  return {Get(node.allocatable(), SCHEDHOST_ID_CPU), Get(node.allocatable(), SCHEDHOST_ID_MEMORY),
          Get(node.allocatable(), SCHEDHOST_ID_PODS), node.data().spec.unschedulable};
}

PodShape ShapeOf(const model::Pod& pod, const std::string& where) {
  const model::PodSpec& spec = pod.data().spec;
  auto refuse = [&](const std::string& what) {
    throw FusedShapeError(where + ": pod " + std::string(pod.name()) + " " + what +
                          " (the fused loop models only NodeResourcesFit, NodePorts and "
                          "NodeUnschedulable filtering of scheduling_basic-shaped pods)");
  };
  if (!spec.node_selector.empty()) refuse("has a nodeSelector");
  if (spec.affinity.has_value()) refuse("has affinity");
  if (!spec.topology_spread_constraints.empty()) refuse("has topologySpreadConstraints");
  if (!spec.tolerations.empty()) refuse("has tolerations");
  if (!spec.priority_class_name.empty() || spec.priority.value_or(0) != 0) {
    refuse("has a priority (the fused loop does not preempt)");
  }
  if (!spec.scheduling_gates.empty()) refuse("has schedulingGates");
  if (!spec.init_containers.empty()) refuse("has initContainers");
  if (!spec.node_name.empty()) refuse("is already bound");
  PodShape shape;
  for (const schedhost_resource& r : pod.requests()) {
    if (r.name == SCHEDHOST_ID_CPU) {
      shape.milli_cpu = r.value;
    } else if (r.name == SCHEDHOST_ID_MEMORY) {
      shape.memory = r.value;
    } else if (r.value != 0) {
      refuse("requests a resource other than cpu and memory");
    }
  }
  // Both requested, so LeastAllocated's non-zero defaults equal the requests.
  if (shape.milli_cpu <= 0 || shape.memory <= 0) refuse("does not request both cpu and memory");
  for (const model::Container& c : spec.containers) {
    for (const model::ContainerPort& p : c.ports) {
      if (p.host_port == 0) continue;
      if (shape.host_port != 0) refuse("has more than one host port");
      if (p.protocol != model::Protocol::kTCP || !(p.host_ip.empty() || p.host_ip == "0.0.0.0")) {
        refuse("has a host port other than TCP on every address");
      }
      shape.host_port = p.host_port;
    }
  }
  return shape;
}

// FusedScheduler is the fused loop's state: struct-of-arrays node data, upstream's round-robin
// start index and the scratch list of feasible nodes.
class FusedScheduler {
 public:
  explicit FusedScheduler(int32_t percentage) : percentage_(percentage) {}

  void AddNode(const NodeShape& n) {
    alloc_cpu_.push_back(n.milli_cpu);
    alloc_mem_.push_back(n.memory);
    alloc_pods_.push_back(n.pods);
    req_cpu_.push_back(0);
    req_mem_.push_back(0);
    pods_.push_back(0);
    port_in_use_.push_back(0);
    unschedulable_.push_back(n.unschedulable ? 1 : 0);
    feasible_.resize(alloc_cpu_.size());
  }

  size_t size() const { return alloc_cpu_.size(); }

  // Schedule filters, scores and binds one pod; false when no node fits. Adds the nodes it
  // filtered and scored to the counters.
  bool Schedule(const PodShape& pod, uint64_t& examined, uint64_t& scored) {
    const size_t n = size();
    if (n == 0) return false;
    const auto to_find = static_cast<size_t>(
        framework::NumFeasibleNodesToFind(percentage_, static_cast<int32_t>(n)));
    const size_t start = next_start_ % n;
    size_t i = start;
    size_t found = 0;
    size_t processed = 0;
    // Filter: NodeUnschedulable, NodeResourcesFit (pod count, cpu, memory), NodePorts; stop
    // once to_find nodes fit, as upstream's sampling does.
    while (processed < n && found < to_find) {
      const bool fits = unschedulable_[i] == 0 && pods_[i] < alloc_pods_[i] &&
                        pod.milli_cpu <= alloc_cpu_[i] - req_cpu_[i] &&
                        pod.memory <= alloc_mem_[i] - req_mem_[i] &&
                        (pod.host_port == 0 || port_in_use_[i] == 0);
      if (fits) feasible_[found++] = i;
      ++processed;
      if (++i == n) i = 0;
    }
    next_start_ = (start + processed) % n;
    examined += processed;
    if (found == 0) return false;
    size_t best = feasible_[0];
    if (found > 1) {
      scored += found;
      int64_t best_score = -1;
      for (size_t k = 0; k < found; ++k) {
        const size_t f = feasible_[k];
        const int64_t total = FusedScore(alloc_cpu_[f], alloc_mem_[f], req_cpu_[f], req_mem_[f],
                                         pod.milli_cpu, pod.memory);
        if (total > best_score) {
          best_score = total;
          best = f;
        }
      }
    }
    req_cpu_[best] += pod.milli_cpu;
    req_mem_[best] += pod.memory;
    ++pods_[best];
    if (pod.host_port != 0) port_in_use_[best] = 1;
    return true;
  }

 private:
  int32_t percentage_;
  size_t next_start_ = 0;
  std::vector<int64_t> alloc_cpu_;
  std::vector<int64_t> alloc_mem_;
  std::vector<int64_t> alloc_pods_;
  std::vector<int64_t> req_cpu_;
  std::vector<int64_t> req_mem_;
  std::vector<int64_t> pods_;
  std::vector<uint8_t> port_in_use_;
  std::vector<uint8_t> unschedulable_;
  std::vector<size_t> feasible_;
};

}  // namespace

int64_t FusedScore(int64_t alloc_cpu, int64_t alloc_mem, int64_t node_cpu, int64_t node_mem,
                   int64_t pod_cpu, int64_t pod_mem) {
  constexpr int64_t kMax = SCHEDHOST_MAX_NODE_SCORE;
  const int64_t used_cpu = node_cpu + pod_cpu;
  const int64_t used_mem = node_mem + pod_mem;
  // NodeResourcesFit LeastAllocated: the mean of free / allocatable * 100 over cpu and memory,
  // with the pod, in integers as the plugin computes it.
  const int64_t least =
      ((alloc_cpu - used_cpu) * kMax / alloc_cpu + (alloc_mem - used_mem) * kMax / alloc_mem) / 2;
  // BalancedAllocation: a balance is (1 - std dev of the fractions) * 100, truncated, and for two
  // resources the std dev is |cpu - mem| / 2; the score is 50 + (50 + the balance with the pod -
  // the balance without it) / 2.
  auto balance = [&](int64_t cpu, int64_t mem) {
    const double cpu_fraction =
        std::min(1.0, static_cast<double>(cpu) / static_cast<double>(alloc_cpu));
    const double mem_fraction =
        std::min(1.0, static_cast<double>(mem) / static_cast<double>(alloc_mem));
    const double std_dev = std::abs((cpu_fraction - mem_fraction) / 2);
    return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMax));
  };
  constexpr int64_t kHalf = kMax / 2;
  const int64_t balanced =
      kHalf + (kHalf + balance(used_cpu, used_mem) - balance(node_cpu, node_mem)) / 2;
  return least + balanced;
}

namespace {

std::string Where(const Workload& w, size_t op) {
  return w.path.string() + ": ops[" + std::to_string(op) + "]";
}

}  // namespace

void CheckFusedShape(const Workload& workload) {
  int32_t host_port = 0;
  for (size_t i = 0; i < workload.ops.size(); ++i) {
    const Op& op = workload.ops[i];
    const std::string where = Where(workload, i);
    if (op.kind == OpKind::kCreateObjects) {
      throw FusedShapeError(where +
                            ": createObjects is not part of a scheduling_basic-shaped "
                            "workload (the fused loop creates only nodes and pods)");
    }
    if (op.kind == OpKind::kBarrier) continue;
    const model::Object sample = DecodeOne(op, 0);
    if (op.kind == OpKind::kCreateNodes) {
      ShapeOf(*std::get<std::shared_ptr<const model::Node>>(sample), where);
      continue;
    }
    const PodShape pod = ShapeOf(*std::get<std::shared_ptr<const model::Pod>>(sample), where);
    if (pod.host_port != 0 && host_port != 0 && pod.host_port != host_port) {
      throw FusedShapeError(where + ": pods use host ports " + std::to_string(host_port) + " and " +
                            std::to_string(pod.host_port) +
                            " (the fused loop tracks one host port per node)");
    }
    if (pod.host_port != 0) host_port = pod.host_port;
  }
}

FusedResult RunFused(const Workload& workload, int32_t percentage_of_nodes_to_score) {
  CheckFusedShape(workload);
  FusedResult r;
  FusedScheduler sched(percentage_of_nodes_to_score);
  for (size_t i = 0; i < workload.ops.size(); ++i) {
    const Op& op = workload.ops[i];
    const std::string where = Where(workload, i);
    if (op.kind == OpKind::kCreateNodes) {
      for (size_t k = 0; k < op.count; ++k) {
        const model::Object o = DecodeOne(op, k);
        sched.AddNode(ShapeOf(*std::get<std::shared_ptr<const model::Node>>(o), where));
      }
      r.nodes += op.count;
      continue;
    }
    if (op.kind != OpKind::kCreatePods) continue;
    // Decode every pod of the operation first: the timed loop sees only the shapes.
    std::vector<PodShape> pods;
    pods.reserve(op.count);
    for (size_t k = 0; k < op.count; ++k) {
      const model::Object o = DecodeOne(op, k);
      pods.push_back(ShapeOf(*std::get<std::shared_ptr<const model::Pod>>(o), where));
    }
    uint64_t op_examined = 0;
    uint64_t op_scored = 0;
    size_t bound = 0;
    const auto t0 = Clock::now();
    for (const PodShape& p : pods) bound += sched.Schedule(p, op_examined, op_scored) ? 1 : 0;
    const auto t1 = Clock::now();
    if (op.measured) {
      r.measured_pods += pods.size();
      r.measured_bound += bound;
      r.seconds += std::chrono::duration<double>(t1 - t0).count();
      r.nodes_examined += op_examined;
      r.nodes_scored += op_scored;
    } else {
      r.unmeasured_pods += pods.size();
      r.unmeasured_bound += bound;
    }
  }
  r.pods_per_second = r.seconds > 0 ? static_cast<double>(r.measured_bound) / r.seconds : 0;
  return r;
}

}  // namespace schedhost::bench
