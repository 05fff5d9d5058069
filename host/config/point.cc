#include "host/config/point.h"

namespace schedhost::config {
namespace {

constexpr std::array<std::string_view, kNumPoints> kPointNames = {
    "pre_enqueue", "queue_sort", "pre_filter", "filter",   "post_filter", "pre_score",
    "score",       "reserve",    "permit",     "pre_bind", "bind",        "post_bind",
};

}  // namespace

std::string_view PointName(Point point) {
  size_t index = PointIndex(point);
  return index < kNumPoints ? kPointNames[index] : std::string_view("unknown_point");
}

std::optional<Point> PointFromName(std::string_view name) {
  for (Point point : kAllPoints) {
    if (kPointNames[PointIndex(point)] == name) return point;
  }
  return std::nullopt;
}

}  // namespace schedhost::config
