// LibraryStore: shadow copies, reuse of unchanged versions, and the unload check.
#include "host/loader/library_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>

#include "host/loader/loader.h"
#include "host/loader/sha256.h"

namespace schedhost::loader {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTempMarker = ".tmp.";

std::string Errno() { return std::strerror(errno); }

std::vector<uint8_t> ReadAll(const fs::path& source) {
  const int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LoadError(source.string() + ": cannot open: " + Errno());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw LoadError(source.string() + ": not a regular file");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size()) {
    throw LoadError(source.string() + ": read " + std::to_string(done) + " of " +
                    std::to_string(bytes.size()) +
                    " bytes (was the file changed while being read?)");
  }
  return bytes;
}

// ShadowName is `<stem>-<sha256>.so`: the content picks the name, so two versions never share
// one and one version always gets the same.
std::string ShadowName(const fs::path& source, const std::string& sha256) {
  std::string stem = source.filename().string();
  if (stem.size() > 3 && stem.ends_with(".so")) stem.resize(stem.size() - 3);
  return stem + "-" + sha256 + ".so";
}

// Identity returns what tells a file's content apart without reading it: a new file renamed
// into place has a new inode, a file written in place a new mtime; nullopt when it cannot stat.
std::optional<LibraryStore::FileIdentity> Identity(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return LibraryStore::FileIdentity{
      static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
      static_cast<int64_t>(st.st_size),
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

}  // namespace

LibraryStore::LibraryStore(fs::path shadow_dir, bool pin)
    : shadow_dir_(std::move(shadow_dir)), pin_(pin) {
  std::error_code ec;
  fs::create_directories(shadow_dir_, ec);
  if (ec) {
    throw LoadError("cannot create the plugin shadow directory " + shadow_dir_.string() + ": " +
                    ec.message() + " — make [host] state_dir writable for the host");
  }
  if (::access(shadow_dir_.c_str(), W_OK | X_OK) != 0) {
    throw LoadError("the plugin shadow directory " + shadow_dir_.string() + " is not writable: " +
                    Errno() + " — make [host] state_dir writable for the host");
  }
  // One process per directory: another one's copies must not be deleted under it.
  const fs::path lock_path = shadow_dir_ / ".lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    throw LoadError("cannot create " + lock_path.string() + ": " + Errno() +
                    " — make [host] state_dir writable for the host");
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string reason = Errno();
    ::close(lock_fd_);
    throw LoadError("another process uses the plugin shadow directory " + shadow_dir_.string() +
                    " (" + reason + ") — give each schedhostd its own [host] state_dir");
  }
  // Copies a previous process left: nothing maps them any more.
  for (const auto& entry : fs::directory_iterator(shadow_dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) &&
        (name.ends_with(".so") || name.find(kTempMarker) != std::string::npos)) {
      fs::remove(entry.path(), ec);
    }
  }
}

LibraryStore::~LibraryStore() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

void LibraryStore::WriteCopy(const std::vector<uint8_t>& bytes, const fs::path& shadow,
                             const fs::path& source) {
  static std::atomic<uint64_t> counter{0};
  const fs::path temp = shadow.string() + std::string(kTempMarker) + std::to_string(::getpid()) +
                        "." + std::to_string(counter.fetch_add(1));
  auto fail = [&](const std::string& what) {
    const std::string reason = Errno();
    std::error_code ec;
    fs::remove(temp, ec);
    return LoadError(source.string() + ": cannot " + what + " its shadow copy " + temp.string() +
                     ": " + reason + " (is [host] state_dir writable and not full?)");
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw fail("create");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw fail("write");
    }
    done += static_cast<size_t>(n);
  }
  // No fsync: the copy is loaded by this process right away (the page cache is what dlopen
  // reads), its hash is checked when it is loaded, and a start deletes whatever a crash left.
  // The rename only keeps a half-written file from ever carrying the final name.
  ::close(fd);
  if (::rename(temp.c_str(), shadow.c_str()) != 0) throw fail("rename");
}

