// schedhost-bench: runs scheduler_perf-shaped workloads against the host in-process and reports
// throughput, latency, attempts, peak RSS and time per extension point (tests/bench/README.md).
//
//   schedhost-bench scheduling_basic                   # a table
//   schedhost-bench --scale 0.1 --repeat 3 --json scheduling_basic topology_spreading
//   schedhost-bench --reference fused scheduling_basic  # also the hand-fused loop, and the ratio
//   schedhost-bench --peer upstream scheduling_basic    # and upstream kube-scheduler, side by side
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "host/config/host_config.h"
#include "host/scheduler/profile_set.h"
#include "tests/bench/fused_reference.h"
#include "tests/bench/peer.h"
#include "tests/bench/report.h"
#include "tests/bench/runner.h"
#include "tests/bench/workload.h"

namespace {

std::filesystem::path Exe(const char* argv0) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(argv0) : self;
}

// Resolve maps a workload argument to a file: a path as given when it exists, else
// `<workload_dir>/<name>.toml`.
std::filesystem::path Resolve(const std::string& arg, const std::filesystem::path& workload_dir) {
  std::filesystem::path p(arg);
  if (std::filesystem::exists(p)) return p;
  return workload_dir / (arg + ".toml");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedhost-bench: scheduler_perf-shaped workloads against the host in-process"};
  std::vector<std::string> names;
  double scale = 1.0;
  int repeat = 1;
  bool json = false;
  bool quiet = false;
  bool list = false;
  int timeout_s = 600;
  std::string plugin_dir;
  std::string config_path;
  std::string workload_dir = SCHEDHOST_BENCH_WORKLOAD_DIR;
  std::string reference;
  bool reference_only = false;
  app.add_option("workloads", names, "Workload names (in --workload-dir) or .toml paths");
  app.add_option("--scale", scale, "Multiply every node and pod count by this (e.g. 0.02 in CI)")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat, "Run each workload N times; report min/median/max")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--json", json, "Print JSON instead of the table");
  app.add_flag("-q,--quiet", quiet, "No progress line on stderr");
  app.add_flag("--list", list, "List the workloads in --workload-dir and exit");
  app.add_option("--timeout", timeout_s, "Seconds a barrier may wait before the run fails")
      ->check(CLI::Range(1, 86400));
  app.add_option("--plugin-dir", plugin_dir, "Builtin plugin directory (default: the build's)");
  app.add_option("--config", config_path, "Host config file (default: built-in defaults)");
  app.add_option("--workload-dir", workload_dir, "Where workload names are looked up");
  app.add_option("--reference", reference,
                 "Also run a reference: \"fused\", the hand-fused loop (scheduling_basic shapes)")
      ->check(CLI::IsMember({"fused"}));
  int max_explanations = -1;
  app.add_option("--max-explanations", max_explanations,
                 "Pods' last-cycle explanations the scheduler keeps (default: its own, 1000)")
      ->check(CLI::NonNegativeNumber);
  int swap_every_ms = 0;
  app.add_option("--swap-every", swap_every_ms,
                 "Rebuild the profiles and swap them in every MS milliseconds while measuring "
                 "(the swap-pause benchmark; 0: never)")
      ->check(CLI::Range(0, 3600000));
  app.add_flag("--reference-only", reference_only, "Run only the --reference, not the framework");
  std::string peer;
  std::string peer_bin;
  app.add_option("--peer", peer,
                 "Run every workload through \"upstream\" kube-scheduler too, each run a process "
                 "of its own on both sides, and report both with the ratios")
      ->check(CLI::IsMember({"upstream"}));
  app.add_option("--peer-bin", peer_bin,
                 "upstream-bench to run (default: the build tree's upstream/bin/upstream-bench)");
  CLI11_PARSE(app, argc, argv);
  if (reference_only && reference.empty()) {
    std::cerr << "schedhost-bench: --reference-only needs --reference fused\n";
    return 2;
  }
  if (!peer.empty() && (!reference.empty() || swap_every_ms > 0)) {
    std::cerr << "schedhost-bench: --peer runs the plain workloads; leave out --reference and "
                 "--swap-every\n";
    return 2;
  }

  if (list) {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(workload_dir)) {
      if (entry.path().extension() == ".toml") found.push_back(entry.path().stem().string());
    }
    std::sort(found.begin(), found.end());
    for (const std::string& n : found) std::cout << n << "\n";
    return 0;
  }
  if (names.empty()) {
    std::cerr << "schedhost-bench: name at least one workload (--list shows them)\n";
    return 2;
  }

  if (!peer.empty()) {
    schedhost::bench::PeerOptions po;
    po.self = Exe(argv[0]);
    po.peer =
        peer_bin.empty() ? schedhost::bench::DefaultPeer(po.self) : std::filesystem::path(peer_bin);
    po.repeat = repeat;
    po.scale = scale;
    po.timeout_s = timeout_s;
    po.quiet = quiet;
    if (!config_path.empty()) po.self_args.insert(po.self_args.end(), {"--config", config_path});
    if (!plugin_dir.empty()) po.self_args.insert(po.self_args.end(), {"--plugin-dir", plugin_dir});
    if (max_explanations >= 0) {
      po.self_args.insert(po.self_args.end(),
                          {"--max-explanations", std::to_string(max_explanations)});
    }
    std::vector<std::filesystem::path> paths;
    paths.reserve(names.size());
    for (const std::string& n : names) paths.push_back(Resolve(n, workload_dir));
    try {
      // Both sides read the same files: refuse a bad one before the first run.
      for (const auto& path : paths) schedhost::bench::LoadWorkload(path, scale);
      std::vector<schedhost::bench::PeerResult> r = schedhost::bench::RunPeer(paths, po);
      std::cout << (json ? schedhost::bench::FormatPeerJson(r)
                         : schedhost::bench::FormatPeerTable(r));
    } catch (const std::exception& e) {
      std::cerr << "schedhost-bench: --peer upstream: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }

  // stdout carries the table or the JSON; the host's log lines (a swap logs each generation
  // going live) go to stderr, and --quiet keeps only warnings and errors.
  spdlog::set_default_logger(spdlog::stderr_color_mt("schedhost-bench"));
  if (quiet) spdlog::set_level(spdlog::level::warn);

  schedhost::bench::RunOptions options;
  options.plugin_dir = plugin_dir.empty() ? schedhost::scheduler::BuiltinPluginDir(Exe(argv[0]))
                                          : std::filesystem::path(plugin_dir);
  options.config_path = config_path;
  options.barrier_timeout = std::chrono::seconds(timeout_s);
  options.progress = !quiet;
  options.swap_every = std::chrono::milliseconds(swap_every_ms);
  if (max_explanations >= 0) options.max_explanations = static_cast<size_t>(max_explanations);

  std::vector<schedhost::bench::WorkloadRuns> results;
  results.reserve(names.size());
  try {
    std::vector<schedhost::bench::Workload> workloads;
    workloads.reserve(names.size());
    for (const std::string& n : names) {
      workloads.push_back(schedhost::bench::LoadWorkload(Resolve(n, workload_dir), scale));
    }
    int32_t percentage = 0;
    if (!reference.empty()) {
      // Refuse a workload the fused loop cannot stand in for before running anything.
      for (const schedhost::bench::Workload& w : workloads) schedhost::bench::CheckFusedShape(w);
      percentage = (config_path.empty() ? schedhost::config::ParseConfig("", "(defaults)", {})
                                        : schedhost::config::LoadConfigFile(config_path))
                       .percentage_of_nodes_to_score;
    }
    for (const schedhost::bench::Workload& w : workloads) {
      schedhost::bench::WorkloadRuns runs{w.name, w.path.string(), scale, {}, {}};
      runs.runs.reserve(static_cast<size_t>(repeat));
      for (int i = 0; i < repeat && !reference_only; ++i) {
        runs.runs.push_back(schedhost::bench::RunWorkload(w, options));
      }
      for (int i = 0; i < repeat && !reference.empty(); ++i) {
        runs.fused.push_back(schedhost::bench::RunFused(w, percentage));
      }
      results.push_back(std::move(runs));
    }
  } catch (const schedhost::bench::FusedShapeError& e) {
    std::cerr << "schedhost-bench: --reference fused: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "schedhost-bench: " << e.what() << "\n";
    return 1;
  }
  std::cout << (json ? schedhost::bench::FormatJson(results)
                     : schedhost::bench::FormatTable(results));
  for (const auto& w : results) {
    for (const auto& r : w.runs) {
      if (r.measured_bound != r.measured_pods) {
        std::cerr << "schedhost-bench: " << w.name << ": " << r.measured_bound << " of "
                  << r.measured_pods << " measured pods were bound\n";
        return 3;
      }
    }
    for (const auto& f : w.fused) {
      if (f.measured_bound != f.measured_pods) {
        std::cerr << "schedhost-bench: " << w.name << ": the fused reference bound "
                  << f.measured_bound << " of " << f.measured_pods << " measured pods\n";
        return 3;
      }
    }
  }
  return 0;
}
