// The load pipeline of one library: checks on the file, dlopen, ABI negotiation, descriptor
// validation. Nothing here touches the registry; PluginRegistry::LoadLibrary registers the result.
#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>

#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "host/loader/elf_file.h"
#include "host/loader/loader.h"
#include "host/loader/sha256.h"

namespace schedhost::loader {
namespace {

namespace fs = std::filesystem;

// The upper bound on plugins per library; a larger count means a corrupt negotiation reply.
constexpr size_t kMaxPluginsPerLibrary = 4096;
// How much of a library's refusal message is quoted.
constexpr size_t kMaxQuotedError = 512;

// dlopen and dlclose are serialized (docs/abi.md rule 9): a Library may die on any thread.
std::mutex& DlMutex() {
  static std::mutex mu;
  return mu;
}

std::string Version(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string HostAbi() { return Version(SCHEDHOST_ABI_MAJOR, SCHEDHOST_ABI_MINOR); }

std::string Demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result = std::string(out) + " (" + name + ")";
  std::free(out);
  return result;
}

// Quote copies a library-owned string for an error message, bounded, with controls escaped.
std::string Quote(schedhost_str s) {
  if (s.data == nullptr || s.len == 0) return "(no message)";
  std::string out = "\"";
  for (size_t i = 0; i < s.len && i < kMaxQuotedError; ++i) {
    const unsigned char c = static_cast<unsigned char>(s.data[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (s.len > kMaxQuotedError) out += "...";
  return out + "\"";
}

std::string Copy(schedhost_str s) {
  return (s.data == nullptr || s.len == 0) ? std::string() : std::string(s.data, s.len);
}

// DlopenReason digs dlerror()'s text out of Boost.DLL's exception message and drops the file
// name dlerror() starts with (the caller names the file already).
std::string DlopenReason(std::string_view message, std::string_view file) {
  constexpr std::string_view kTag = "(dlerror system message: ";
  size_t start = message.find(kTag);
  if (start == std::string_view::npos) return std::string(message);
  start += kTag.size();
  size_t end = message.rfind("): ");
  if (end == std::string_view::npos || end < start) end = message.rfind(')');
  if (end == std::string_view::npos || end < start) end = message.size();
  std::string_view reason = message.substr(start, end - start);
  if (reason.substr(0, file.size()) == file && reason.substr(file.size(), 2) == ": ") {
    reason.remove_prefix(file.size() + 2);
  }
  return std::string(reason);
}

// ReadElf reads `load_path`; its errors name `path`, the file the operator knows (the same, or
// the one `load_path` is a shadow copy of).
ElfFile ReadElf(const fs::path& load_path, const fs::path& path) {
  try {
    return ElfFile::Read(load_path);
  } catch (const ElfError& e) {
    std::string message = e.what();
    const std::string copy = load_path.string();
    if (load_path != path) {
      for (size_t at = message.find(copy); at != std::string::npos; at = message.find(copy, at)) {
        message.replace(at, copy.size(), path.string());
        at += path.string().size();
      }
    }
    throw LoadError(message);
  }
}

// CheckBeforeLoading refuses, from the file alone, what must never reach dlopen (docs/abi.md rules 2
// and 12): no manifest, another ABI major, a newer required host minor, GNU_UNIQUE symbols, no
// entry symbol. Returns the manifest.
Manifest CheckBeforeLoading(const ElfFile& elf, const std::string& file) {
  const auto section = elf.Section(SCHEDHOST_MANIFEST_SECTION);
  if (!section) {
    throw LoadError(file + ": not a schedhost plugin library (no " SCHEDHOST_MANIFEST_SECTION
                           " section)");
  }
  Manifest m;
  try {
    m = ParseManifestSection(*section);
  } catch (const ManifestError& e) {
    throw LoadError(file + ": malformed " SCHEDHOST_MANIFEST_SECTION " section: " + e.what());
  }
  if (m.abi_major != SCHEDHOST_ABI_MAJOR) {
    throw LoadError(file + " was built for plugin ABI " + Version(m.abi_major, m.abi_minor) +
                    "; this host speaks " + HostAbi() + " — rebuild against schedhost-sdk " +
                    std::to_string(SCHEDHOST_ABI_MAJOR) + ".x");
  }
  if (m.min_host_minor > SCHEDHOST_ABI_MINOR) {
    throw LoadError(file + " needs host ABI " + Version(m.abi_major, m.min_host_minor) +
                    " or newer; this host speaks " + HostAbi() +
                    " — upgrade schedhost or rebuild the plugin against an older schedhost-sdk");
  }
  const std::vector<std::string> unique = elf.GnuUniqueSymbols();
  if (!unique.empty()) {
    std::string names;
    for (size_t i = 0; i < unique.size() && i < 5; ++i) {
      names += (i ? ", " : "") + Demangle(unique[i]);
    }
    if (unique.size() > 5) names += " and " + std::to_string(unique.size() - 5) + " more";
    throw LoadError(file +
                    ": defines GNU_UNIQUE symbols, which would pin it in memory and share "
                    "statics between versions: " +
                    names +
                    " — build it with -fno-gnu-unique or hidden visibility (schedhost_add_plugin "
                    "does both)");
  }
  const ElfSymbol* entry = elf.FindDefined(SCHEDHOST_ENTRY_SYMBOL);
  if (entry == nullptr || entry->type != STT_FUNC) {
    throw LoadError(file + ": does not export the entry function " SCHEDHOST_ENTRY_SYMBOL
                           " (not among its dynamic symbols) — export it with "
                           "SCHEDHOST_PLUGIN_LIBRARY or SCHEDHOST_EXPORT");
  }
  return m;
}

}  // namespace

struct Library::Handle {
  boost::dll::shared_library so;

  ~Handle() {
    std::lock_guard<std::mutex> lock(DlMutex());
    so.unload();
  }
};

Library::Library() : handle_(std::make_unique<Handle>()) {}

Library::~Library() = default;

std::shared_ptr<Library> PluginRegistry::Open(const fs::path& path, const fs::path& load_path,
                                              const schedhost_host_api* api) const {
  const std::string file = path.string();
  const ElfFile elf = ReadElf(load_path, path);
  Manifest manifest = CheckBeforeLoading(elf, file);

  std::shared_ptr<Library> lib(new Library());
  lib->path_ = path;
  lib->loaded_path_ = load_path;
  lib->sha256_ = Sha256Hex(elf.bytes());
  lib->manifest_ = std::move(manifest);
  {
    std::lock_guard<std::mutex> lock(DlMutex());
    try {
      // Explicit RTLD_NOW | RTLD_LOCAL: Boost.DLL's default is lazy binding (docs/abi.md rule 10).
      lib->handle_->so.load(load_path,
                            boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      throw LoadError(file + ": dlopen failed: " + DlopenReason(e.what(), file));
    }
  }
  // The entry is noexcept by contract; Boost.DLL resolves it as a plain function pointer.
  int32_t (*entry)(schedhost_library_negotiation*) = nullptr;
  try {
    entry = &lib->handle_->so.get<int32_t(schedhost_library_negotiation*)>(SCHEDHOST_ENTRY_SYMBOL);
  } catch (const std::exception& e) {
    throw LoadError(file + ": cannot resolve " SCHEDHOST_ENTRY_SYMBOL ": " + e.what());
  }

  schedhost_library_negotiation io;
  std::memset(&io, 0, sizeof io);
  io.struct_size = sizeof io;
  io.host_abi_major = SCHEDHOST_ABI_MAJOR;
  io.host_abi_minor = SCHEDHOST_ABI_MINOR;
  io.host_version = {host_version_.data(), host_version_.size()};
  io.api = api;
  const int32_t rc = entry(&io);
  if (rc != 0) {
    throw LoadError(file + ": the library refused this host (ABI " + HostAbi() + ", code " +
                    std::to_string(rc) + "): " + Quote(io.error));
  }
  const Manifest& m = lib->manifest_;
  if (io.plugin_abi_major != m.abi_major || io.plugin_abi_minor != m.abi_minor ||
      io.min_host_abi_minor != m.min_host_minor) {
    throw LoadError(
        file + ": negotiation says ABI " + Version(io.plugin_abi_major, io.plugin_abi_minor) +
        " (min host minor " + std::to_string(io.min_host_abi_minor) +
        ") but the manifest says ABI " + Version(m.abi_major, m.abi_minor) + " (min host minor " +
        std::to_string(m.min_host_minor) + ") — the library is inconsistent; rebuild it");
  }
  if (io.plugins_len == 0) throw LoadError(file + ": the library provides no plugins");
  if (io.plugins_len > kMaxPluginsPerLibrary || io.plugins == nullptr) {
    throw LoadError(file + ": negotiation returned " + std::to_string(io.plugins_len) +
                    " plugins in " + (io.plugins ? "an implausibly long" : "a NULL") + " table");
  }
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < io.plugins_len; ++i) {
    const std::string name = CheckDescriptor(io.plugins[i], i, file);
    if (!names.insert(name).second) {
      throw LoadError(file + ": plugin name " + name + " appears twice in the library");
    }
    lib->descriptors_.push_back(io.plugins[i]);
  }
  lib->abi_major_ = io.plugin_abi_major;
  lib->abi_minor_ = io.plugin_abi_minor;
  lib->min_host_minor_ = io.min_host_abi_minor;
  lib->sdk_version_ = Copy(io.sdk_version);
  return lib;
}

bool PluginRegistry::IsLoaded(const fs::path& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  std::lock_guard<std::mutex> lock(DlMutex());
  void* h = dlopen((ec ? path : abs).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);  // RTLD_NOLOAD took a reference; give it back
  return true;
}

}  // namespace schedhost::loader
