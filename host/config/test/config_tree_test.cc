#include "host/config/config_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/config/config_error.h"

namespace schedhost::config {
namespace {

using ::testing::HasSubstr;

std::string_view View(schedhost_str s) { return std::string_view(s.data, s.len); }
schedhost_str Str(std::string_view s) { return schedhost_str{s.data(), s.size()}; }

constexpr std::string_view kArgs = R"(zeta = "last-declared-first"
alpha = 42
ratio = 0.25
enabled = false
list = [1, "two", 3.5, true, { k = "v" }]

[nested]
b = 2
a = 1
)";

class ConfigTreeTest : public ::testing::Test {
 protected:
  std::shared_ptr<const ConfigNode> tree_ = ParsePluginArgs(kArgs, "args.toml");
  const schedhost_config* root_ = AsAbi(tree_.get());
  const schedhost_config* Get(std::string_view key) { return ConfigGet(root_, Str(key)); }
};

TEST_F(ConfigTreeTest, KindsOfEveryValue) {
  struct Case {
    std::string key;
    int32_t kind;
  };
  const std::vector<Case> cases = {
      {"zeta", SCHEDHOST_CONFIG_STRING}, {"alpha", SCHEDHOST_CONFIG_INT},
      {"ratio", SCHEDHOST_CONFIG_FLOAT}, {"enabled", SCHEDHOST_CONFIG_BOOL},
      {"list", SCHEDHOST_CONFIG_ARRAY},  {"nested", SCHEDHOST_CONFIG_TABLE},
      {"absent", SCHEDHOST_CONFIG_NONE},
  };
  EXPECT_EQ(ConfigKind(root_), SCHEDHOST_CONFIG_TABLE);
  for (const Case& c : cases) EXPECT_EQ(ConfigKind(Get(c.key)), c.kind) << c.key;
}

TEST_F(ConfigTreeTest, TablesKeepFileOrder) {
  ASSERT_EQ(ConfigLen(root_), 6u);
  const std::vector<std::string> expected = {"zeta", "alpha", "ratio", "enabled", "list", "nested"};
  for (size_t i = 0; i < expected.size(); ++i) {
    schedhost_str key{};
    const schedhost_config* child = ConfigAt(root_, i, &key);
    ASSERT_NE(child, nullptr);
    EXPECT_EQ(View(key), expected[i]);
    EXPECT_EQ(child, Get(expected[i]));
  }
  const schedhost_config* nested = Get("nested");
  schedhost_str key{};
  ASSERT_NE(ConfigAt(nested, 0, &key), nullptr);
  EXPECT_EQ(View(key), "b");
  ASSERT_NE(ConfigAt(nested, 1, &key), nullptr);
  EXPECT_EQ(View(key), "a");
}

TEST_F(ConfigTreeTest, ScalarReaders) {
  schedhost_str s{};
  EXPECT_EQ(ConfigString(Get("zeta"), &s), SCHEDHOST_OK);
  EXPECT_EQ(View(s), "last-declared-first");
  int64_t i = 0;
  EXPECT_EQ(ConfigInt(Get("alpha"), &i), SCHEDHOST_OK);
  EXPECT_EQ(i, 42);
  double f = 0;
  EXPECT_EQ(ConfigFloat(Get("ratio"), &f), SCHEDHOST_OK);
  EXPECT_EQ(f, 0.25);
  EXPECT_EQ(ConfigFloat(Get("alpha"), &f), SCHEDHOST_OK);  // integers convert
  EXPECT_EQ(f, 42.0);
  int32_t b = 7;
  EXPECT_EQ(ConfigBool(Get("enabled"), &b), SCHEDHOST_OK);
  EXPECT_EQ(b, 0);
}

TEST_F(ConfigTreeTest, WrongTypesAreRefusedAndLeaveOutputAlone) {
  schedhost_str s{"untouched", 9};
  int64_t i = -1;
  double f = -1;
  int32_t b = -1;
  EXPECT_EQ(ConfigString(Get("alpha"), &s), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigInt(Get("ratio"), &i), SCHEDHOST_E_WRONG_TYPE);  // floats do not truncate
  EXPECT_EQ(ConfigInt(Get("zeta"), &i), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigFloat(Get("zeta"), &f), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigBool(Get("alpha"), &b), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigInt(root_, &i), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(View(s), "untouched");
  EXPECT_EQ(i, -1);
  EXPECT_EQ(f, -1);
  EXPECT_EQ(b, -1);
}

TEST_F(ConfigTreeTest, ArraysHoldMixedValues) {
  const schedhost_config* list = Get("list");
  ASSERT_EQ(ConfigLen(list), 5u);
  schedhost_str key{"x", 1};
  const schedhost_config* first = ConfigAt(list, 0, &key);
  EXPECT_EQ(key.len, 0u);  // array entries have no key
  int64_t i = 0;
  EXPECT_EQ(ConfigInt(first, &i), SCHEDHOST_OK);
  EXPECT_EQ(i, 1);
  EXPECT_EQ(ConfigKind(ConfigAt(list, 1, nullptr)), SCHEDHOST_CONFIG_STRING);
  EXPECT_EQ(ConfigKind(ConfigAt(list, 2, nullptr)), SCHEDHOST_CONFIG_FLOAT);
  EXPECT_EQ(ConfigKind(ConfigAt(list, 3, nullptr)), SCHEDHOST_CONFIG_BOOL);
  const schedhost_config* table = ConfigAt(list, 4, nullptr);
  schedhost_str v{};
  EXPECT_EQ(ConfigString(ConfigGet(table, Str("k")), &v), SCHEDHOST_OK);
  EXPECT_EQ(View(v), "v");
  EXPECT_EQ(ConfigAt(list, 5, &key), nullptr);
  EXPECT_EQ(key.len, 0u);
  EXPECT_EQ(ConfigGet(list, Str("k")), nullptr);  // arrays have no keys
}

TEST_F(ConfigTreeTest, LocationsPointIntoTheFile) {
  EXPECT_EQ(View(ConfigLocation(Get("zeta"))), "args.toml:1:8");
  EXPECT_EQ(View(ConfigLocation(Get("alpha"))), "args.toml:2:9");
  EXPECT_EQ(View(ConfigLocation(ConfigGet(Get("nested"), Str("a")))), "args.toml:9:5");
  EXPECT_EQ(View(ConfigLocation(ConfigAt(Get("list"), 1, nullptr))), "args.toml:5:12");
}

TEST(ConfigTreeNullTest, EveryAccessorIsNullSafe) {
  schedhost_str s{"untouched", 9};
  int64_t i = 0;
  double f = 0;
  int32_t b = 0;
  EXPECT_EQ(ConfigKind(nullptr), SCHEDHOST_CONFIG_NONE);
  EXPECT_EQ(ConfigGet(nullptr, Str("a")), nullptr);
  EXPECT_EQ(ConfigLen(nullptr), 0u);
  EXPECT_EQ(ConfigAt(nullptr, 0, &s), nullptr);
  EXPECT_EQ(s.len, 0u);
  EXPECT_EQ(ConfigAt(nullptr, 0, nullptr), nullptr);
  EXPECT_EQ(ConfigString(nullptr, &s), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigInt(nullptr, &i), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigFloat(nullptr, &f), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigBool(nullptr, &b), SCHEDHOST_E_WRONG_TYPE);
  EXPECT_EQ(ConfigLocation(nullptr).len, 0u);
  EXPECT_NE(ConfigLocation(nullptr).data, nullptr);

  auto tree = ParsePluginArgs("n = 1\ns = \"x\"\nf = 1.0\nb = true\n");
  const schedhost_config* root = AsAbi(tree.get());
  EXPECT_EQ(ConfigGet(root, schedhost_str{nullptr, 0}), nullptr);
  EXPECT_EQ(ConfigGet(root, schedhost_str{nullptr, 3}), nullptr);
  EXPECT_EQ(ConfigString(ConfigGet(root, Str("s")), nullptr), SCHEDHOST_E_INVALID_ARGUMENT);
  EXPECT_EQ(ConfigInt(ConfigGet(root, Str("n")), nullptr), SCHEDHOST_E_INVALID_ARGUMENT);
  EXPECT_EQ(ConfigFloat(ConfigGet(root, Str("f")), nullptr), SCHEDHOST_E_INVALID_ARGUMENT);
  EXPECT_EQ(ConfigBool(ConfigGet(root, Str("b")), nullptr), SCHEDHOST_E_INVALID_ARGUMENT);
  EXPECT_EQ(ConfigLen(ConfigGet(root, Str("n"))), 0u);  // scalars have no entries
  EXPECT_EQ(ConfigAt(ConfigGet(root, Str("n")), 0, nullptr), nullptr);
}

TEST(ConfigTreeErrorTest, DatesAndBadTomlAreRefusedWithLocation) {
  try {
    ParsePluginArgs("ok = 1\nwhen = 1979-05-27\n", "args.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line, 2);
    EXPECT_EQ(e.column, 8);
    EXPECT_THAT(e.what(), HasSubstr("args.toml:2:8: plugin arguments cannot hold a date"));
  }
  try {
    ParsePluginArgs("a = [1,\n", "args.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file, "args.toml");
    EXPECT_THAT(e.message, HasSubstr("invalid TOML"));
  }
}

TEST(ConfigTreeAbiTest, AccessorsFitTheHostApiTable) {
  // Compiles only while the accessors have exactly the table's signatures.
  schedhost_host_api api{};
  api.config_kind = &ConfigKind;
  api.config_get = &ConfigGet;
  api.config_len = &ConfigLen;
  api.config_at = &ConfigAt;
  api.config_string = &ConfigString;
  api.config_int = &ConfigInt;
  api.config_float = &ConfigFloat;
  api.config_bool = &ConfigBool;
  api.config_location = &ConfigLocation;
  auto tree = ParsePluginArgs("k = 5\n");
  int64_t v = 0;
  EXPECT_EQ(api.config_int(api.config_get(AsAbi(tree.get()), Str("k")), &v), SCHEDHOST_OK);
  EXPECT_EQ(v, 5);
}

TEST(ConfigTreeErrorTest, NodeFindMatchesConfigGet) {
  auto tree = ParsePluginArgs("a = 1\n[t]\nb = 2\n");
  ASSERT_NE(tree->Find("t"), nullptr);
  EXPECT_EQ(tree->Find("t")->Find("b")->int_value, 2);
  EXPECT_EQ(tree->Find("missing"), nullptr);
  EXPECT_EQ(tree->Find("a")->Find("x"), nullptr);  // not a table
}

}  // namespace
}  // namespace schedhost::config
