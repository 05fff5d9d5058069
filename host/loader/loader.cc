#include "host/loader/loader.h"

#include <algorithm>
#include <exception>

#include "host/loader/elf_file.h"
#include "host/loader/manifest.h"

namespace schedhost::loader {

namespace fs = std::filesystem;

#ifndef SCHEDHOST_HOST_VERSION
#define SCHEDHOST_HOST_VERSION "0.0.0"
#endif
const char* const kHostVersion = SCHEDHOST_HOST_VERSION;

PluginRegistry::PluginRegistry(std::string host_version) : host_version_(std::move(host_version)) {}

PluginRegistry::PluginRegistry(std::shared_ptr<LibraryStore> store, std::string host_version)
    : host_version_(std::move(host_version)), store_(std::move(store)) {}

std::shared_ptr<const Library> PluginRegistry::LoadLibrary(const fs::path& path,
                                                           const schedhost_host_api* api) {
  // An absolute path makes dlopen open exactly the file that was checked, never a namesake
  // found through LD_LIBRARY_PATH or the system directories.
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec).lexically_normal();
  if (ec) throw LoadError(path.string() + ": " + ec.message());
  const fs::path canonical = fs::weakly_canonical(abs, ec);
  for (const auto& lib : libraries_) {
    std::error_code ec2;
    if (lib->path() == abs || (!ec && fs::weakly_canonical(lib->path(), ec2) == canonical)) {
      throw LoadError(abs.string() + " is already loaded");
    }
  }
  std::shared_ptr<const Library> lib =
      store_ ? store_->Acquire(abs, [&](const fs::path& copy) { return Open(abs, copy, api); })
             : Open(abs, abs, api);
  CheckNewNames(lib->descriptors(), lib->path().string());
  for (const schedhost_plugin_descriptor* d : lib->descriptors()) {
    entries_.emplace(std::string(d->name.data, d->name.len), PluginEntry{d, lib});
  }
  libraries_.push_back(lib);
  return lib;
}

namespace {

// NamesARegisteredPlugin tells whether the manifest of the library at `file` names a plugin in
// `entries`; false when the file has no readable manifest (LoadLibrary then says why).
template <class Entries>
bool NamesARegisteredPlugin(const fs::path& file, const Entries& entries) {
  try {
    const ElfFile elf = ElfFile::Read(file);
    const auto section = elf.Section(SCHEDHOST_MANIFEST_SECTION);
    if (!section) return false;
    for (const ManifestPlugin& p : ParseManifestSection(*section).plugins) {
      if (entries.count(p.name) != 0) return true;
    }
  } catch (const std::exception&) {
    return false;
  }
  return false;
}

}  // namespace

void PluginRegistry::LoadDirectory(const fs::path& dir, const schedhost_host_api* api,
                                   bool skip_registered) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw LoadError(dir.string() + ": not a directory" + (ec ? " (" + ec.message() + ")" : ""));
  }
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code file_ec;
    if (it->path().extension() == ".so" && it->is_regular_file(file_ec)) {
      files.push_back(it->path());
    }
  }
  if (ec) throw LoadError(dir.string() + ": cannot list the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    if (skip_registered && NamesARegisteredPlugin(file, entries_)) {
      skipped_.push_back(file);
      continue;
    }
    try {
      LoadLibrary(file, api);
    } catch (const LoadError& e) {
      load_errors_.emplace_back(e.what());
    }
  }
}

void PluginRegistry::RegisterInProcess(const schedhost_plugin_descriptor* descriptor) {
  const std::string name = CheckDescriptor(descriptor, 0, "in-process registration");
  CheckNewNames({&descriptor, 1}, "an in-process registration");
  entries_.emplace(name, PluginEntry{descriptor, nullptr});
}

void PluginRegistry::CheckNewNames(std::span<const schedhost_plugin_descriptor* const> descriptors,
                                   const std::string& provider) const {
  for (const schedhost_plugin_descriptor* d : descriptors) {
    const std::string_view name(d->name.data, d->name.len);
    auto it = entries_.find(name);
    if (it == entries_.end()) continue;
    const std::string existing = it->second.library ? it->second.library->path().string()
                                                    : std::string("an in-process registration");
    throw LoadError("plugin " + std::string(name) + " is provided by both " + existing + " and " +
                    provider);
  }
}

void PluginRegistry::AddMissing(const PluginRegistry& other) {
  for (const auto& [name, entry] : other.entries_) entries_.emplace(name, entry);
}

const PluginEntry* PluginRegistry::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> PluginRegistry::Names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;  // std::map keeps them sorted
}

bool PluginRegistry::Unload(const Library& library) {
  auto it = std::find_if(libraries_.begin(), libraries_.end(),
                         [&](const auto& lib) { return lib.get() == &library; });
  if (it == libraries_.end()) return false;
  std::erase_if(entries_, [&](const auto& kv) { return kv.second.library.get() == &library; });
  libraries_.erase(it);  // may dlclose right here when nobody else holds the library
  return true;
}

}  // namespace schedhost::loader
