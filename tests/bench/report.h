// Report: the bench's output — a readable table and JSON — over the runs of each workload
// (--repeat N: min, median and max of every figure).
#pragma once

#include <string>
#include <vector>

#include "tests/bench/fused_reference.h"
#include "tests/bench/runner.h"

namespace schedhost::bench {

/// WorkloadRuns are the runs of one workload.
struct WorkloadRuns {
  std::string name;
  std::string path;
  double scale = 1;
  std::vector<RunResult> runs;
  /// fused are the runs of the hand-fused reference (--reference fused), if any.
  std::vector<FusedResult> fused;
};

/// FormatTable renders one line per workload (medians, pods/s with its min..max when repeated)
/// and the measured span's time per extension point as shares of the scheduling-attempt time;
/// then, for workloads run with the fused reference, its pods/s and the framework/fused ratio.
std::string FormatTable(const std::vector<WorkloadRuns>& workloads);

/// FormatJson renders every run and, per figure, {min, median, max} over the runs.
std::string FormatJson(const std::vector<WorkloadRuns>& workloads);

}  // namespace schedhost::bench
