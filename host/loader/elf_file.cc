#include "host/loader/elf_file.h"

#include <elf.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

namespace schedhost::loader {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "the schedhost loader knows the ELF machine of x86_64 and arm64 hosts only"
#endif

static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);
// The loader reads headers with memcpy, so it accepts only files in the host's own byte order
// (a library in the other order could not be loaded anyway).
constexpr unsigned char kHostData =
    std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

// InRange tells whether [offset, offset + length) lies inside a file of `size` bytes, without
// overflowing on hostile values.
bool InRange(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

template <class T>
T ReadAt(const std::vector<uint8_t>& bytes, uint64_t offset) {
  T out;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));  // callers checked the range
  return out;
}

std::string TypeName(uint16_t type) {
  switch (type) {
    case ET_NONE:
      return "ET_NONE";
    case ET_REL:
      return "a relocatable object, ET_REL";
    case ET_EXEC:
      return "an executable, ET_EXEC";
    case ET_CORE:
      return "a core dump, ET_CORE";
    default:
      return "e_type " + std::to_string(type);
  }
}

}  // namespace

uint16_t ElfFile::HostMachine() noexcept { return kHostMachine; }

std::string ElfFile::MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_386:
      return "i386";
    case EM_ARM:
      return "arm";
    case EM_RISCV:
      return "riscv";
    case EM_PPC64:
      return "ppc64";
    case EM_S390:
      return "s390x";
    case EM_MIPS:
      return "mips";
    case EM_LOONGARCH:
      return "loongarch";
    default:
      return "e_machine " + std::to_string(machine);
  }
}

void ElfFile::Fail(std::string_view what) const {
  throw ElfError(display_name_ + ": " + std::string(what));
}

ElfFile ElfFile::Read(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw ElfError(name + ": cannot read: " + ec.message());
  if (!std::filesystem::is_regular_file(status)) throw ElfError(name + ": not a regular file");
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw ElfError(name + ": cannot read: " + ec.message());
  if (size > kMaxFileSize) {
    throw ElfError(name + ": " + std::to_string(size) + " bytes, larger than any plugin library (" +
                   std::to_string(kMaxFileSize) + " bytes at most)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ElfError(name + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) {
    throw ElfError(name + ": read " + std::to_string(in.gcount()) + " of " + std::to_string(size) +
                   " bytes (was the file changed while being read?)");
  }
  return Parse(name, std::move(bytes));
}

ElfFile ElfFile::Parse(std::string display_name, std::vector<uint8_t> bytes) {
  ElfFile f;
  f.display_name_ = std::move(display_name);
  f.bytes_ = std::move(bytes);
  f.ParseHeader();
  f.ParseSections();
  f.ParseDynamicSymbols();
  return f;
}

void ElfFile::ParseHeader() {
  const uint64_t size = bytes_.size();
  if (size == 0) Fail("not an ELF file (empty)");
  const size_t magic_len = std::min<uint64_t>(size, SELFMAG);
  if (std::memcmp(bytes_.data(), ELFMAG, magic_len) != 0) Fail("not an ELF file (bad magic)");
  if (size < EI_NIDENT) {
    Fail("truncated: " + std::to_string(size) + " bytes, shorter than the ELF identification (" +
         std::to_string(EI_NIDENT) + " bytes)");
  }
  const unsigned char elf_class = bytes_[EI_CLASS];
  if (elf_class == ELFCLASS32) Fail("a 32-bit ELF file; this host loads only 64-bit libraries");
  if (elf_class != ELFCLASS64) Fail("invalid ELF class " + std::to_string(elf_class));
  const unsigned char data = bytes_[EI_DATA];
  if (data != ELFDATA2LSB && data != ELFDATA2MSB) {
    Fail("invalid ELF data encoding " + std::to_string(data));
  }
  if (data != kHostData) {
    Fail(std::string(data == ELFDATA2MSB ? "big" : "little") + "-endian ELF; this host is " +
         (kHostData == ELFDATA2MSB ? "big" : "little") + "-endian");
  }
  if (bytes_[EI_VERSION] != EV_CURRENT) {
    Fail("unsupported ELF version " + std::to_string(bytes_[EI_VERSION]));
  }
  if (size < sizeof(Elf64_Ehdr)) {
    Fail("truncated: the ELF header needs " + std::to_string(sizeof(Elf64_Ehdr)) +
         " bytes, the file has " + std::to_string(size));
  }
  const auto eh = ReadAt<Elf64_Ehdr>(bytes_, 0);
  if (eh.e_machine != kHostMachine) {
    Fail("built for " + MachineName(eh.e_machine) + ", this host is " + MachineName(kHostMachine));
  }
  if (eh.e_type != ET_DYN) Fail("not a shared library (it is " + TypeName(eh.e_type) + ")");
}

void ElfFile::ParseSections() {
  const uint64_t size = bytes_.size();
  const auto eh = ReadAt<Elf64_Ehdr>(bytes_, 0);
  if (eh.e_shoff == 0) return;  // no section headers: nothing to find (sstrip'ed)
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) {
    Fail("section header entries are " + std::to_string(eh.e_shentsize) + " bytes, expected " +
         std::to_string(sizeof(Elf64_Shdr)));
  }
  auto table_beyond = [&](uint64_t count) {
    Fail("truncated: section header table at offset " + std::to_string(eh.e_shoff) +
         " beyond file size " + std::to_string(size) + " (" + std::to_string(count) +
         " entries of " + std::to_string(sizeof(Elf64_Shdr)) + " bytes)");
  };
  // With 0xff00 or more sections, e_shnum is 0 and section 0's sh_size holds the count; likewise
  // e_shstrndx is SHN_XINDEX and section 0's sh_link holds the index.
  uint64_t count = eh.e_shnum;
  uint64_t names_index = eh.e_shstrndx;
  if (count == 0 || names_index == SHN_XINDEX) {
    if (!InRange(eh.e_shoff, sizeof(Elf64_Shdr), size)) table_beyond(1);
    const auto first = ReadAt<Elf64_Shdr>(bytes_, eh.e_shoff);
    if (count == 0) count = first.sh_size;
    if (names_index == SHN_XINDEX) names_index = first.sh_link;
  }
  if (count > (size - std::min<uint64_t>(size, eh.e_shoff)) / sizeof(Elf64_Shdr) ||
      eh.e_shoff > size) {
    table_beyond(count);
  }
  std::vector<Elf64_Shdr> headers(count);
  for (uint64_t i = 0; i < count; ++i) {
    headers[i] = ReadAt<Elf64_Shdr>(bytes_, eh.e_shoff + i * sizeof(Elf64_Shdr));
  }
  SectionInfo names;
  bool have_names = names_index != SHN_UNDEF;
  if (have_names) {
    if (names_index >= count) {
      Fail("section name table index " + std::to_string(names_index) + " is out of range (" +
           std::to_string(count) + " sections)");
    }
    const Elf64_Shdr& sh = headers[names_index];
    if (sh.sh_type != SHT_STRTAB) Fail("section name table is not a string table");
    names = {"", sh.sh_type, sh.sh_offset, sh.sh_size, sh.sh_link, sh.sh_entsize};
    if (!InRange(names.offset, names.size, size)) {
      Fail("truncated: section name table (offset " + std::to_string(names.offset) + ", " +
           std::to_string(names.size) + " bytes) beyond file size " + std::to_string(size));
    }
  }
  sections_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const Elf64_Shdr& sh = headers[i];
    SectionInfo s{"", sh.sh_type, sh.sh_offset, sh.sh_size, sh.sh_link, sh.sh_entsize};
    if (have_names && i != 0) {
      s.name = std::string(StringAt(names, sh.sh_name, "name of section " + std::to_string(i)));
    }
    if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL && !InRange(s.offset, s.size, size)) {
      Fail("truncated: section " + (s.name.empty() ? "#" + std::to_string(i) : s.name) +
           " (offset " + std::to_string(s.offset) + ", " + std::to_string(s.size) +
           " bytes) beyond file size " + std::to_string(size));
    }
    sections_.push_back(std::move(s));
  }
}

