// NodePool: an example schedhost plugin, built out of tree against the installed SDK.
//
// Nodes belong to pools through one label (`example.com/pool` unless configured). A pod that
// carries the same label asks for its pool: Filter keeps it off every node of another pool or of
// none. A pod without the label is steered away from pool nodes by Score, so pools stay free for
// the pods that need them.
//
//   [profile.plugins.multi_point]
//   enabled = [{ name = "NodePool", weight = 5 }]
//   [profile.plugin_config.NodePool]
//   label = "example.com/pool"
#pragma once

#include <cstdint>
#include <schedhost/plugin.hpp>
#include <span>
#include <string>
#include <string_view>

namespace example {

/// NodePool filters pods into their node pool and scores pool-less pods away from pools.
class NodePool final : public schedhost::Plugin,
                       public schedhost::FilterPlugin,
                       public schedhost::ScorePlugin,
                       public schedhost::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodePool";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kDefaultLabel is the pool label when plugin_config.NodePool.label is not set.
  static constexpr std::string_view kDefaultLabel = "example.com/pool";
  /// kReasonPrefix starts the reason for a node outside the pod's pool ("... gpu").
  static constexpr std::string_view kReasonPrefix = "node(s) not in pool ";

  /// NodePool reads `label` (a qualified label name); any other key throws ArgsError.
  NodePool(const schedhost::Host& host, const schedhost::Args& args);

  /// Filter passes every node for a pod without the label, else only nodes whose label value
  /// equals the pod's (UnschedulableAndUnresolvable otherwise: preemption cannot help).
  schedhost::Status Filter(const schedhost::CycleState& state, const schedhost::Pod& pod,
                           const schedhost::NodeInfo& ni) override;

  /// Score gives a pod without the label 100 on nodes outside every pool and 0 on pool nodes;
  /// a pod with the label scores 100 everywhere (Filter already chose its pool).
  schedhost::Status Score(const schedhost::CycleState& state, const schedhost::Pod& pod,
                          const schedhost::NodeInfo& ni, int64_t& score) override;

  /// EventsToRegister: a pod rejected here may fit after a node is added or relabelled.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  /// label is the configured pool label key.
  const std::string& label() const { return label_; }

 private:
  std::string label_;
  schedhost::Id label_id_ = SCHEDHOST_ID_EMPTY;  // interned once; Filter and Score only read it
};

}  // namespace example
