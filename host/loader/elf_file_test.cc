#include "host/loader/elf_file.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>

#include "host/loader/manifest.h"

namespace schedhost::loader {
namespace {

std::vector<uint8_t> ReadBytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Elf64_Ehdr Header(const std::vector<uint8_t>& b) {
  Elf64_Ehdr h;
  std::memcpy(&h, b.data(), sizeof h);
  return h;
}

void SetHeader(std::vector<uint8_t>& b, const Elf64_Ehdr& h) {
  std::memcpy(b.data(), &h, sizeof h);
}

// SectionHeaderOffset finds where section `name`'s header sits in a well-formed file.
size_t SectionHeaderOffset(const std::vector<uint8_t>& b, std::string_view name) {
  const Elf64_Ehdr h = Header(b);
  Elf64_Shdr names;
  std::memcpy(&names, b.data() + h.e_shoff + h.e_shstrndx * sizeof(Elf64_Shdr), sizeof names);
  for (size_t i = 0; i < h.e_shnum; ++i) {
    Elf64_Shdr sh;
    const size_t at = h.e_shoff + i * sizeof(Elf64_Shdr);
    std::memcpy(&sh, b.data() + at, sizeof sh);
    if (name == reinterpret_cast<const char*>(b.data() + names.sh_offset + sh.sh_name)) return at;
  }
  ADD_FAILURE() << "no section " << name;
  return 0;
}

template <class F>
void EditSection(std::vector<uint8_t>& b, std::string_view name, F edit) {
  const size_t at = SectionHeaderOffset(b, name);
  Elf64_Shdr sh;
  std::memcpy(&sh, b.data() + at, sizeof sh);
  edit(sh);
  std::memcpy(b.data() + at, &sh, sizeof sh);
}

std::string ParseError(std::vector<uint8_t> bytes) {
  try {
    ElfFile::Parse("libfoo.so", std::move(bytes));
  } catch (const ElfError& e) {
    return e.what();
  }
  return "(accepted)";
}

const ElfSymbol* FindAny(const ElfFile& f, std::string_view name) {
  for (const ElfSymbol& s : f.dynamic_symbols()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(ElfFileTest, ReadsManifestSectionAndDynamicSymbols) {
  const ElfFile f = ElfFile::Read(ELF_FIXTURE);
  EXPECT_EQ(f.display_name(), ELF_FIXTURE);
  const auto section = f.Section("schedhost_manifest");
  ASSERT_TRUE(section.has_value());
  const Manifest m = ParseManifestSection(*section);
  ASSERT_EQ(m.plugins.size(), 1u);
  EXPECT_EQ(m.plugins[0].name, "Fixture");
  EXPECT_EQ(m.plugins[0].version, "1.2.3");
  EXPECT_FALSE(f.Section("no_such_section").has_value());

  const ElfSymbol* entry = f.FindDefined("schedhost_plugin_library_v1");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->binding, STB_GLOBAL);
  EXPECT_EQ(entry->type, STT_FUNC);
  const ElfSymbol* data = f.FindDefined("fixture_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->type, STT_OBJECT);
  const ElfSymbol* weak = f.FindDefined("fixture_weak");
  ASSERT_NE(weak, nullptr);
  EXPECT_EQ(weak->binding, STB_WEAK);
  const ElfSymbol* puts_sym = FindAny(f, "puts");
  ASSERT_NE(puts_sym, nullptr);
  EXPECT_FALSE(puts_sym->defined);
  EXPECT_EQ(f.FindDefined("puts"), nullptr);
  EXPECT_EQ(FindAny(f, "fixture_hidden"), nullptr);
  EXPECT_TRUE(f.GnuUniqueSymbols().empty());
}

TEST(ElfFileTest, FlagsGnuUniqueSymbols) {
  if (!UNIQUE_FIXTURE_IS_GNU) {
    GTEST_SKIP() << "g++ is not installed: only g++ emits GNU_UNIQUE symbols";
  }
  const ElfFile f = ElfFile::Read(UNIQUE_FIXTURE);
  const std::vector<std::string> unique = f.GnuUniqueSymbols();
  ASSERT_FALSE(unique.empty());
  EXPECT_NE(std::find(unique.begin(), unique.end(), "_ZZ7CounterIiERivE5count"), unique.end());
}

TEST(ElfFileTest, ReadNamesTheFileWhenItCannotRead) {
  const std::pair<const char*, std::string> cases[] = {
      {"/nonexistent/libfoo.so", "/nonexistent/libfoo.so: cannot read: "},
      {"/", "/: not a regular file"},
  };
  for (const auto& [path, error] : cases) {
    try {
      ElfFile::Read(path);
      ADD_FAILURE() << path << " accepted";
    } catch (const ElfError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(error, 0), 0u) << e.what();
    }
  }
}

struct HeaderCase {
  std::string name;
  std::function<void(std::vector<uint8_t>&)> edit;
  std::string error;
};

TEST(ElfFileTest, RefusesBadFilesWithSpecificErrors) {
  const std::vector<uint8_t> good = ReadBytes(ELF_FIXTURE);
  ASSERT_GT(good.size(), 1000u);
  const bool x86 = ElfFile::HostMachine() == EM_X86_64;
  const std::string host = x86 ? "x86_64" : "aarch64";
  const HeaderCase cases[] = {
      {"empty", [](auto& b) { b.clear(); }, "libfoo.so: not an ELF file (empty)"},
      {"text",
       [](auto& b) {
         b.assign({'h', 'e', 'l', 'l', 'o', '\n'});
       },
       "libfoo.so: not an ELF file (bad magic)"},
      {"magic prefix", [](auto& b) { b.resize(3); },
       "libfoo.so: truncated: 3 bytes, shorter than the ELF identification (16 bytes)"},
      {"ident only", [](auto& b) { b.resize(40); },
       "libfoo.so: truncated: the ELF header needs 64 bytes, the file has 40"},
      {"32-bit", [](auto& b) { b[EI_CLASS] = ELFCLASS32; },
       "libfoo.so: a 32-bit ELF file; this host loads only 64-bit libraries"},
      {"bad class", [](auto& b) { b[EI_CLASS] = 7; }, "libfoo.so: invalid ELF class 7"},
      {"big-endian", [](auto& b) { b[EI_DATA] = ELFDATA2MSB; },
       "libfoo.so: big-endian ELF; this host is little-endian"},
      {"bad data", [](auto& b) { b[EI_DATA] = 9; }, "libfoo.so: invalid ELF data encoding 9"},
      {"version", [](auto& b) { b[EI_VERSION] = 0; }, "libfoo.so: unsupported ELF version 0"},
      {"other machine",
       [x86](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_machine = x86 ? EM_AARCH64 : EM_X86_64;
         SetHeader(b, h);
       },
       std::string("libfoo.so: built for ") + (x86 ? "aarch64" : "x86_64") + ", this host is " +
           host},
      {"riscv",
       [](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_machine = EM_RISCV;
         SetHeader(b, h);
       },
       "libfoo.so: built for riscv, this host is " + host},
      {"executable",
       [](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_type = ET_EXEC;
         SetHeader(b, h);
       },
       "libfoo.so: not a shared library (it is an executable, ET_EXEC)"},
      {"object",
       [](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_type = ET_REL;
         SetHeader(b, h);
       },
       "libfoo.so: not a shared library (it is a relocatable object, ET_REL)"},
      {"truncated to 100 bytes", [](auto& b) { b.resize(100); },
       "libfoo.so: truncated: section header table at offset "},
      {"section header entry size",
       [](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_shentsize = 32;
         SetHeader(b, h);
       },
       "libfoo.so: section header entries are 32 bytes, expected 64"},
      {"section table offset huge",
       [](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_shoff = ~uint64_t{0} - 10;
         SetHeader(b, h);
       },
       "libfoo.so: truncated: section header table at offset 18446744073709551605 beyond file "
       "size"},
      {"name table index",
       [](auto& b) {
         Elf64_Ehdr h = Header(b);
         h.e_shstrndx = h.e_shnum + 3;
         SetHeader(b, h);
       },
       "is out of range"},
      {"section name offset",
       [](auto& b) { EditSection(b, ".text", [](Elf64_Shdr& sh) { sh.sh_name = 1u << 30; }); },
       "libfoo.so: name of section "},
      {"section beyond the file",
       [](auto& b) {
         EditSection(b, ".text", [&](Elf64_Shdr& sh) { sh.sh_offset = b.size() - 4; });
       },
       "libfoo.so: truncated: section .text (offset "},
      {"dynsym entry size",
       [](auto& b) { EditSection(b, ".dynsym", [](Elf64_Shdr& sh) { sh.sh_entsize = 16; }); },
       "libfoo.so: .dynsym entries are 16 bytes, expected 24"},
      {"dynsym link",
       [](auto& b) { EditSection(b, ".dynsym", [](Elf64_Shdr& sh) { sh.sh_link = 0; }); },
       "libfoo.so: .dynsym links to section 0, which is not a string table"},
      {"dynsym string table too small",
       [](auto& b) { EditSection(b, ".dynstr", [](Elf64_Shdr& sh) { sh.sh_size = 2; }); },
       "libfoo.so: name of .dynsym entry "},
  };
  for (const HeaderCase& c : cases) {
    std::vector<uint8_t> bytes = good;
    c.edit(bytes);
    const std::string error = ParseError(std::move(bytes));
    EXPECT_NE(error.find(c.error), std::string::npos)
        << c.name << ": got \"" << error << "\", wanted \"" << c.error << "\"";
  }
}

// Every prefix of a real library, and many random corruptions of it, must either parse or
// fail with ElfError: never crash, never read out of bounds (run under ASan to prove the latter).
TEST(ElfFileTest, SurvivesTruncationAndCorruption) {
  const std::vector<uint8_t> good = ReadBytes(ELF_FIXTURE);
  size_t refused = 0;
  for (size_t len = 0; len < good.size(); len += (len < 256 ? 1 : 97)) {
    std::vector<uint8_t> prefix(good.begin(), good.begin() + static_cast<ptrdiff_t>(len));
    if (ParseError(std::move(prefix)) != "(accepted)") ++refused;
  }
  EXPECT_GT(refused, 256u);
  std::mt19937 rng(12345);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < flips; ++k) {
      // Aim most flips at the headers, where the offsets live.
      const size_t where = (rng() % 2 == 0) ? rng() % 64 : rng() % bytes.size();
      bytes[where] = static_cast<uint8_t>(rng());
    }
    ParseError(std::move(bytes));  // must simply return
  }
}

TEST(ElfFileTest, NamesMachines) {
  EXPECT_EQ(ElfFile::MachineName(EM_X86_64), "x86_64");
  EXPECT_EQ(ElfFile::MachineName(EM_AARCH64), "aarch64");
  EXPECT_EQ(ElfFile::MachineName(0xbeef), "e_machine 48879");
}

}  // namespace
}  // namespace schedhost::loader
