#pragma once
// LibraryStore: the versions of plugin libraries a running host has loaded, each from a
// content-addressed shadow copy (docs/abi.md rules 11 and 12). The dynamic linker matches a loaded
// library by path and inode, so a new build renamed over the old path would be answered with the
// old, already-mapped copy; loading `<shadow dir>/<stem>-<sha256>.so` instead gives every content
// its own name, so a new version loads beside the old one. A version whose content is unchanged
// is reused (the same Library, not negotiated again). When the last reference to a version goes,
// it is dlclosed, `dlopen(RTLD_NOLOAD)` checks that it is really gone (a version still mapped is
// kept in Versions() as not unloadable and logged) and its shadow copy is deleted. In pin mode
// the store keeps every version it loaded, so none is ever unloaded.
//
//   auto store = std::make_shared<LibraryStore>(state_dir / "plugins", /*pin=*/false);
//   PluginRegistry registry(store);      // LoadLibrary now goes through the store
//
// Thread-safe: a version may be released on any thread.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace schedhost::loader {

class Library;

/// LibraryVersion describes one version of a library the store loaded.
struct LibraryVersion {
  /// State of a version: still referenced, or released but still mapped.
  enum class State { kInUse, kNotUnloadable };
  std::filesystem::path source_path;  ///< the operator's file it was copied from
  std::filesystem::path loaded_path;  ///< the shadow copy that was dlopened
  std::string sha256;
  State state = State::kInUse;
  /// last_generation is the last config generation that served with it (0: never live).
  uint64_t last_generation = 0;
  /// library is the loaded library while in use (nullptr once released); compare, never call.
  const Library* library = nullptr;
};

/// LibraryStore loads libraries from shadow copies and tracks every loaded version.
class LibraryStore : public std::enable_shared_from_this<LibraryStore> {
 public:
  /// Opener loads the file at `load_path` (a shadow copy) for the source file it is a copy of.
  using Opener = std::function<std::shared_ptr<Library>(const std::filesystem::path& load_path)>;

  /// LibraryStore keeps its shadow copies in `shadow_dir` (created when missing); `pin` keeps
  /// every version loaded for the life of the process. The store locks the directory (flock on
  /// `.lock`) and deletes the copies an earlier process left there. Throws LoadError naming the
  /// directory when it cannot be created or written, or another process holds it.
  LibraryStore(std::filesystem::path shadow_dir, bool pin);
  ~LibraryStore();
  LibraryStore(const LibraryStore&) = delete;
  LibraryStore& operator=(const LibraryStore&) = delete;

  /// Acquire returns the loaded version of `source`'s current content: the one already loaded
  /// when its sha256 is unchanged, else a new one that `open` loads from a fresh shadow copy.
  /// Throws LoadError naming `source` when it cannot be read or copied, or what `open` throws.
  std::shared_ptr<const Library> Acquire(const std::filesystem::path& source, const Opener& open);

  /// MarkLive records that `libraries` serve config generation `generation`.
  void MarkLive(const std::vector<std::shared_ptr<const Library>>& libraries, uint64_t generation);

  /// Versions lists every version in use or not unloadable, oldest first.
  std::vector<LibraryVersion> Versions() const;

  /// shadow_dir is the directory of the shadow copies.
  const std::filesystem::path& shadow_dir() const noexcept { return shadow_dir_; }
  /// pin tells whether versions are kept loaded forever.
  bool pin() const noexcept { return pin_; }

  /// FileIdentity is what a stat says about a file: device, inode, size, mtime.
  struct FileIdentity {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };

 private:
  struct Record {
    LibraryVersion version;
    std::weak_ptr<const Library> library;
  };

  // FindLocked returns the Library loaded from `shadow` while one is still in use.
  std::shared_ptr<const Library> FindLocked(const std::filesystem::path& shadow) const;
  // Released runs after the version `id` was dlclosed: checks it is gone, deletes its copy.
  void Released(uint64_t id);
  // DropUnusedCopy deletes the copy of a refused library unless something else maps it.
  void DropUnusedCopy(const std::filesystem::path& shadow);
  // WriteCopy writes `bytes` to `shadow` atomically (temporary file, fsync, rename).
  void WriteCopy(const std::vector<uint8_t>& bytes, const std::filesystem::path& shadow,
                 const std::filesystem::path& source);

  const std::filesystem::path shadow_dir_;
  const bool pin_;
  int lock_fd_ = -1;  // holds an exclusive flock on <shadow_dir>/.lock while the store lives
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;                                // guarded by mu_
  std::map<uint64_t, Record> records_;                  // guarded by mu_; by id, so oldest first
  std::multiset<std::filesystem::path> loading_;        // guarded by mu_: copies being loaded
  std::vector<std::shared_ptr<const Library>> pinned_;  // guarded by mu_
  // identities_ remembers, per source file, the identity it had when it was last hashed and the
  // hash; guarded by mu_.
  std::map<std::filesystem::path, std::pair<FileIdentity, std::string>> identities_;
};

}  // namespace schedhost::loader