std::string_view ElfFile::StringAt(const SectionInfo& strtab, uint64_t offset,
                                   std::string_view what) const {
  if (offset >= strtab.size) {
    Fail(std::string(what) + ": string offset " + std::to_string(offset) +
         " is past the end of its string table (" + std::to_string(strtab.size) + " bytes)");
  }
  const char* begin = reinterpret_cast<const char*>(bytes_.data() + strtab.offset + offset);
  const size_t max_len = strtab.size - offset;
  const void* nul = std::memchr(begin, '\0', max_len);
  if (nul == nullptr) Fail(std::string(what) + ": string runs past the end of its string table");
  return std::string_view(begin, static_cast<const char*>(nul) - begin);
}

void ElfFile::ParseDynamicSymbols() {
  for (const SectionInfo& s : sections_) {
    if (s.type != SHT_DYNSYM) continue;
    if (s.entry_size != sizeof(Elf64_Sym)) {
      Fail(".dynsym entries are " + std::to_string(s.entry_size) + " bytes, expected " +
           std::to_string(sizeof(Elf64_Sym)));
    }
    if (s.size % sizeof(Elf64_Sym) != 0) {
      Fail(".dynsym size " + std::to_string(s.size) + " is not a multiple of its entry size");
    }
    if (s.link == 0 || s.link >= sections_.size() || sections_[s.link].type != SHT_STRTAB) {
      Fail(".dynsym links to section " + std::to_string(s.link) + ", which is not a string table");
    }
    const SectionInfo& strtab = sections_[s.link];
    const uint64_t n = s.size / sizeof(Elf64_Sym);
    dynamic_symbols_.reserve(n);
    for (uint64_t k = 1; k < n; ++k) {  // entry 0 is the reserved null symbol
      const auto sym = ReadAt<Elf64_Sym>(bytes_, s.offset + k * sizeof(Elf64_Sym));
      ElfSymbol out;
      out.name =
          std::string(StringAt(strtab, sym.st_name, "name of .dynsym entry " + std::to_string(k)));
      out.binding = ELF64_ST_BIND(sym.st_info);
      out.type = ELF64_ST_TYPE(sym.st_info);
      out.defined = sym.st_shndx != SHN_UNDEF;
      dynamic_symbols_.push_back(std::move(out));
    }
    return;  // an ELF file has at most one .dynsym
  }
}

std::optional<std::span<const uint8_t>> ElfFile::Section(std::string_view name) const {
  for (const SectionInfo& s : sections_) {
    if (s.name != name) continue;
    if (s.type == SHT_NOBITS) return std::nullopt;
    return std::span<const uint8_t>(bytes_.data() + s.offset, s.size);
  }
  return std::nullopt;
}

const ElfSymbol* ElfFile::FindDefined(std::string_view name) const noexcept {
  for (const ElfSymbol& s : dynamic_symbols_) {
    if (s.defined && s.name == name) return &s;
  }
  return nullptr;
}

std::vector<std::string> ElfFile::GnuUniqueSymbols() const {
  std::vector<std::string> out;
  for (const ElfSymbol& s : dynamic_symbols_) {
    if (s.defined && s.binding == STB_GNU_UNIQUE) out.push_back(s.name);
  }
  return out;
}

}  // namespace schedhost::loader
