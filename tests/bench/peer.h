// Side by side with upstream (--peer upstream): every run of a workload is a process of its own
// on both sides, as a user runs a scheduler — schedhost-bench itself without --peer, then
// tests/upstream's upstream-bench (kube-scheduler v1.37.2 in-process) — interleaved, the same
// number of times; the figures of both and their ratios are reported.
//
//   PeerOptions o{.self = exe, .peer = upstream_bench, .repeat = 3};
//   std::vector<PeerResult> r = RunPeer({"scheduling_basic"}, o);
//   std::cout << FormatPeerTable(r);
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

namespace schedhost::bench {

/// PeerError is a side that could not run or reported nothing usable.
class PeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// PeerOptions say how to run both sides.
struct PeerOptions {
  std::filesystem::path self;  // this schedhost-bench
  std::filesystem::path peer;  // upstream-bench
  int repeat = 1;
  double scale = 1;
  int timeout_s = 600;
  bool quiet = false;
  /// self_args are passed to every schedhost run (--config, --plugin-dir, ...).
  std::vector<std::string> self_args;
};

/// PeerResult is one workload's runs on both sides. Each map holds per figure the values of
/// the runs, in run order: pods_per_second, nominated_or_bound_per_second, peak_rss_mib,
/// seconds, p99_ms.
struct PeerResult {
  std::string name;
  std::filesystem::path path;
  double scale = 1;
  std::map<std::string, std::vector<double>> schedhost;
  std::map<std::string, std::vector<double>> upstream;
  std::string upstream_version;
  /// upstream_unbound holds, for each upstream run that ended with measured pods unbound (its
  /// asynchronous preemption can park a preemptor until a flush the run does not wait for),
  /// how many; schedhost runs must bind every measured pod.
  std::vector<int64_t> upstream_unbound;
  nlohmann::json schedhost_runs = nlohmann::json::array();  // each run's own JSON
  nlohmann::json upstream_runs = nlohmann::json::array();
};

/// DefaultPeer is upstream-bench of the build tree schedhost-bench belongs to.
std::filesystem::path DefaultPeer(const std::filesystem::path& self);

/// RunPeer runs every workload file `repeat` times on each side, alternating; throws PeerError
/// when a run fails (its exit status and the end of its stderr) or leaves measured pods unbound.
std::vector<PeerResult> RunPeer(const std::vector<std::filesystem::path>& workloads,
                                const PeerOptions& options);

/// FormatPeerTable renders one line per workload: both sides' median pods/s, nominated or bound
/// per second where either side nominated, peak RSS, and the ratios schedhost ÷ upstream
/// (upstream ÷ schedhost for memory).
std::string FormatPeerTable(const std::vector<PeerResult>& results);

/// FormatPeerJson renders {"workloads": [{name, path, scale, runs, <figure>: {min, median, max},
/// upstream: {version, <figure>: {...}}, ratio: {pods_per_second, nominated_or_bound_per_second,
/// memory}, schedhost_runs, upstream_runs}]}.
std::string FormatPeerJson(const std::vector<PeerResult>& results);

}  // namespace schedhost::bench
