// RunCommand: run a shell command from a test and collect what it printed, for tests that drive
// the built binaries (schedctl, schedhostd) the way a user would.
//
//   CommandResult r = RunCommand((BinDir() / "schedctl").string() + " simulate -f x.yaml 2>&1");
//   ASSERT_EQ(r.exit_code, 0) << r.output;
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <string>

#include "host/framework/testing/harness.h"

namespace schedhost::framework::testing {

/// CommandResult is how a command ended and its standard output.
struct CommandResult {
  int exit_code = -1;  // -1 when it could not start or did not exit normally
  std::string output;
};

/// RunCommand runs `cmd` with /bin/sh and waits for it (add `2>&1` to collect stderr too).
inline CommandResult RunCommand(const std::string& cmd) {
  CommandResult result;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return result;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) result.output.append(buf.data(), n);
  const int status = ::pclose(f);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

/// BinDir is the build tree's bin/ (schedctl, schedhostd), beside the plugin directory.
inline std::filesystem::path BinDir() {
  return std::filesystem::path(PluginDir()).parent_path() / "bin";
}

}  // namespace schedhost::framework::testing
