// ImageLocality: ranks nodes by the size of the pod's container images they already hold, as
// upstream kube-scheduler's ImageLocality does (v1.28: init containers count too). Each image
// the node has adds size * (nodes holding it / all nodes), so images present everywhere do not
// pull pods onto one node; the sum, clamped to [23 MiB, 1000 MiB * containers], maps onto
// [0, 100]. The host supplies per-node image states with cluster-wide node counts.
//
//   [profile.plugins.multi_point]
//   enabled = [{ name = "ImageLocality", weight = 1 }]
#pragma once

#include <cstdint>
#include <schedhost/plugin.hpp>
#include <string_view>

namespace schedhost::plugins {

/// ImageLocality favours nodes that already have the pod's container images. No arguments.
class ImageLocality final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "ImageLocality";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kMiB is upstream's "mb" unit of the thresholds.
  static constexpr int64_t kMiB = int64_t{1024} * 1024;
  /// kMinThreshold is the image-size sum below which a node scores 0.
  static constexpr int64_t kMinThreshold = 23 * kMiB;
  /// kMaxContainerThreshold is, per container, the sum at and above which a node scores 100.
  static constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

  /// ImageLocality refuses any argument (upstream's plugin takes none).
  ImageLocality(const Host& host, const Args& args);

  /// Score rates `ni` in [0, 100] by the spread-scaled sizes of the pod's images it holds.
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;

  /// CalculatePriority maps an image-size sum onto [0, 100] for a pod of `containers`
  /// containers (init containers included).
  static int64_t CalculatePriority(int64_t sum, size_t containers) noexcept;
};

}  // namespace schedhost::plugins
