// Test helpers for host/config: a fake plugin registry that knows which points plugins implement.
//
// FakeRegistry stands in for the loader in ExpandProfile tests; WithUpstreamDefaults() knows the
// default plugins with the extension points their upstream counterparts implement.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/config/expand.h"
#include "host/config/point.h"

namespace schedhost::config::test {

// Mask returns the bitmask of `points`.
inline uint32_t Mask(std::initializer_list<Point> points) {
  uint32_t mask = 0;
  for (Point point : points) mask |= PointBit(point);
  return mask;
}

// FakeRegistry maps plugin names to the points they implement.
class FakeRegistry {
 public:
  // Add registers `name` as implementing `points`.
  FakeRegistry& Add(std::string name, std::initializer_list<Point> points) {
    masks_[std::move(name)] = Mask(points);
    return *this;
  }

  // WithUpstreamDefaults registers the default plugins (built and not yet built).
  FakeRegistry& WithUpstreamDefaults() {
    Add("SchedulingGates", {Point::kPreEnqueue});
    Add("PrioritySort", {Point::kQueueSort});
    Add("NodeUnschedulable", {Point::kFilter});
    Add("NodeName", {Point::kFilter});
    Add("TaintToleration", {Point::kFilter, Point::kPreScore, Point::kScore});
    Add("NodeAffinity", {Point::kPreFilter, Point::kFilter, Point::kPreScore, Point::kScore});
    Add("NodePorts", {Point::kPreFilter, Point::kFilter});
    Add("NodeResourcesFit", {Point::kPreFilter, Point::kFilter, Point::kPreScore, Point::kScore});
    Add("VolumeRestrictions", {Point::kPreFilter, Point::kFilter});
    Add("NodeVolumeLimits", {Point::kPreFilter, Point::kFilter});
    Add("VolumeBinding", {Point::kPreFilter, Point::kFilter, Point::kPreScore, Point::kScore,
                          Point::kReserve, Point::kPreBind});
    Add("VolumeZone", {Point::kPreFilter, Point::kFilter});
    Add("PodTopologySpread", {Point::kPreFilter, Point::kFilter, Point::kPreScore, Point::kScore});
    Add("InterPodAffinity", {Point::kPreFilter, Point::kFilter, Point::kPreScore, Point::kScore});
    Add("DefaultPreemption", {Point::kPostFilter});
    Add("NodeResourcesBalancedAllocation", {Point::kPreScore, Point::kScore});
    Add("ImageLocality", {Point::kScore});
    Add("DefaultBinder", {Point::kBind});
    return *this;
  }

  // Lookup returns a PointLookup reading this registry (which must outlive it).
  PointLookup Lookup() const {
    return [this](std::string_view name) -> std::optional<uint32_t> {
      auto it = masks_.find(std::string(name));
      if (it == masks_.end()) return std::nullopt;
      return it->second;
    };
  }

  // Names returns the registered names, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, mask] : masks_) names.push_back(name);
    return names;
  }

 private:
  std::map<std::string, uint32_t> masks_;
};

// Names returns the plugin names of a point's final list.
inline std::vector<std::string> Names(const std::vector<EnabledPlugin>& plugins) {
  std::vector<std::string> names;
  for (const EnabledPlugin& plugin : plugins) names.push_back(plugin.name);
  return names;
}

// NamesAndWeights returns "Name(weight)" for each plugin of a point's final list.
inline std::vector<std::string> NamesAndWeights(const std::vector<EnabledPlugin>& plugins) {
  std::vector<std::string> out;
  for (const EnabledPlugin& plugin : plugins) {
    out.push_back(plugin.name + "(" + std::to_string(plugin.weight) + ")");
  }
  return out;
}

}  // namespace schedhost::config::test
