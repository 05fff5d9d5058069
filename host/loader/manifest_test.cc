#include "host/loader/manifest.h"

#include <gtest/gtest.h>
#include <schedhost/plugin.h>

#include <string>

namespace schedhost::loader {
namespace {

constexpr std::string_view kGood =
    "schedhost-manifest 1\n"
    "abi 1.0\n"
    "min-host-minor 0\n"
    "sdk 1.0.0\n"
    "compiler gcc 12.2.0 libstdc++\n"
    "plugin NodeName 1.0.0\n"
    "plugin NodePorts 2.1.0\n";

TEST(ManifestTest, ParsesEveryField) {
  const Manifest m = ParseManifest(kGood);
  EXPECT_EQ(m.abi_major, 1u);
  EXPECT_EQ(m.abi_minor, 0u);
  EXPECT_EQ(m.min_host_minor, 0u);
  EXPECT_EQ(m.sdk_version, "1.0.0");
  EXPECT_EQ(m.compiler, "gcc 12.2.0 libstdc++");
  ASSERT_EQ(m.plugins.size(), 2u);
  EXPECT_EQ(m.plugins[0].name, "NodeName");
  EXPECT_EQ(m.plugins[0].version, "1.0.0");
  EXPECT_EQ(m.plugins[1].name, "NodePorts");
  EXPECT_EQ(m.plugins[1].version, "2.1.0");
}

TEST(ManifestTest, AcceptsWhatTheSdkMacrosWrite) {
  // SCHEDHOST_MANIFEST_HEADER is what both SCHEDHOST_C_MANIFEST and SCHEDHOST_PLUGIN_LIBRARY use.
  const Manifest m = ParseManifest(SCHEDHOST_MANIFEST_HEADER(3) "plugin Hello 0.1.0\n");
  EXPECT_EQ(m.abi_major, static_cast<uint32_t>(SCHEDHOST_ABI_MAJOR));
  EXPECT_EQ(m.abi_minor, static_cast<uint32_t>(SCHEDHOST_ABI_MINOR));
  EXPECT_EQ(m.min_host_minor, 3u);
  EXPECT_EQ(m.sdk_version, SCHEDHOST_SDK_VERSION);
  EXPECT_FALSE(m.compiler.empty());
  ASSERT_EQ(m.plugins.size(), 1u);
}

TEST(ManifestTest, IgnoresUnknownKeysAndBlankLines) {
  const Manifest m = ParseManifest(
      "schedhost-manifest 1\n\nabi 1.4\nfuture-key anything at all\nmin-host-minor 2\r\n"
      "sdk 1.4.0\ncompiler clang 14.0.6 \n");
  EXPECT_EQ(m.abi_minor, 4u);
  EXPECT_EQ(m.min_host_minor, 2u);
  EXPECT_EQ(m.compiler, "clang 14.0.6");
  EXPECT_TRUE(m.plugins.empty());
}

struct BadCase {
  std::string text;
  std::string error_part;
};

TEST(ManifestTest, RejectsMalformedText) {
  const std::string tail = "min-host-minor 0\nsdk 1.0.0\ncompiler gcc\n";
  const BadCase cases[] = {
      {"", "empty manifest"},
      {"\n\n", "empty manifest"},
      {"abi 1.0\n", "line 1: expected 'schedhost-manifest 1' first"},
      {"schedhost-manifest 2\nabi 1.0\n" + tail, "manifest format 2 is not supported"},
      {"schedhost-manifest one\n", "line 1: expected 'schedhost-manifest 1'"},
      {"schedhost-manifest 1\nabi 1\n" + tail, "line 2: expected 'abi <major>.<minor>'"},
      {"schedhost-manifest 1\nabi 1.x\n" + tail, "line 2: expected 'abi <major>.<minor>'"},
      {"schedhost-manifest 1\nabi -1.0\n" + tail, "line 2: expected 'abi <major>.<minor>'"},
      {"schedhost-manifest 1\nabi 1.0 extra\n" + tail, "line 2: expected 'abi <major>.<minor>'"},
      {"schedhost-manifest 1\nabi 99999999999.0\n" + tail, "line 2: expected 'abi"},
      {"schedhost-manifest 1\nabi 1.0\nabi 1.0\n" + tail, "line 3: 'abi' appears twice"},
      {"schedhost-manifest 1\nabi 1.0\nmin-host-minor\nsdk 1\ncompiler c\n",
       "line 3: expected 'min-host-minor <number>'"},
      {"schedhost-manifest 1\nabi 1.0\nmin-host-minor 0\nsdk\ncompiler c\n",
       "line 4: expected 'sdk <version>'"},
      {"schedhost-manifest 1\nabi 1.0\nmin-host-minor 0\nsdk 1\ncompiler\n",
       "line 5: expected 'compiler <description>'"},
      {"schedhost-manifest 1\nabi 1.0\n" + tail + "plugin OnlyName\n",
       "line 6: expected 'plugin <Name> <version>'"},
      {"schedhost-manifest 1\nabi 1.0\n" + tail + "plugin A 1\nplugin A 2\n",
       "line 7: plugin A is listed twice"},
      {"schedhost-manifest 1\nabi 1.0\n" + tail + "schedhost-manifest 1\n",
       "may only be the first line"},
      {"schedhost-manifest 1\nabi 1.0\nsdk 1\ncompiler c\n", "missing 'min-host-minor' line"},
      {"schedhost-manifest 1\nmin-host-minor 0\nsdk 1\ncompiler c\n", "missing 'abi' line"},
      {"schedhost-manifest 1\nabi 1.0\nmin-host-minor 0\ncompiler c\n", "missing 'sdk' line"},
      {"schedhost-manifest 1\nabi 1.0\nmin-host-minor 0\nsdk 1\n", "missing 'compiler' line"},
      {"schedhost-manifest 1\nabi 1.0\x01\n" + tail, "line 2: control characters"},
  };
  for (const BadCase& c : cases) {
    try {
      ParseManifest(c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const ManifestError& e) {
      EXPECT_NE(std::string(e.what()).find(c.error_part), std::string::npos)
          << "text: " << c.text << "\nerror: " << e.what() << "\nwanted: " << c.error_part;
    }
  }
}

std::vector<uint8_t> Section(std::string_view s) { return {s.begin(), s.end()}; }

TEST(ManifestTest, SectionNeedsNulAndAllowsPaddingOnly) {
  std::vector<uint8_t> ok = Section(kGood);
  ok.insert(ok.end(), 5, 0);  // the linker may pad the section
  EXPECT_EQ(ParseManifestSection(ok).plugins.size(), 2u);

  EXPECT_THROW(
      {
        try {
          ParseManifestSection(Section(kGood));
        } catch (const ManifestError& e) {
          EXPECT_NE(std::string(e.what()).find("not NUL-terminated"), std::string::npos);
          throw;
        }
      },
      ManifestError);

  std::vector<uint8_t> two = Section(kGood);
  two.push_back(0);
  const std::vector<uint8_t> again = Section(kGood);
  two.insert(two.end(), again.begin(), again.end());
  two.push_back(0);
  EXPECT_THROW(
      {
        try {
          ParseManifestSection(two);
        } catch (const ManifestError& e) {
          EXPECT_NE(std::string(e.what()).find("more than one manifest"), std::string::npos);
          throw;
        }
      },
      ManifestError);
}

}  // namespace
}  // namespace schedhost::loader
