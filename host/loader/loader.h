#pragma once
// The plugin registry: loads plugin libraries (.so files) safely and keeps every plugin
// descriptor the host can instantiate, by name.
//
// LoadLibrary checks a file before any of its code runs (ELF kind and machine, the
// schedhost_manifest's ABI version, GNU_UNIQUE symbols, the entry symbol), then dlopens it
// RTLD_NOW | RTLD_LOCAL through Boost.DLL, negotiates the ABI through schedhost_plugin_library_v1
// and validates the descriptors it returns. Every refusal throws LoadError naming the file, the
// versions involved and the fix, and leaves the registry unchanged (docs/abi.md rules 1, 2, 10, 12).
// A Library is reference counted: everything made from it holds a shared_ptr, and the library is
// dlclosed when the last one goes (docs/abi.md rule 11).
//
//   PluginRegistry registry;
//   registry.LoadDirectory(plugin_dir, &host_api);
//   if (const PluginEntry* e = registry.Find("NodeResourcesFit")) { e->descriptor->create(...); }

#include <schedhost/plugin.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/loader/library_store.h"
#include "host/loader/manifest.h"

namespace schedhost::loader {

/// LoadError reports a library (or in-process descriptor) the registry refused; what() names
/// the file and says what is wrong and how to fix it.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// kHostVersion is this host's release version, handed to libraries during negotiation.
extern const char* const kHostVersion;

/// kDescriptorSizeV1_0 is sizeof(schedhost_plugin_descriptor) in ABI 1.0, the smallest
/// descriptor a host of major 1 accepts.
inline constexpr size_t kDescriptorSizeV1_0 = offsetof(schedhost_plugin_descriptor, post_bind) +
                                              sizeof(schedhost_plugin_descriptor::post_bind);

/// Library is one loaded plugin library; immutable once loaded. It is dlclosed when the last
/// shared_ptr to it goes away, so whoever calls into its descriptors must hold one.
class Library {
 public:
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  /// path is the library's file as the operator named it (config, plugin directory).
  const std::filesystem::path& path() const noexcept { return path_; }
  /// loaded_path is the file that was dlopened: path(), or its shadow copy when the library was
  /// loaded through a LibraryStore.
  const std::filesystem::path& loaded_path() const noexcept { return loaded_path_; }
  /// sha256 is the lowercase hex SHA-256 of the file's contents as checked before loading.
  const std::string& sha256() const noexcept { return sha256_; }
  /// manifest is the library's schedhost_manifest, read from the file before dlopen.
  const Manifest& manifest() const noexcept { return manifest_; }
  /// abi_major is the ABI major the library reported in negotiation.
  uint32_t abi_major() const noexcept { return abi_major_; }
  /// abi_minor is the ABI minor the library was built with, as reported in negotiation.
  uint32_t abi_minor() const noexcept { return abi_minor_; }
  /// min_host_minor is the oldest host minor the library works with, as negotiated.
  uint32_t min_host_minor() const noexcept { return min_host_minor_; }
  /// sdk_version is the SDK version the library reported (copied).
  const std::string& sdk_version() const noexcept { return sdk_version_; }
  /// descriptors are the validated plugin descriptors; library-owned, valid while it is loaded.
  std::span<const schedhost_plugin_descriptor* const> descriptors() const noexcept {
    return descriptors_;
  }

 private:
  friend class PluginRegistry;
  friend class LibraryStore;
  struct Handle;
  Library();

  std::unique_ptr<Handle> handle_;  // the dlopen handle (Boost.DLL), closed last
  std::filesystem::path path_;
  std::filesystem::path loaded_path_;
  std::string sha256_;
  Manifest manifest_;
  uint32_t abi_major_ = 0;
  uint32_t abi_minor_ = 0;
  uint32_t min_host_minor_ = 0;
  std::string sdk_version_;
  std::vector<const schedhost_plugin_descriptor*> descriptors_;
};

/// PluginEntry is a registered plugin: its descriptor and the library that provides it (null
/// for an in-process registration). Copy `library` to keep the descriptor callable.
struct PluginEntry {
  const schedhost_plugin_descriptor* descriptor = nullptr;
  std::shared_ptr<const Library> library;
};

/// PluginRegistry owns the set of loaded libraries and their plugins by name. Not thread-safe:
/// loads, registrations and unloads happen on the control thread; const lookups may run
/// concurrently with each other.
class PluginRegistry {
 public:
  /// PluginRegistry starts empty; `host_version` is what negotiation tells libraries.
  explicit PluginRegistry(std::string host_version = kHostVersion);
  /// PluginRegistry loading every library through `store` (shadow copies, reuse of unchanged
  /// versions; see library_store.h); a null store loads each file in place.
  explicit PluginRegistry(std::shared_ptr<LibraryStore> store,
                          std::string host_version = kHostVersion);

