// schedhost-microbench: Google Benchmark micro-benchmarks of the host (tests/bench/README.md).
// Runs like any benchmark binary (--benchmark_filter, --benchmark_min_time, --benchmark_out)
// and then prints the ratios the issue asks for: Filter through the C ABI and the framework
// against the same Filter called directly, and the snapshot update after one node changed.
// Exits 1 when a benchmark reported an error (ctest's smoke run relies on it).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

// RatioReporter is the console reporter that also remembers each run's CPU and real time per
// iteration (ns) by benchmark name, for the summary printed after the runs. Ratios use CPU time,
// which a shared machine's preemption inflates less than real time.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(OutputOptions options) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& reports) override {
    ConsoleReporter::ReportRuns(reports);
    for (const Run& r : reports) {
      if (r.error_occurred) failed_ = true;
      if (r.run_type != Run::RT_Iteration || r.error_occurred || r.iterations == 0) continue;
      const auto iterations = static_cast<double>(r.iterations);
      cpu_ns_[r.benchmark_name()] = r.cpu_accumulated_time * 1e9 / iterations;
      real_ns_[r.benchmark_name()] = r.real_accumulated_time * 1e9 / iterations;
    }
  }

  // failed tells whether any benchmark reported an error (SkipWithError).
  bool failed() const { return failed_; }

  // Summary prints one line per comparison whose benchmarks all ran.
  void Summary() const {
    std::printf("\n");
    Compare("BenchFilter Filter", "BM_FilterDirect",
            {{"C ABI descriptor", "BM_FilterAbiDescriptor"},
             {"framework per-node path", "BM_FilterFramework"}});
    Compare("BenchFilter Filter on a run of 64 nodes", "BM_FilterDirectRun",
            {{"C ABI filter_batch", "BM_FilterAbiBatch"},
             {"framework batched path", "BM_FilterFrameworkBatch"}},
            "per run; divide by 64 for per node");
    Compare("NodeResourcesFit Filter", "BM_NodeResourcesFitDirect",
            {{"framework per-node path", "BM_NodeResourcesFitFramework"}});
    for (const char* n : {"5000", "50000"}) {
      auto it = real_ns_.find(std::string("BM_SnapshotUpdateOneNode/") + n + "/manual_time");
      if (it == real_ns_.end()) continue;
      std::printf("snapshot update after one node changed, %s nodes: %.0f ns\n", n, it->second);
    }
  }

 private:
  void Compare(const char* what, const std::string& base,
               const std::vector<std::pair<const char*, std::string>>& others,
               const char* unit = "per call") const {
    auto it = cpu_ns_.find(base);
    if (it == cpu_ns_.end() || it->second <= 0) return;
    std::printf("%s (CPU time %s): direct call %.2f ns", what, unit, it->second);
    for (const auto& [label, name] : others) {
      auto o = cpu_ns_.find(name);
      if (o == cpu_ns_.end()) continue;
      std::printf("; %s %.2f ns (%.2fx direct)", label, o->second, o->second / it->second);
    }
    std::printf("\n");
  }

  bool failed_ = false;
  std::map<std::string, double> cpu_ns_;
  std::map<std::string, double> real_ns_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Colour only on a terminal (a reporter made here does not read --benchmark_color).
  RatioReporter reporter(isatty(STDOUT_FILENO) != 0 ? benchmark::ConsoleReporter::OO_ColorTabular
                                                    : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.Summary();
  benchmark::Shutdown();
  return reporter.failed() ? 1 : 0;
}