std::shared_ptr<const Library> LibraryStore::Acquire(const fs::path& source, const Opener& open) {
  // A file that is still the one hashed last time needs no reading: reloads that change nothing
  // in a library cost one stat.
  const std::optional<FileIdentity> identity = Identity(source);
  if (identity) {
    std::lock_guard lock(mu_);
    if (auto it = identities_.find(source);
        it != identities_.end() && it->second.first == *identity) {
      if (auto lib = FindLocked(shadow_dir_ / ShadowName(source, it->second.second))) return lib;
    }
  }
  const std::vector<uint8_t> bytes = ReadAll(source);
  const std::string sha256 = Sha256Hex(bytes);
  const fs::path shadow = shadow_dir_ / ShadowName(source, sha256);
  {
    std::lock_guard lock(mu_);
    // Identity was taken before reading: a file replaced meanwhile is hashed again next time.
    if (identity) identities_[source] = {*identity, sha256};
    if (auto lib = FindLocked(shadow)) return lib;  // unchanged content: the same version
    // From here until the version is recorded, a release of an older Library of the same copy
    // neither deletes the file nor mistakes our mapping for a leak.
    loading_.insert(shadow);
  }
  struct Unmark {
    LibraryStore* store;
    fs::path path;
    ~Unmark() {
      std::lock_guard lock(store->mu_);
      store->loading_.erase(store->loading_.find(path));
    }
  } unmark{this, shadow};

  std::shared_ptr<Library> inner;
  for (int attempt = 0; attempt < 2 && !inner; ++attempt) {
    std::error_code ec;
    if (attempt > 0 || !fs::exists(shadow, ec)) WriteCopy(bytes, shadow, source);
    try {
      inner = open(shadow);
    } catch (...) {
      DropUnusedCopy(shadow);
      throw;
    }
    if (inner->sha256() != sha256) {
      // The copy was changed behind our back (it is ours alone): write it again, once.
      if (attempt > 0) {
        throw LoadError(source.string() + ": its shadow copy " + shadow.string() +
                        " does not hold the file's content (sha256 " + inner->sha256() +
                        ", expected " + sha256 + ")");
      }
      inner.reset();
    }
  }
  inner->path_ = source;
  inner->loaded_path_ = shadow;

  std::lock_guard lock(mu_);
  const uint64_t id = next_id_++;
  std::weak_ptr<LibraryStore> self = weak_from_this();
  // The outer pointer's deleter drops the only reference to the Library (dlclose), then tells
  // the store, which must outlive nothing: it is held weakly.
  std::shared_ptr<const Library> outer(inner.get(), [inner, self, id](const Library*) mutable {
    inner.reset();
    if (auto store = self.lock()) store->Released(id);
  });
  Record& record = records_[id];
  record.version.source_path = source;
  record.version.loaded_path = shadow;
  record.version.sha256 = sha256;
  record.version.library = outer.get();
  record.library = outer;
  if (pin_) pinned_.push_back(outer);
  return outer;
}

std::shared_ptr<const Library> LibraryStore::FindLocked(const fs::path& shadow) const {
  for (const auto& [id, record] : records_) {
    if (record.version.loaded_path != shadow) continue;
    if (auto lib = record.library.lock()) return lib;
  }
  return nullptr;
}

void LibraryStore::DropUnusedCopy(const fs::path& shadow) {
  std::lock_guard lock(mu_);
  for (const auto& [id, record] : records_) {
    if (record.version.loaded_path == shadow) return;
  }
  if (loading_.count(shadow) > 1 || PluginRegistry::IsLoaded(shadow)) return;
  std::error_code ec;
  fs::remove(shadow, ec);
}

void LibraryStore::Released(uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return;
  LibraryVersion& version = it->second.version;
  version.library = nullptr;
  bool shared = loading_.contains(version.loaded_path);
  for (const auto& [other_id, other] : records_) {
    shared = shared || (other_id != id && other.version.loaded_path == version.loaded_path &&
                        other.version.state == LibraryVersion::State::kInUse);
  }
  if (shared) {  // another Library of the same copy is (being) loaded: the mapping is its
    records_.erase(it);
    return;
  }
  if (PluginRegistry::IsLoaded(version.loaded_path)) {
    version.state = LibraryVersion::State::kNotUnloadable;
    spdlog::warn(
        "plugin library {} (sha256 {}, loaded from {}) is still mapped after its last use was "
        "released; it cannot be unloaded and keeps its memory until the host restarts",
        version.source_path.string(), version.sha256.substr(0, 12), version.loaded_path.string());
    return;
  }
  std::error_code ec;
  fs::remove(version.loaded_path, ec);
  spdlog::debug("plugin library {} (sha256 {}) unloaded", version.source_path.string(),
               version.sha256.substr(0, 12));
  records_.erase(it);
}

void LibraryStore::MarkLive(const std::vector<std::shared_ptr<const Library>>& libraries,
                            uint64_t generation) {
  std::lock_guard lock(mu_);
  for (auto& [id, record] : records_) {
    for (const auto& lib : libraries) {
      if (record.version.library == lib.get()) record.version.last_generation = generation;
    }
  }
}

std::vector<LibraryVersion> LibraryStore::Versions() const {
  std::lock_guard lock(mu_);
  std::vector<LibraryVersion> out;
  out.reserve(records_.size());
  for (const auto& [id, record] : records_) out.push_back(record.version);
  return out;
}

}  // namespace schedhost::loader