  /// LoadLibrary checks, loads and negotiates with the library at `path`, registers its plugins
  /// and returns it; `api` is handed to the library (host-owned, must outlive it). Throws
  /// LoadError naming the file on any refusal, and then changes nothing.
  std::shared_ptr<const Library> LoadLibrary(const std::filesystem::path& path,
                                             const schedhost_host_api* api);
  /// LoadDirectory loads every *.so file directly inside `dir`, in file-name order; each refused
  /// library's message is appended to load_errors() and the others still load. Throws LoadError
  /// when `dir` itself is not a readable directory. With `skip_registered`, a file whose
  /// manifest names a plugin already registered is left out (listed in skipped()) instead of
  /// refused as a duplicate: a build loaded explicitly before takes the place of the copy in the
  /// directory (the test harness, for an author's build of a plugin that is also installed).
  void LoadDirectory(const std::filesystem::path& dir, const schedhost_host_api* api,
                     bool skip_registered = false);
  /// skipped lists the files LoadDirectory left out with skip_registered, oldest first.
  const std::vector<std::filesystem::path>& skipped() const noexcept { return skipped_; }
  /// load_errors holds the message of every library LoadDirectory refused, oldest first.
  const std::vector<std::string>& load_errors() const noexcept { return load_errors_; }

  /// RegisterInProcess registers a descriptor linked into the host (tests, no dlopen), with the
  /// same struct_size, name and duplicate checks as a library's; throws LoadError on refusal.
  void RegisterInProcess(const schedhost_plugin_descriptor* descriptor);

  /// store returns the LibraryStore libraries load through (null: in place).
  const std::shared_ptr<LibraryStore>& store() const noexcept { return store_; }
  /// AddMissing registers every plugin of `other` whose name this registry has no plugin of,
  /// sharing its library: a shadow profile's own library versions come first, the set's
  /// libraries provide the rest.
  void AddMissing(const PluginRegistry& other);
  /// Find returns the plugin registered under `name`, or nullptr; valid until the registry
  /// changes.
  const PluginEntry* Find(std::string_view name) const;
  /// Names lists every registered plugin name, sorted.
  std::vector<std::string> Names() const;
  /// Libraries lists the loaded libraries in load order.
  const std::vector<std::shared_ptr<const Library>>& Libraries() const noexcept {
    return libraries_;
  }

  /// Unload removes `library` and its plugins from the registry and drops the registry's
  /// references; the library is dlclosed once no other shared_ptr to it remains. Returns false
  /// when the library was not registered here.
  bool Unload(const Library& library);

  /// IsLoaded tells whether the dynamic linker still has the file at `path` mapped
  /// (dlopen RTLD_NOLOAD); after the last reference to a Library goes, this must be false, or
  /// the library cannot be unloaded (e.g. it has GNU_UNIQUE symbols).
  static bool IsLoaded(const std::filesystem::path& path);

 private:
  // Open runs every check and the negotiation for `load_path` (the file itself or its shadow
  // copy; messages name `path`); the result is not registered yet.
  std::shared_ptr<Library> Open(const std::filesystem::path& path,
                                const std::filesystem::path& load_path,
                                const schedhost_host_api* api) const;
  void CheckNewNames(std::span<const schedhost_plugin_descriptor* const> descriptors,
                     const std::string& provider) const;

  std::string host_version_;
  std::shared_ptr<LibraryStore> store_;
  std::map<std::string, PluginEntry, std::less<>> entries_;
  std::vector<std::shared_ptr<const Library>> libraries_;
  std::vector<std::string> load_errors_;
  std::vector<std::filesystem::path> skipped_;
};

/// Bits of ImplementedPoints, one per extension point, numbered as config::Point.
enum PointBit : uint32_t {
  kPreEnqueueBit = 1u << 0,
  kQueueSortBit = 1u << 1,
  kPreFilterBit = 1u << 2,
  kFilterBit = 1u << 3,
  kPostFilterBit = 1u << 4,
  kPreScoreBit = 1u << 5,
  kScoreBit = 1u << 6,
  kReserveBit = 1u << 7,
  kPermitBit = 1u << 8,
  kPreBindBit = 1u << 9,
  kBindBit = 1u << 10,
  kPostBindBit = 1u << 11,
};

/// ImplementedPoints returns a PointBit mask of the extension points `descriptor` implements
/// (Score counts when `score` is set, Reserve when `reserve` is); slots beyond its struct_size
/// count as not implemented.
uint32_t ImplementedPoints(const schedhost_plugin_descriptor& descriptor) noexcept;

/// CheckDescriptor validates one descriptor (non-NULL, struct_size at least the ABI 1.0 size,
/// a non-empty name) and returns its name; throws LoadError prefixed with `provider`.
std::string CheckDescriptor(const schedhost_plugin_descriptor* descriptor, size_t index,
                            std::string_view provider);

}  // namespace schedhost::loader
