#pragma once
// ElfFile reads what the loader must know about a plugin library from the file on disk, before
// any of the library's code runs (dlopen would run its static constructors): that it is a
// 64-bit, native-endian ELF shared object for this host's machine, the bytes of a named section
// (the schedhost_manifest), and its dynamic symbols with binding, type and defined-ness.
//
// Boost.DLL's library_info lists section and symbol names, but cannot return a section's
// contents nor a symbol's binding (needed to spot STB_GNU_UNIQUE), so this reads the ELF
// structures of glibc's <elf.h> directly. Every offset and size taken from the file is
// bounds-checked; a truncated or garbage file yields an ElfError naming the file and the problem.
//
//   ElfFile elf = ElfFile::Read("plugins/libfoo.so");
//   if (auto manifest = elf.Section("schedhost_manifest")) { ... }

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::loader {

/// ElfError reports a file that is not a loadable ELF shared object; what() names the file.
class ElfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// ElfSymbol is one entry of a library's dynamic symbol table (.dynsym).
struct ElfSymbol {
  std::string name;
  uint8_t binding = 0;   // STB_LOCAL, STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE, ...
  uint8_t type = 0;      // STT_NOTYPE, STT_OBJECT, STT_FUNC, ...
  bool defined = false;  // false when the library imports the symbol (SHN_UNDEF)
};

/// ElfFile is a parsed, validated ELF shared object held in memory.
class ElfFile {
 public:
  /// kMaxFileSize is the largest file Read accepts (no plugin library comes near it).
  static constexpr uint64_t kMaxFileSize = uint64_t{1} << 30;

  /// Read loads and validates the file at `path`; throws ElfError naming the file when it cannot
  /// be read or is not a 64-bit native-endian ELF shared object for this host's machine.
  static ElfFile Read(const std::filesystem::path& path);
  /// Parse validates `bytes` as Read does; `display_name` names the data in error messages.
  static ElfFile Parse(std::string display_name, std::vector<uint8_t> bytes);

  /// display_name is what error messages call this file (the path as given to Read).
  const std::string& display_name() const noexcept { return display_name_; }
  /// bytes is the whole file, e.g. for hashing it.
  std::span<const uint8_t> bytes() const noexcept { return bytes_; }
  /// Section returns the contents of the first section called `name`, or nullopt when there is
  /// none or it occupies no file space (SHT_NOBITS). The span lives as long as this ElfFile.
  std::optional<std::span<const uint8_t>> Section(std::string_view name) const;
  /// dynamic_symbols lists .dynsym in file order, without the null symbol at index 0.
  const std::vector<ElfSymbol>& dynamic_symbols() const noexcept { return dynamic_symbols_; }
  /// FindDefined returns the defined dynamic symbol called `name`, or nullptr.
  const ElfSymbol* FindDefined(std::string_view name) const noexcept;
  /// GnuUniqueSymbols names the defined dynamic symbols bound STB_GNU_UNIQUE.
  std::vector<std::string> GnuUniqueSymbols() const;

  /// MachineName names an ELF e_machine value ("x86_64", "aarch64", or "e_machine N").
  static std::string MachineName(uint16_t machine);
  /// HostMachine is the e_machine of the architecture this host was compiled for.
  static uint16_t HostMachine() noexcept;

 private:
  struct SectionInfo {
    std::string name;
    uint32_t type = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t link = 0;
    uint64_t entry_size = 0;
  };

  ElfFile() = default;
  [[noreturn]] void Fail(std::string_view what) const;
  void ParseHeader();
  void ParseSections();
  void ParseDynamicSymbols();
  std::string_view StringAt(const SectionInfo& strtab, uint64_t offset,
                            std::string_view what) const;

  std::string display_name_;
  std::vector<uint8_t> bytes_;
  std::vector<SectionInfo> sections_;
  std::vector<ElfSymbol> dynamic_symbols_;
};

}  // namespace schedhost::loader
