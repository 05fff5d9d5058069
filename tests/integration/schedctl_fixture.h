// Helpers for the schedctl integration tests: run schedctl and schedhostd from the build tree
// as subprocesses, and a fixture that serves schedhostd on a temporary Unix socket per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "host/framework/testing/command.h"
#include "host/framework/testing/temp_dir.h"

namespace schedhost::testing {

namespace fs = std::filesystem;

using framework::testing::BinDir;
// DemoCluster is config/examples/demo-cluster.yaml in the source tree.
fs::path DemoCluster();
// Lines splits `text` at newlines.
std::vector<std::string> Lines(const std::string& text);

// Result is one finished schedctl run.
struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

using framework::testing::TempDir;

// RunSchedctl runs schedctl with `args` (stdout and stderr through files in `dir`, so neither
// pipe can fill), `stdin_file` as its input when given, and SCHEDHOST_SERVER set to
// `server_env` (unset when empty).
Result RunSchedctl(const TempDir& dir, const std::vector<std::string>& args,
                   const std::string& server_env = "", const std::string& stdin_file = "");

// FreePort returns a TCP port on 127.0.0.1 nobody listened on a moment ago (0 if none).
int FreePort();

// StartSchedhostd runs schedhostd with `config` (quiet logs: warnings and errors), its output
// into the file `log` when one is given; returns its pid.
pid_t StartSchedhostd(const fs::path& config, const fs::path& log = {});
// StopSchedhostd sends SIGTERM and expects a clean exit 0.
void StopSchedhostd(pid_t pid);

// SchedctlTest runs schedhostd on a temporary socket for each test, with its state_dir in the
// test's directory and Profile() appended to its config.
class SchedctlTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override {
    if (pid_ > 0) StopSchedhostd(pid_);
  }
  // Profile is TOML appended to the daemon's config (profiles, plugin_config); none by default.
  virtual std::string Profile() { return ""; }
  // HostKeys are lines added to the config's [host] table (e.g. libraries); none by default.
  virtual std::string HostKeys() { return ""; }

  // Ctl runs schedctl against this test's server (--server first, as a global flag).
  Result Ctl(std::vector<std::string> args);
  // PodsJson lists every pod as `get pods -A -o json` prints it.
  nlohmann::json PodsJson();
  // WaitForNodes polls until every pod in `names` has spec.nodeName (30 s at most) and returns
  // the node per pod name.
  std::map<std::string, std::string> WaitForNodes(const std::set<std::string>& names);
  // PodNodes returns "namespace/name" -> node ("" while pending) for every pod.
  std::map<std::string, std::string> PodNodes();

  TempDir dir_;
  fs::path log_;  // set before SetUp: schedhostd's output goes to this file
  fs::path socket_;
  std::string server_;
  pid_t pid_ = -1;
};

}  // namespace schedhost::testing
