#include "host/api/config_watcher.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace schedhost::api {
namespace {

// kEvents are the directory events that can mean the file's content changed: written and
// closed, renamed or linked into place (editors, ConfigMap symlink swaps), removed (the next
// event brings the new one), or its attributes changed (a symlink retargeted in place).
constexpr uint32_t kEvents =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY;

// kMaxDelayFactor bounds how long a stream of writes can keep postponing the reload: after this
// many debounce periods since the first event the file is read anyway.
constexpr int kMaxDelayFactor = 10;

std::optional<std::string> ReadAll(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(out).str();
}

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

ConfigWatcher::ConfigWatcher(const std::filesystem::path& file, std::chrono::milliseconds debounce,
                             std::function<void()> on_change)
    : file_(std::filesystem::absolute(file)),
      debounce_(debounce),
      on_change_(std::move(on_change)) {
  if (std::optional<std::string> now = ReadAll(file_)) {
    content_ = std::move(*now);
    have_content_ = true;
  }
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) ThrowErrno("watch_config: inotify_init1");
  const std::filesystem::path dir = file_.parent_path();
  if (inotify_add_watch(inotify_fd_, dir.c_str(), kEvents) < 0) {
    const int saved = errno;
    close(inotify_fd_);
    errno = saved;
    ThrowErrno("watch_config: cannot watch directory " + dir.string());
  }
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    const int saved = errno;
    close(inotify_fd_);
    errno = saved;
    ThrowErrno("watch_config: eventfd");
  }
  thread_ = std::thread([this] { Run(); });
}

ConfigWatcher::~ConfigWatcher() {
  Stop();
  if (stop_fd_ >= 0) close(stop_fd_);
  if (inotify_fd_ >= 0) close(inotify_fd_);
}

void ConfigWatcher::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  // An eventfd write of 1 cannot fail short of overflow, which one Stop cannot reach.
  [[maybe_unused]] const ssize_t n = write(stop_fd_, &one, sizeof one);
  thread_.join();
}

bool ConfigWatcher::ContentChanged() {
  std::optional<std::string> now = ReadAll(file_);
  if (!now || (have_content_ && *now == content_)) return false;
  content_ = std::move(*now);
  have_content_ = true;
  return true;
}

void ConfigWatcher::Run() {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> quiet_until;  // set while a burst of events is settling
  Clock::time_point first_event{};
  alignas(inotify_event) std::array<char, 4096> buffer{};
  for (;;) {
    int timeout_ms = -1;
    if (quiet_until) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*quiet_until - Clock::now());
      timeout_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    std::array<pollfd, 2> fds{pollfd{inotify_fd_, POLLIN, 0}, pollfd{stop_fd_, POLLIN, 0}};
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      spdlog::error("watch_config: poll failed ({}); no longer watching {}",
                    std::generic_category().message(errno), file_.string());
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) != 0) {
      // Which names the events carry, or whether the queue overflowed, does not matter: the
      // content decides (see the header), so the events are only drained.
      while (read(inotify_fd_, buffer.data(), buffer.size()) > 0) {
      }
      const Clock::time_point now = Clock::now();
      if (!quiet_until) first_event = now;
      // Extend the quiet period, but never past kMaxDelayFactor periods after the first event.
      quiet_until = std::min(now + debounce_, first_event + kMaxDelayFactor * debounce_);
      continue;
    }
    if (quiet_until && Clock::now() >= *quiet_until) {
      quiet_until.reset();
      if (ContentChanged()) {
        spdlog::info("watch_config: {} changed, reloading", file_.string());
        try {
          on_change_();
        } catch (const std::exception& e) {
          spdlog::error("watch_config: reload after a change of {} failed: {}", file_.string(),
                        e.what());
        }
      }
    }
  }
}

}  // namespace schedhost::api
