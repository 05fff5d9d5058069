// Extension points of the scheduling framework as the config names them.
//
// A Point is one of the twelve places a plugin can hook into a scheduling or binding cycle;
// `multi_point` is not a Point but a config-only shorthand that enables a plugin at every point
// it implements. Sets of points travel as a uint32_t bitmask with bit i set for Point i (the same
// order the loader uses when it inspects a plugin descriptor).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace schedhost::config {

// Point is one extension point, in the order a pod meets them.
enum class Point : uint8_t {
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
};

// kNumPoints is the number of extension points (multi_point excluded).
inline constexpr size_t kNumPoints = 12;

// kAllPoints lists every Point in declaration order, for iteration.
inline constexpr std::array<Point, kNumPoints> kAllPoints = {
    Point::kPreEnqueue, Point::kQueueSort, Point::kPreFilter, Point::kFilter,
    Point::kPostFilter, Point::kPreScore,  Point::kScore,     Point::kReserve,
    Point::kPermit,     Point::kPreBind,   Point::kBind,      Point::kPostBind,
};

// kMultiPointName is the TOML name of the config-only multi_point section.
inline constexpr std::string_view kMultiPointName = "multi_point";

// PointIndex returns the position of `point` in kAllPoints (and its bit number).
constexpr size_t PointIndex(Point point) { return static_cast<size_t>(point); }

// PointBit returns the bitmask with only `point`'s bit set.
constexpr uint32_t PointBit(Point point) { return uint32_t{1} << PointIndex(point); }

// kAllPointsMask has the bit of every Point set.
inline constexpr uint32_t kAllPointsMask = (uint32_t{1} << kNumPoints) - 1;

// PointName returns the TOML name of `point` ("pre_enqueue", "queue_sort", ..., "post_bind").
std::string_view PointName(Point point);

// PointFromName returns the Point whose TOML name is `name`, or nullopt (also for multi_point).
std::optional<Point> PointFromName(std::string_view name);

}  // namespace schedhost::config
