#include "host/api/config_watcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "host/framework/testing/temp_dir.h"

namespace schedhost::api {
namespace {

using namespace std::chrono_literals;
using framework::testing::TempDir;

constexpr auto kDebounce = 50ms;

void Write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Seen records what the file held each time the callback ran.
class Seen {
 public:
  void Add(std::string content) {
    std::lock_guard lock(mu_);
    contents_.push_back(std::move(content));
  }
  std::vector<std::string> Get() {
    std::lock_guard lock(mu_);
    return contents_;
  }
  // WaitFor polls until `n` calls were seen (generous: the machine may be loaded).
  bool WaitFor(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Get().size() >= n) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> contents_;
};

// Quiet waits long enough that a callback the watcher was going to run has run.
void Quiet() { std::this_thread::sleep_for(kDebounce * 8); }

TEST(ConfigWatcherTest, ABurstOfWritesIsOneChangeSeenWhenItSettles) {
  TempDir dir;
  const auto file = dir.path() / "schedhost.toml";
  Write(file, "a = 1\n");
  Seen seen;
  ConfigWatcher watcher(file, kDebounce, [&] { seen.Add(Read(file)); });
  for (int i = 2; i <= 6; ++i) Write(file, "a = " + std::to_string(i) + "\n");
  ASSERT_TRUE(seen.WaitFor(1));
  Quiet();
  ASSERT_EQ(seen.Get().size(), 1u);
  EXPECT_EQ(seen.Get()[0], "a = 6\n");
}

TEST(ConfigWatcherTest, SameContentOrAnotherFileIsNoChange) {
  TempDir dir;
  const auto file = dir.path() / "schedhost.toml";
  Write(file, "a = 1\n");
  Seen seen;
  ConfigWatcher watcher(file, kDebounce, [&] { seen.Add(Read(file)); });
  Write(file, "a = 1\n");                   // rewritten, same bytes
  Write(dir.path() / "other.toml", "b\n");  // a neighbour
  Quiet();
  EXPECT_TRUE(seen.Get().empty());
  // The watcher is alive: a real change is seen.
  Write(file, "a = 2\n");
  ASSERT_TRUE(seen.WaitFor(1));
  EXPECT_EQ(seen.Get()[0], "a = 2\n");
}

TEST(ConfigWatcherTest, RenameOverTheFileIsAChange) {
  TempDir dir;
  const auto file = dir.path() / "schedhost.toml";
  Write(file, "old\n");
  Seen seen;
  ConfigWatcher watcher(file, kDebounce, [&] { seen.Add(Read(file)); });
  Write(dir.path() / ".schedhost.toml.tmp", "new\n");
  std::filesystem::rename(dir.path() / ".schedhost.toml.tmp", file);
  ASSERT_TRUE(seen.WaitFor(1));
  EXPECT_EQ(seen.Get()[0], "new\n");
}

// A Kubernetes ConfigMap volume: the file is a symlink through `..data`, and an update points
// `..data` at a new directory by renaming a fresh symlink over it.
TEST(ConfigWatcherTest, ConfigMapSymlinkSwapIsAChange) {
  TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directory(dir.path() / "v1");
  Write(dir.path() / "v1" / "schedhost.toml", "v1\n");
  fs::create_directory_symlink("v1", dir.path() / "..data");
  fs::create_symlink("..data/schedhost.toml", dir.path() / "schedhost.toml");
  const auto file = dir.path() / "schedhost.toml";
  Seen seen;
  ConfigWatcher watcher(file, kDebounce, [&] { seen.Add(Read(file)); });
  fs::create_directory(dir.path() / "v2");
  Write(dir.path() / "v2" / "schedhost.toml", "v2\n");
  fs::create_directory_symlink("v2", dir.path() / "..data_tmp");
  fs::rename(dir.path() / "..data_tmp", dir.path() / "..data");
  ASSERT_TRUE(seen.WaitFor(1));
  EXPECT_EQ(seen.Get()[0], "v2\n");
}

TEST(ConfigWatcherTest, DeletedThenRecreatedFileIsOneChange) {
  TempDir dir;
  const auto file = dir.path() / "schedhost.toml";
  Write(file, "one\n");
  Seen seen;
  ConfigWatcher watcher(file, kDebounce, [&] { seen.Add(Read(file)); });
  std::filesystem::remove(file);
  Quiet();  // nothing to read: no call
  EXPECT_TRUE(seen.Get().empty());
  Write(file, "two\n");
  ASSERT_TRUE(seen.WaitFor(1));
  Quiet();
  ASSERT_EQ(seen.Get().size(), 1u);
  EXPECT_EQ(seen.Get()[0], "two\n");
}

TEST(ConfigWatcherTest, ACallbackThatThrowsDoesNotEndTheWatch) {
  TempDir dir;
  const auto file = dir.path() / "schedhost.toml";
  Write(file, "0\n");
  std::atomic<int> calls{0};
  ConfigWatcher watcher(file, kDebounce, [&] {
    ++calls;
    throw std::runtime_error("reload blew up");
  });
  Write(file, "1\n");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (calls.load() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  Write(file, "2\n");
  while (calls.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(calls.load(), 2);
}

TEST(ConfigWatcherTest, StopEndsTheWatchAndIsIdempotent) {
  TempDir dir;
  const auto file = dir.path() / "schedhost.toml";
  Write(file, "0\n");
  std::atomic<int> calls{0};
  ConfigWatcher watcher(file, kDebounce, [&] { ++calls; });
  watcher.Stop();
  watcher.Stop();
  Write(file, "1\n");
  Quiet();
  EXPECT_EQ(calls.load(), 0);
}

TEST(ConfigWatcherTest, AMissingDirectoryIsRefusedWithItsName) {
  TempDir dir;
  const auto file = dir.path() / "nowhere" / "schedhost.toml";
  try {
    ConfigWatcher watcher(file, kDebounce, [] {});
    FAIL() << "watching a missing directory was accepted";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "nowhere").string()), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace schedhost::api
