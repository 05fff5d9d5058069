#include "tests/bench/peer.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace schedhost::bench {
namespace {

// The figures both sides report, by their JSON names.
const std::array<const char*, 6> kFigures = {"pods_per_second", "nominated_or_bound_per_second",
                                             "peak_rss_mib",    "seconds",
                                             "p99_ms",          "first_binding_ms"};

// Capture runs argv with stdout into the returned string (stderr passes through, so a side's
// progress and errors reach the user as they happen). posix_spawn rather than Boost.Process:
// the latter would bring Boost.Filesystem in for this one call.
std::string Capture(const std::vector<std::string>& args, int* status) {
  std::array<int, 2> out{};
  if (::pipe2(out.data(), O_CLOEXEC) != 0) {
    throw PeerError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw PeerError(args[0] + ": cannot start: " + std::strerror(rc));
  }
  std::string text;
  std::array<char, 65536> buf{};
  for (;;) {
    const ssize_t n = ::read(out[0], buf.data(), buf.size());
    if (n > 0) {
      text.append(buf.data(), static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(out[0]);
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return text;
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// RunSide runs one side and returns its JSON. Exit status 3 (measured pods left unbound) is
// accepted when `unbound_ok` and the side printed its figures: upstream's asynchronous
// preemption can park a preemptor until its 5-minute flush, which a run does not wait for.
nlohmann::json RunSide(const std::vector<std::string>& args, const std::string& what,
                       bool unbound_ok) {
  int status = 0;
  const std::string out = Capture(args, &status);
  const bool unbound = WIFEXITED(status) && WEXITSTATUS(status) == 3;
  if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && !(unbound && unbound_ok))) {
    throw PeerError(what + " failed (" + Describe(status) + "); its stderr is above");
  }
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw PeerError(what + " printed no JSON: " + e.what());
  }
}

double Number(const nlohmann::json& j, const char* key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end()) throw PeerError(what + ": no \"" + key + "\" in its JSON");
  // schedhost-bench reports {min, median, max} per figure; one run makes them equal.
  if (it->is_object()) return it->at("median").get<double>();
  return it->get<double>();
}

struct Spread {
  double min = 0;
  double median = 0;
  double max = 0;
};

Spread Summarise(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {v.front(), n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.back()};
}

double Median(const std::map<std::string, std::vector<double>>& side, const char* figure) {
  const auto it = side.find(figure);
  return it == side.end() ? 0 : Summarise(it->second).median;
}

// Ratio is a ÷ b, or null when either is missing (0: the figure does not apply).
nlohmann::json Ratio(double a, double b) {
  if (a <= 0 || b <= 0) return nullptr;
  return a / b;
}

std::string Fixed(double v, int digits) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", digits, v);
  return buf.data();
}

std::string RatioText(const nlohmann::json& r) {
  return r.is_null() ? "-" : Fixed(r.get<double>(), 1) + "x";
}

}  // namespace

std::filesystem::path DefaultPeer(const std::filesystem::path& self) {
  // <build>/bin/schedhost-bench and <build>/upstream/bin/upstream-bench.
  return self.parent_path().parent_path() / "upstream" / "bin" / "upstream-bench";
}

std::vector<PeerResult> RunPeer(const std::vector<std::filesystem::path>& workloads,
                                const PeerOptions& options) {
  if (!std::filesystem::exists(options.peer)) {
    throw PeerError("no upstream-bench at " + options.peer.string() +
                    " (build the upstream_binaries target, which needs Go, or pass --peer-bin)");
  }
  const std::string scale = Fixed(options.scale, 6);
  const std::string timeout = std::to_string(options.timeout_s);
  std::vector<PeerResult> results;
  for (const std::filesystem::path& w : workloads) {
    PeerResult r;
    r.path = w;
    r.scale = options.scale;
    for (int i = 0; i < options.repeat; ++i) {
      std::vector<std::string> self = {options.self.string(), "--json", "--scale", scale,
                                       "--timeout",           timeout};
      std::vector<std::string> peer = {options.peer.string(), "--json", "--scale", scale,
                                       "--timeout",           timeout};
      if (options.quiet) {
        self.emplace_back("-q");
        peer.emplace_back("-q");
      }
      self.insert(self.end(), options.self_args.begin(), options.self_args.end());
      self.push_back(w.string());
      peer.push_back(w.string());

      const std::string run = " run " + std::to_string(i + 1) + " of " + w.stem().string();
      nlohmann::json mine = RunSide(self, "schedhost" + run, false);
      if (!mine.contains("workloads") || mine["workloads"].size() != 1) {
        throw PeerError("schedhost" + run + ": expected one workload in its JSON");
      }
      mine = mine["workloads"][0];
      nlohmann::json theirs = RunSide(peer, "upstream" + run, true);
      const auto measured = theirs.value("measured_pods", int64_t{0});
      const auto bound = theirs.value("measured_bound", int64_t{0});
      if (bound < measured) r.upstream_unbound.push_back(measured - bound);
      r.name = mine.value("name", w.stem().string());
      for (const char* f : kFigures) {
        r.schedhost[f].push_back(Number(mine, f, "schedhost" + run));
        r.upstream[f].push_back(Number(theirs, f, "upstream" + run));
      }
      r.upstream_version = theirs.value("upstream_version", "");
      r.schedhost_runs.push_back(std::move(mine));
      r.upstream_runs.push_back(std::move(theirs));
    }
    results.push_back(std::move(r));
  }
  return results;
}

