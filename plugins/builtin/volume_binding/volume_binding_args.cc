// VolumeBinding's arguments, as upstream's VolumeBindingArgs: bind_timeout_seconds (not
// negative) and the score's shape (StorageCapacityScoring: at least one point, utilizations
// 0..100 strictly increasing, scores 0..10).
#include "volume_binding.h"

namespace schedhost::plugins {

VolumeBindingArgs ParseVolumeBindingArgs(const Args& args) {
  VolumeBindingArgs out;
  ArgsReader r(args, "VolumeBinding");
  out.bind_timeout = std::chrono::seconds(
      r.Int("bind_timeout_seconds", {.min = 0, .fallback = out.bind_timeout.count()}));
  if (r.Has("shape")) {
    std::vector<ShapePoint> shape;
    r.RequiredTables("shape", [&shape](ArgsReader& point, size_t i) {
      ShapePoint p;
      p.utilization = point.RequiredInt("utilization", {.min = 0, .max = 100});
      p.score = point.RequiredInt("score", {.min = 0, .max = 10});
      if (i > 0 && shape.back().utilization >= p.utilization) {
        point.Fail("utilization", "values must be sorted in increasing order");
      }
      shape.push_back(p);
    });
    if (shape.empty()) r.Fail("shape", "at least one point must be specified");
    out.shape = std::move(shape);
  }
  r.Done();
  return out;
}

}  // namespace schedhost::plugins
