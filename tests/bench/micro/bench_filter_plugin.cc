// BenchFilter: a Filter-only plugin for schedhost-microbench's dispatch benchmark; its Filter is
// BenchFilterFits (filter_logic.cc), the same function the benchmark also calls directly. Not a
// builtin: it is built into the micro-benchmark's own plugin directory.
#include <schedhost/plugin.hpp>
#include <string_view>

#include "filter_logic.h"

namespace schedhost::bench::micro {

/// BenchFilter rejects a node without room for the pod (BenchFilterFits); no arguments.
class BenchFilter final : public Plugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "BenchFilter";
  static constexpr std::string_view kVersion = "1.0.0";

  /// BenchFilter accepts no arguments.
  BenchFilter(const Host& host, const Args& args) : Plugin(host) { args.ExpectNone(kName); }

  /// Filter is BenchFilterFits: Success, or Unschedulable "bench: no room".
  Status Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) override {
    if (BenchFilterFits(pod.raw(), ni.raw())) return {};
    return Status::Unschedulable("bench: no room");
  }
};

}  // namespace schedhost::bench::micro

SCHEDHOST_PLUGIN_LIBRARY(schedhost::bench::micro::BenchFilter)
