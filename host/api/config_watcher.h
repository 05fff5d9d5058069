#pragma once
// ConfigWatcher runs a callback when the content of one file changes, for `[host] watch_config`.
//
// It watches the file's directory with inotify rather than the file itself, because the ways
// operators publish a config replace the inode: an editor writes a temporary file and renames
// it over the old one, and a Kubernetes ConfigMap volume swaps a `..data` symlink. Any event in
// the directory starts (or extends) a quiet period, `debounce`; when it ends the file is read
// and the callback runs only if its bytes differ from the last content seen. So a burst of
// writes is one reload, a touch or an unrelated file is none, and a file caught half-written
// mid-burst is read again once the burst is over. The callback runs on the watcher's thread.
//
//   ConfigWatcher watcher(path, std::chrono::milliseconds(500), [&] { host.Reload(); });

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace schedhost::api {

/// ConfigWatcher calls `on_change` after the content of `file` changed and then stayed the same
/// for `debounce`. Construction starts watching; destruction (or Stop) ends it.
class ConfigWatcher {
 public:
  /// The content `file` has now is the baseline: only a later, different content triggers
  /// `on_change`. Throws std::system_error when inotify cannot watch the file's directory.
  ConfigWatcher(const std::filesystem::path& file, std::chrono::milliseconds debounce,
                std::function<void()> on_change);
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

  /// Stop ends the watch and joins the thread; a callback under way finishes first. Idempotent;
  /// must not be called from the callback.
  void Stop();

 private:
  void Run();
  // ContentChanged reads the file and says whether it differs from the last content seen (and
  // remembers it); an unreadable file (mid-rename, deleted) counts as unchanged.
  bool ContentChanged();

  std::filesystem::path file_;
  std::chrono::milliseconds debounce_;
  std::function<void()> on_change_;
  std::string content_;
  bool have_content_ = false;
  int inotify_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd Stop writes to wake the thread
  std::thread thread_;
};

}  // namespace schedhost::api