std::string FormatPeerTable(const std::vector<PeerResult>& results) {
  std::string out;
  out +=
      "WORKLOAD               SCHEDHOST POD/S  UPSTREAM POD/S   RATIO   NOM|BOUND/S RATIO   "
      "RSS MiB (ours/theirs)  FIRST BINDING ms (ours/theirs)\n";
  for (const PeerResult& r : results) {
    const double mine = Median(r.schedhost, "pods_per_second");
    const double theirs = Median(r.upstream, "pods_per_second");
    const double nob_mine = Median(r.schedhost, "nominated_or_bound_per_second");
    const double nob_theirs = Median(r.upstream, "nominated_or_bound_per_second");
    const double rss_mine = Median(r.schedhost, "peak_rss_mib");
    const double rss_theirs = Median(r.upstream, "peak_rss_mib");
    std::string line = r.name;
    line.resize(std::max<size_t>(line.size() + 1, 23), ' ');
    std::string a = Fixed(mine, 0);
    a.resize(17, ' ');
    std::string b = Fixed(theirs, 0);
    b.resize(17, ' ');
    std::string c = RatioText(Ratio(mine, theirs));
    c.resize(8, ' ');
    std::string d = RatioText(Ratio(nob_mine, nob_theirs));
    d.resize(20, ' ');
    std::string rss = Fixed(rss_mine, 0) + " / " + Fixed(rss_theirs, 0);
    rss.resize(std::max<size_t>(rss.size() + 1, 23), ' ');
    out += line + a + b + c + d + rss + Fixed(Median(r.schedhost, "first_binding_ms"), 0) + " / " +
           Fixed(Median(r.upstream, "first_binding_ms"), 0) + "\n";
    for (int64_t n : r.upstream_unbound) {
      out += "  (an upstream run of " + r.name + " left " + std::to_string(n) +
             " measured pod(s) unbound at its end)\n";
    }
  }
  if (!results.empty()) {
    out += "(medians of " + std::to_string(results.front().schedhost_runs.size()) +
           " run(s) per side, one run per process; upstream kube-scheduler " +
           (results.front().upstream_version.empty() ? std::string("?")
                                                     : results.front().upstream_version) +
           " in-process)\n";
  }
  return out;
}

std::string FormatPeerJson(const std::vector<PeerResult>& results) {
  nlohmann::json workloads = nlohmann::json::array();
  for (const PeerResult& r : results) {
    nlohmann::json w = {{"name", r.name},
                        {"path", r.path.string()},
                        {"scale", r.scale},
                        {"runs", r.schedhost_runs.size()}};
    nlohmann::json upstream = {{"version", r.upstream_version}};
    for (const char* f : kFigures) {
      const Spread mine = Summarise(r.schedhost.at(f));
      const Spread theirs = Summarise(r.upstream.at(f));
      w[f] = {{"min", mine.min}, {"median", mine.median}, {"max", mine.max}};
      upstream[f] = {{"min", theirs.min}, {"median", theirs.median}, {"max", theirs.max}};
    }
    w["upstream"] = std::move(upstream);
    w["ratio"] = {
        {"pods_per_second",
         Ratio(Median(r.schedhost, "pods_per_second"), Median(r.upstream, "pods_per_second"))},
        {"nominated_or_bound_per_second",
         Ratio(Median(r.schedhost, "nominated_or_bound_per_second"),
               Median(r.upstream, "nominated_or_bound_per_second"))},
        // Memory the other way round: how many times less schedhost needs.
        {"memory", Ratio(Median(r.upstream, "peak_rss_mib"), Median(r.schedhost, "peak_rss_mib"))}};
    w["upstream_unbound"] = r.upstream_unbound;
    w["schedhost_runs"] = r.schedhost_runs;
    w["upstream_runs"] = r.upstream_runs;
    workloads.push_back(std::move(w));
  }
  return nlohmann::json{{"workloads", std::move(workloads)}}.dump(2) + "\n";
}

}  // namespace schedhost::bench
