#include "tests/bench/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

namespace schedhost::bench {
namespace {

struct Spread {
  double min = 0;
  double median = 0;
  double max = 0;
};

Spread Summarise(const std::vector<RunResult>& runs,
                 const std::function<double(const RunResult&)>& f) {
  std::vector<double> v;
  v.reserve(runs.size());
  for (const RunResult& r : runs) v.push_back(f(r));
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {v.front(), median, v.back()};
}

nlohmann::json ToJson(const Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

// Figures lists the per-run figures reported as spreads, by JSON name.
const std::vector<std::pair<std::string, std::function<double(const RunResult&)>>>& Figures() {
  static const std::vector<std::pair<std::string, std::function<double(const RunResult&)>>>
      kFigures = {
          {"pods_per_second", [](const RunResult& r) { return r.pods_per_second; }},
          {"seconds", [](const RunResult& r) { return r.seconds; }},
          {"p50_ms", [](const RunResult& r) { return r.p50_ms; }},
          {"p90_ms", [](const RunResult& r) { return r.p90_ms; }},
          {"p99_ms", [](const RunResult& r) { return r.p99_ms; }},
          {"attempts", [](const RunResult& r) { return static_cast<double>(r.attempts); }},
          {"peak_rss_mib",
           [](const RunResult& r) { return static_cast<double>(r.peak_rss_kib) / 1024; }},
          {"bytes_per_node",
           [](const RunResult& r) { return r.node_bytes + r.snapshot_node_bytes; }},
          {"snapshot_bytes_per_node", [](const RunResult& r) { return r.snapshot_node_bytes; }},
          {"bytes_per_pending_pod", [](const RunResult& r) { return r.pending_pod_bytes; }},
          {"max_gap_ms", [](const RunResult& r) { return r.max_gap_ms; }},
          {"first_binding_ms", [](const RunResult& r) { return r.first_binding_ms; }},
          {"pending_pod_object_bytes",
           [](const RunResult& r) { return r.pending_pod_object_bytes; }},
          {"nominated_or_bound_per_second",
           [](const RunResult& r) { return r.nominated_or_bound_per_second; }},
      };
  return kFigures;
}

// Shares returns each extension point's time as a share of the scheduling-attempt time, summed
// over the runs.
std::map<std::string, double> Shares(const std::vector<RunResult>& runs) {
  double cycle = 0;
  std::map<std::string, double> points;
  for (const RunResult& r : runs) {
    cycle += r.cycle_seconds;
    for (const auto& [point, seconds] : r.point_seconds) points[point] += seconds;
  }
  std::map<std::string, double> shares;
  if (cycle <= 0) return shares;
  for (const auto& [point, seconds] : points) shares[point] = seconds / cycle;
  return shares;
}

// FusedRate is the fused reference's pods/s over its runs.
Spread FusedRate(const std::vector<FusedResult>& fused) {
  std::vector<RunResult> as_runs(fused.size());
  for (size_t i = 0; i < fused.size(); ++i) as_runs[i].pods_per_second = fused[i].pods_per_second;
  return Summarise(as_runs, [](const RunResult& r) { return r.pods_per_second; });
}

// Ratio is the framework's median pods/s over the fused reference's (0 when either is absent).
double Ratio(const WorkloadRuns& w) {
  if (w.runs.empty() || w.fused.empty()) return 0;
  const double fused = FusedRate(w.fused).median;
  if (fused <= 0) return 0;
  return Summarise(w.runs, [](const RunResult& r) { return r.pods_per_second; }).median / fused;
}

}  // namespace

std::string FormatTable(const std::vector<WorkloadRuns>& workloads) {
  std::string out;
  std::array<char, 256> line{};
  const bool any_runs = std::any_of(workloads.begin(), workloads.end(),
                                    [](const WorkloadRuns& w) { return !w.runs.empty(); });
  if (any_runs) {
    std::snprintf(line.data(), line.size(), "%-22s %6s %7s %7s %19s %8s %8s %8s %9s %8s %7s %9s\n",
                  "WORKLOAD", "NODES", "PODS", "BOUND", "PODS/S (MIN..MAX)", "P50 MS", "P90 MS",
                  "P99 MS", "ATTEMPTS", "RSS MIB", "B/NODE", "B/PENDING");
    out += line.data();
  }
  for (const WorkloadRuns& w : workloads) {
    if (w.runs.empty()) continue;
    const RunResult& first = w.runs.front();
    auto med = [&](size_t i) { return Summarise(w.runs, Figures()[i].second); };
    const Spread rate = med(0);
    std::array<char, 64> rate_text{};
    if (w.runs.size() > 1) {
      std::snprintf(rate_text.data(), rate_text.size(), "%.0f (%.0f..%.0f)", rate.median, rate.min,
                    rate.max);
    } else {
      std::snprintf(rate_text.data(), rate_text.size(), "%.0f", rate.median);
    }
    size_t bound = first.measured_bound;
    for (const RunResult& r : w.runs) bound = std::min(bound, r.measured_bound);
    // Bytes per node / per pending pod: medians, "-" where the workload does not give them.
    auto bytes = [&](size_t i) {
      const double v = med(i).median;
      return v > 0 ? std::to_string(std::llround(v)) : std::string("-");
    };
    std::snprintf(line.data(), line.size(),
                  "%-22s %6zu %7zu %7zu %19s %8.1f %8.1f %8.1f %9.0f %8.0f %7s %9s\n",
                  w.name.c_str(), first.nodes, first.measured_pods, bound, rate_text.data(),
                  med(2).median, med(3).median, med(4).median, med(5).median, med(6).max,
                  bytes(7).c_str(), bytes(9).c_str());
    out += line.data();
  }
  for (const WorkloadRuns& w : workloads) {
    if (w.runs.empty() || w.runs.front().measured_nominated == 0) continue;
    const Spread rate =
        Summarise(w.runs, [](const RunResult& r) { return r.nominated_or_bound_per_second; });
    std::snprintf(line.data(), line.size(),
                  "%s nominated or bound: %.0f pods/s (%.0f..%.0f); %zu of %zu measured pods "
                  "nominated before binding\n",
                  w.name.c_str(), rate.median, rate.min, rate.max,
                  w.runs.front().measured_nominated, w.runs.front().measured_pods);
    out += line.data();
  }
  for (const WorkloadRuns& w : workloads) {
    if (w.runs.empty() || w.runs.front().pending_pods == 0) continue;
    const double all =
        Summarise(w.runs, [](const RunResult& r) { return r.pending_pod_bytes; }).median;
    const double object =
        Summarise(w.runs, [](const RunResult& r) { return r.pending_pod_object_bytes; }).median;
    std::snprintf(line.data(), line.size(),
                  "%s per pending pod: %.0f bytes = the pod object %.0f + the host's "
                  "bookkeeping %.0f\n",
                  w.name.c_str(), all, object, all - object);
    out += line.data();
  }
  for (const WorkloadRuns& w : workloads) {
    const std::map<std::string, double> shares = Shares(w.runs);
    if (shares.empty()) continue;
    out += w.name + " time per extension point (share of scheduling-attempt time):";
    for (const auto& [point, share] : shares) {
      std::snprintf(line.data(), line.size(), " %s %.1f%%", point.c_str(), share * 100);
      out += line.data();
    }
    out += "\n";
  }
  for (const WorkloadRuns& w : workloads) {
    if (w.runs.empty() || w.runs.front().swaps == 0) continue;
    // One line per run: the swap figures do not summarise across runs usefully.
    for (const RunResult& r : w.runs) {
      std::snprintf(line.data(), line.size(),
                    "%s swaps: %zu while measuring; building a set %.1f ms median (max %.1f), "
                    "ReplaceProfiles %.2f ms median (max %.2f); longest gap between bindings "
                    "%.1f ms\n",
                    w.name.c_str(), r.swaps, r.swap_build_ms_median, r.swap_build_ms_max,
                    r.swap_ms_median, r.swap_ms_max, r.max_gap_ms);
      out += line.data();
    }
  }
  for (const WorkloadRuns& w : workloads) {
    if (w.runs.empty() || !w.runs.front().shadowed) continue;
    // One line per run, as the swaps: what the shadows compared within their budget.
    for (const RunResult& r : w.runs) {
      std::snprintf(line.data(), line.size(),
                    "%s shadows: %llu pods compared, %llu skipped, %llu disagreements, "
                    "%.1f ms of CPU\n",
                    w.name.c_str(), static_cast<unsigned long long>(r.shadow_compared),
                    static_cast<unsigned long long>(r.shadow_skipped),
                    static_cast<unsigned long long>(r.shadow_disagreements),
                    r.shadow_cpu_seconds * 1e3);
      out += line.data();
    }
  }
  for (const WorkloadRuns& w : workloads) {
    if (w.fused.empty()) continue;
    const Spread rate = FusedRate(w.fused);
    size_t bound = w.fused.front().measured_bound;
    for (const FusedResult& f : w.fused) bound = std::min(bound, f.measured_bound);
    std::snprintf(line.data(), line.size(),
                  "%s fused reference: %.0f pods/s (%.0f..%.0f), %zu of %zu measured pods bound",
                  w.name.c_str(), rate.median, rate.min, rate.max, bound,
                  w.fused.front().measured_pods);
    out += line.data();
    if (const double ratio = Ratio(w); ratio > 0) {
      std::snprintf(line.data(), line.size(), "; framework/fused = %.4g (%.2f%%)", ratio,
                    ratio * 100);
      out += line.data();
    }
    out += "\n";
  }
  return out;
}

std::string FormatJson(const std::vector<WorkloadRuns>& workloads) {
  nlohmann::json all = nlohmann::json::array();
  for (const WorkloadRuns& w : workloads) {
    nlohmann::json j;
    j["name"] = w.name;
    j["path"] = w.path;
    j["scale"] = w.scale;
    if (!w.runs.empty()) {
      j["nodes"] = w.runs.front().nodes;
      j["unmeasured_pods"] = w.runs.front().unmeasured_pods;
      j["measured_pods"] = w.runs.front().measured_pods;
    }
    size_t min_bound = w.runs.empty() ? 0 : w.runs.front().measured_bound;
    nlohmann::json runs = nlohmann::json::array();
    for (const RunResult& r : w.runs) {
      min_bound = std::min(min_bound, r.measured_bound);
      nlohmann::json run;
      run["measured_bound"] = r.measured_bound;
      for (const auto& [name, f] : Figures()) run[name] = f(r);
      run["attempts_total"] = r.attempts_total;
      run["cycle_seconds"] = r.cycle_seconds;
      run["extension_point_seconds"] = r.point_seconds;
      if (r.swaps > 0) {
        run["swaps"] = r.swaps;
        run["swap_build_ms"] = {{"median", r.swap_build_ms_median}, {"max", r.swap_build_ms_max}};
        run["swap_ms"] = {{"median", r.swap_ms_median}, {"max", r.swap_ms_max}};
      }
      if (r.shadowed) {
        run["shadow"] = {{"compared", r.shadow_compared},
                         {"skipped", r.shadow_skipped},
                         {"disagreements", r.shadow_disagreements},
                         {"cpu_seconds", r.shadow_cpu_seconds}};
      }
      runs.push_back(std::move(run));
    }
    if (!w.runs.empty()) {  // empty with --reference-only
      j["measured_bound_min"] = min_bound;
      for (const auto& [name, f] : Figures()) j[name] = ToJson(Summarise(w.runs, f));
      j["extension_point_share"] = Shares(w.runs);
      j["runs"] = std::move(runs);
    }
    if (!w.fused.empty()) {
      nlohmann::json fused;
      nlohmann::json fused_runs = nlohmann::json::array();
      size_t fused_bound = w.fused.front().measured_bound;
      for (const FusedResult& f : w.fused) {
        fused_bound = std::min(fused_bound, f.measured_bound);
        fused_runs.push_back({{"pods_per_second", f.pods_per_second},
                              {"seconds", f.seconds},
                              {"measured_bound", f.measured_bound},
                              {"unmeasured_bound", f.unmeasured_bound},
                              {"nodes_examined", f.nodes_examined},
                              {"nodes_scored", f.nodes_scored}});
      }
      fused["measured_pods"] = w.fused.front().measured_pods;
      fused["measured_bound_min"] = fused_bound;
      fused["pods_per_second"] = ToJson(FusedRate(w.fused));
      fused["runs"] = std::move(fused_runs);
      j["fused_reference"] = std::move(fused);
      if (const double ratio = Ratio(w); ratio > 0) j["framework_to_fused"] = ratio;
    }
    all.push_back(std::move(j));
  }
  return nlohmann::json{{"workloads", std::move(all)}}.dump(2) + "\n";
}

}  // namespace schedhost::bench
