// TempDir: a fresh scratch directory for one test, removed with everything in it when the test
// ends (also when an assertion returns early).
//
//   TempDir dir;
//   std::ofstream(dir.path() / "schedhost.toml") << "[api]\n...";
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace schedhost::framework::testing {

/// TempDir is a directory made with mkdtemp under the system temp directory.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "schedhost-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// path returns the directory.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace schedhost::framework::testing
