// ArgsReader (sdk/include/schedhost/args.hpp) over the host's own argument trees: each accessor's
// value and its refusals, every message naming plugin_config.<Plugin>.<path> at the key's
// file:line:col, unknown keys with a suggestion, arrays of tables, no plugin_config at all, a
// host older than abi 1.4 (value locations) and the whole path through a profile the host builds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <schedhost/args.hpp>
#include <schedhost/args_tree.hpp>
#include <schedhost/names.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/config_tree.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"

namespace schedhost {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Tree is a plugin_config table read from TOML by the host's config code ("test.toml").
class Tree {
 public:
  explicit Tree(std::string_view toml) : node_(config::ParsePluginArgs(toml, "test.toml")) {}
  Args args(const schedhost_host_api* api = framework::HostApi()) const {
    return Args(api, config::AsAbi(node_.get()));
  }
  ArgsReader Reader(const schedhost_host_api* api = framework::HostApi()) const {
    return ArgsReader(args(api), "NodePool");
  }

 private:
  std::shared_ptr<const config::ConfigNode> node_;
};

// ErrorOf runs `read` and returns the ArgsError it throws ("" when it throws none).
std::string ErrorOf(const std::function<void()>& read) {
  try {
    read();
  } catch (const ArgsError& e) {
    return e.what();
  }
  return "";
}

// The error of reading one key of `toml` with `read`.
std::string ErrorOf(std::string_view toml, const std::function<void(ArgsReader&)>& read) {
  const Tree tree(toml);
  ArgsReader r = tree.Reader();
  return ErrorOf([&] {
    read(r);
    r.Done();
  });
}

TEST(ArgsReaderTest, IntReadsTheValueOrTheFallbackWithinItsRange) {
  const Tree tree("max_per_zone = 7\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.Int("max_per_zone", {.min = 0, .fallback = 10}), 7);
  EXPECT_EQ(r.Int("absent", {.min = 0, .fallback = 10}), 10);
  r.Done();

  // Errors are located at the key (column 3), not at the value (column 20).
  const std::string toml = "  max_per_zone   =   -1\n";
  EXPECT_EQ(ErrorOf(toml, [](ArgsReader& r) { r.Int("max_per_zone", {.min = 0, .fallback = 10}); }),
            "test.toml:1:3: plugin_config.NodePool.max_per_zone: must be at least 0, got -1");
  EXPECT_EQ(
      ErrorOf(toml, [](ArgsReader& r) { r.Int("max_per_zone", {.min = 0, .max = 100}); }),
      "test.toml:1:3: plugin_config.NodePool.max_per_zone: must be in the range [0, 100], got -1");
  EXPECT_EQ(ErrorOf(toml, [](ArgsReader& r) { r.Int("max_per_zone", {.max = -2}); }),
            "test.toml:1:3: plugin_config.NodePool.max_per_zone: must be at most -2, got -1");
  EXPECT_EQ(
      ErrorOf("max_per_zone = \"3\"", [](ArgsReader& r) { r.Int("max_per_zone"); }),
      "test.toml:1:1: plugin_config.NodePool.max_per_zone: expected an integer, not a string");
  EXPECT_EQ(ErrorOf("x = 1", [](ArgsReader& r) { r.RequiredInt("count"); }),
            "test.toml:1:1: plugin_config.NodePool.count: is required");
}

TEST(ArgsReaderTest, FloatAcceptsIntegersAndChecksItsRange) {
  const Tree tree("a = 2\nb = 0.25\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.Float("a"), 2.0);
  EXPECT_EQ(r.RequiredFloat("b", {.min = 0, .max = 1}), 0.25);
  EXPECT_EQ(r.Float("c", {.fallback = 1.5}), 1.5);
  r.Done();
  EXPECT_EQ(
      ErrorOf("t = 0.0005", [](ArgsReader& r) { r.Float("t", {.min = 0.001, .max = 900}); }),
      "test.toml:1:1: plugin_config.NodePool.t: must be in the range [0.001, 900], got 0.0005");
  EXPECT_EQ(ErrorOf("t = nan", [](ArgsReader& r) { r.Float("t"); }),
            "test.toml:1:1: plugin_config.NodePool.t: must be a number, not nan");
  EXPECT_EQ(ErrorOf("t = true", [](ArgsReader& r) { r.Float("t"); }),
            "test.toml:1:1: plugin_config.NodePool.t: expected a number, not a boolean");
}

TEST(ArgsReaderTest, BoolReadsBooleansOnly) {
  const Tree tree("strict = true\n");
  ArgsReader r = tree.Reader();
  EXPECT_TRUE(r.Bool("strict"));
  EXPECT_TRUE(r.Bool("absent", true));
  r.Done();
  EXPECT_EQ(ErrorOf("strict = 1", [](ArgsReader& r) { r.RequiredBool("strict"); }),
            "test.toml:1:1: plugin_config.NodePool.strict: expected a boolean, not an integer");
}

TEST(ArgsReaderTest, StringChecksAllowedValuesAndValidators) {
  const Tree tree("label = \"example.com/pool\"\nmode = \"fast\"\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.RequiredString("label", {.valid = names::IsQualifiedName, .what = "a label key"}),
            "example.com/pool");
  EXPECT_EQ(r.String("mode", {.one_of = {"fast", "safe"}}), "fast");
  EXPECT_EQ(r.String("absent", {.fallback = "x"}), "x");
  r.Done();

  EXPECT_EQ(ErrorOf("label = \"a b\"",
                    [](ArgsReader& r) {
                      r.String("label", {.valid = names::IsQualifiedName, .what = "a label key"});
                    }),
            "test.toml:1:1: plugin_config.NodePool.label: \"a b\" is not a label key");
  EXPECT_EQ(ErrorOf("mode = \"slow\"",
                    [](ArgsReader& r) {
                      r.String("mode", {.one_of = {"fast", "safe"}});
                    }),
            "test.toml:1:1: plugin_config.NodePool.mode: unsupported value \"slow\"; supported "
            "values: \"fast\", \"safe\"");
  EXPECT_EQ(ErrorOf("mode = \"Fast\"",
                    [](ArgsReader& r) {
                      r.String("mode", {.one_of = {"fast", "safe"}});
                    }),
            "test.toml:1:1: plugin_config.NodePool.mode: unsupported value \"Fast\"; did you mean "
            "\"fast\"?");
  EXPECT_EQ(ErrorOf("mode = [\"fast\"]", [](ArgsReader& r) { r.String("mode"); }),
            "test.toml:1:1: plugin_config.NodePool.mode: expected a string, not an array");
}

TEST(ArgsReaderTest, OneOfMapsNamesToValues) {
  enum class Mode { kFast, kSafe };
  const Tree tree("mode = \"safe\"\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.RequiredOneOf<Mode>("mode", {{"fast", Mode::kFast}, {"safe", Mode::kSafe}}),
            Mode::kSafe);
  EXPECT_EQ(r.OneOf<Mode>("other", {{"fast", Mode::kFast}}, Mode::kSafe), Mode::kSafe);
  r.Done();
  EXPECT_EQ(
      ErrorOf(
          "mode = \"Balanced\"",
          [](ArgsReader& r) {
            r.RequiredOneOf<int>("mode", {{"MostAllocated", 1}, {"RequestedToCapacityRatio", 2}});
          }),
      "test.toml:1:1: plugin_config.NodePool.mode: unsupported value \"Balanced\"; "
      "supported values: \"MostAllocated\", \"RequestedToCapacityRatio\"");
  // Close enough to a value to be a typo of it (the host's rule for keys).
  EXPECT_THAT(ErrorOf("mode = \"LeastAllocated\"",
                      [](ArgsReader& r) {
                        r.RequiredOneOf<int>("mode", {{"MostAllocated", 1}});
                      }),
              HasSubstr("unsupported value \"LeastAllocated\"; did you mean \"MostAllocated\"?"));
}

TEST(ArgsReaderTest, QuantityReadsKubernetesQuantitiesInItsUnit) {
  const Tree tree("cpu = \"500m\"\nmemory = \"2Gi\"\ncores = 2\npods = 110\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.Quantity("cpu", {.unit = QuantityUnit::kMilli}), 500);
  EXPECT_EQ(r.RequiredQuantity("memory"), int64_t{2} << 30);
  EXPECT_EQ(r.Quantity("cores", {.unit = QuantityUnit::kMilli}), 2000);
  EXPECT_EQ(r.Quantity("pods", {.min = 1}), 110);
  EXPECT_EQ(r.Quantity("absent", {.fallback = 7}), 7);
  r.Done();
  EXPECT_EQ(ErrorOf("memory = \"4GB\"", [](ArgsReader& r) { r.Quantity("memory"); }),
            "test.toml:1:1: plugin_config.NodePool.memory: \"4GB\" is not a quantity: unknown "
            "suffix \"GB\" (want m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such "
            "as e3)");
  EXPECT_EQ(
      ErrorOf("cpu = \"-100m\"",
              [](ArgsReader& r) { r.Quantity("cpu", {.unit = QuantityUnit::kMilli, .min = 0}); }),
      "test.toml:1:1: plugin_config.NodePool.cpu: must be at least 0, got -100m");
  EXPECT_EQ(ErrorOf("cpu = \"3\"",
                    [](ArgsReader& r) {
                      r.Quantity("cpu", {.unit = QuantityUnit::kMilli, .max = 2500});
                    }),
            "test.toml:1:1: plugin_config.NodePool.cpu: must be at most 2500m, got 3");
  EXPECT_EQ(ErrorOf("cpu = 1.5", [](ArgsReader& r) { r.Quantity("cpu"); }),
            "test.toml:1:1: plugin_config.NodePool.cpu: expected a quantity such as \"2\", "
            "\"500m\" or \"4Gi\", not a float");
}

TEST(ArgsReaderTest, DurationReadsGoDurations) {
  const Tree tree("timeout = \"1m30s\"\nretry = \"250ms\"\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.Duration("timeout", {.min = 1s}), 90s);
  EXPECT_EQ(r.RequiredDuration("retry"), 250ms);
  EXPECT_EQ(r.Duration("absent", {.fallback = 5s}), 5s);
  r.Done();
  EXPECT_EQ(ErrorOf("timeout = \"30\"", [](ArgsReader& r) { r.Duration("timeout"); }),
            "test.toml:1:1: plugin_config.NodePool.timeout: invalid duration \"30\": missing unit "
            "(use ns, us, ms, s, m or h, e.g. \"1s\")");
  EXPECT_EQ(
      ErrorOf("timeout = \"20m\"", [](ArgsReader& r) { r.Duration("timeout", {.max = 15min}); }),
      "test.toml:1:1: plugin_config.NodePool.timeout: must be at most 15m0s, got 20m0s");
  EXPECT_EQ(ErrorOf("timeout = 30", [](ArgsReader& r) { r.Duration("timeout"); }),
            "test.toml:1:1: plugin_config.NodePool.timeout: expected a duration such as \"30s\" or "
            "\"1m30s\", not an integer");
}

TEST(ArgsReaderTest, StringsChecksEachElementAtTheElement) {
  const Tree tree("labels = [\"a\", \"b/c\"]\n");
  ArgsReader r = tree.Reader();
  EXPECT_THAT(r.Strings("labels"), ElementsAre("a", "b/c"));
  EXPECT_TRUE(r.Strings("absent").empty());
  r.Done();
  EXPECT_EQ(ErrorOf("labels = [\"ok\", \"not ok\"]",
                    [](ArgsReader& r) {
                      r.Strings("labels", {.valid = names::IsLabelValue, .what = "a label value"});
                    }),
            "test.toml:1:17: plugin_config.NodePool.labels[1]: \"not ok\" is not a label value");
  EXPECT_EQ(ErrorOf("labels = [\"a\", 2]", [](ArgsReader& r) { r.Strings("labels"); }),
            "test.toml:1:16: plugin_config.NodePool.labels[1]: expected a string, not an integer");
  EXPECT_EQ(
      ErrorOf("labels = \"a\"", [](ArgsReader& r) { r.RequiredStrings("labels"); }),
      "test.toml:1:1: plugin_config.NodePool.labels: expected an array of strings, not a string");
}

TEST(ArgsReaderTest, NonEmptyRefusesAnEmptyStringAndEmptyElements) {
  const Tree tree("label = \"pool\"\nlabels = [\"a\"]\n");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(r.RequiredString("label", {.non_empty = true}), "pool");
  EXPECT_THAT(r.Strings("labels", {.non_empty = true}), ElementsAre("a"));
  EXPECT_EQ(r.String("absent", {.non_empty = true}), "");  // the rule checks given values
  r.Done();
  EXPECT_EQ(ErrorOf("label = \"\"", [](ArgsReader& r) { r.String("label", {.non_empty = true}); }),
            "test.toml:1:1: plugin_config.NodePool.label: must not be empty");
  EXPECT_EQ(ErrorOf("labels = [\"a\", \"\"]",
                    [](ArgsReader& r) { r.RequiredStrings("labels", {.non_empty = true}); }),
            "test.toml:1:16: plugin_config.NodePool.labels[1]: must not be empty");
  // Without the rule an empty string is a value like any other.
  EXPECT_EQ(ErrorOf("label = \"\"", [](ArgsReader& r) { r.String("label"); }), "");
}

TEST(ArgsReaderTest, UniqueRefusesARepeatedElementAtTheRepeat) {
  const Tree tree("zones = [\"a\", \"b\"]\n");
  ArgsReader r = tree.Reader();
  EXPECT_THAT(r.Strings("zones", {.unique = true}), ElementsAre("a", "b"));
  r.Done();
  EXPECT_EQ(ErrorOf("zones = [\"a\", \"b\", \"a\"]",
                    [](ArgsReader& r) { r.Strings("zones", {.unique = true}); }),
            "test.toml:1:20: plugin_config.NodePool.zones[2]: \"a\" is also element 0");
  // The element rules come first: a repeated element that is also invalid says it is invalid.
  EXPECT_EQ(ErrorOf("zones = [\"a b\", \"a b\"]",
                    [](ArgsReader& r) {
                      r.Strings("zones", {.valid = names::IsLabelValue,
                                          .what = "a label value",
                                          .unique = true});
                    }),
            "test.toml:1:10: plugin_config.NodePool.zones[0]: \"a b\" is not a label value");
  EXPECT_EQ(ErrorOf("zones = [\"a\", \"a\"]", [](ArgsReader& r) { r.Strings("zones"); }), "");
}

TEST(ArgsReaderTest, NestedTablesExtendThePathAndRefuseTheirUnknownKeys) {
  const std::string toml = "[strategy]\ntype = \"Most\"\n[strategy.shape]\npoints = 3\n";
  const Tree tree(toml);
  ArgsReader r = tree.Reader();
  std::string type;
  int64_t points = 0;
  EXPECT_TRUE(r.Table("strategy", [&](ArgsReader& s) {
    type = s.RequiredString("type");
    s.RequiredTable("shape", [&](ArgsReader& shape) { points = shape.Int("points"); });
  }));
  EXPECT_FALSE(r.Table("absent", [](ArgsReader&) { FAIL() << "called for an absent table"; }));
  r.Done();
  EXPECT_EQ(type, "Most");
  EXPECT_EQ(points, 3);

  EXPECT_EQ(
      ErrorOf("strategy = { tpye = \"Most\" }",
              [](ArgsReader& r) { r.Table("strategy", [](ArgsReader& s) { s.String("type"); }); }),
      "test.toml:1:14: plugin_config.NodePool.strategy.tpye: unknown key; did you mean "
      "\"type\"?");
  EXPECT_EQ(ErrorOf("strategy = 3", [](ArgsReader& r) { r.Table("strategy", [](ArgsReader&) {}); }),
            "test.toml:1:1: plugin_config.NodePool.strategy: expected a table, not an integer");
  EXPECT_EQ(ErrorOf("strategy = {}",
                    [](ArgsReader& r) {
                      r.Table("strategy", [](ArgsReader& s) { s.RequiredString("type"); });
                    }),
            "test.toml:1:1: plugin_config.NodePool.strategy.type: is required");
}

TEST(ArgsReaderTest, ArraysOfTablesNameEachElementsPath) {
  const std::string toml =
      "resources = [\n"
      "  { name = \"cpu\", weight = 1 },\n"
      "  { name = \"memory\" },\n"
      "  { name = \"gpu\", weight = 0 },\n"
      "]\n";
  struct Resource {
    std::string name;
    int64_t weight;
  };
  std::vector<Resource> got;
  const Tree tree("resources = [{ name = \"cpu\", weight = 2 }, { name = \"memory\" }]");
  ArgsReader r = tree.Reader();
  EXPECT_EQ(
      r.Tables("resources",
               [&](ArgsReader& item, size_t i) {
                 got.push_back({item.RequiredString("name"), item.Int("weight", {.fallback = 1})});
                 EXPECT_EQ(item.Path(),
                           "plugin_config.NodePool.resources[" + std::to_string(i) + "]");
               }),
      2u);
  EXPECT_EQ(r.Tables("absent", [](ArgsReader&) {}), 0u);
  r.Done();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].name, "memory");
  EXPECT_EQ(got[1].weight, 1);

  const auto read = [](ArgsReader& r) {
    r.Tables("resources", [](ArgsReader& item) {
      item.RequiredString("name");
      item.Int("weight", {.min = 1, .max = 100, .fallback = 1});
    });
  };
  // The third element's weight, at its key on line 4.
  EXPECT_EQ(ErrorOf(toml, read),
            "test.toml:4:19: plugin_config.NodePool.resources[2].weight: must be in the range "
            "[1, 100], got 0");
  EXPECT_EQ(ErrorOf("resources = [{ name = \"cpu\", wieght = 1 }]", read),
            "test.toml:1:30: plugin_config.NodePool.resources[0].wieght: unknown key; did you mean "
            "\"weight\"?");
  EXPECT_EQ(ErrorOf("resources = [{ name = \"cpu\" }, \"memory\"]", read),
            "test.toml:1:32: plugin_config.NodePool.resources[1]: expected a table, not a string");
  EXPECT_EQ(ErrorOf("resources = [{ weight = 1 }]", read),
            "test.toml:1:14: plugin_config.NodePool.resources[0].name: is required");
  EXPECT_EQ(ErrorOf("resources = { name = \"cpu\" }", read),
            "test.toml:1:1: plugin_config.NodePool.resources: expected an array of tables, not a "
            "table");
  // The array-of-tables form gives each element the location of its [[header]].
  EXPECT_EQ(ErrorOf("[[resources]]\nname = \"cpu\"\n[[resources]]\nweight = 3\n", read),
            "test.toml:3:1: plugin_config.NodePool.resources[1].name: is required");
}

TEST(ArgsReaderTest, DoneRefusesUnknownKeysSuggestingTheClosestKnownOne) {
  const auto read = [](ArgsReader& r) {
    r.Int("parallelism");
    r.String("label");
  };
  EXPECT_EQ(ErrorOf("parallelism = 2\n  paralelism = 3\n", read),
            "test.toml:2:3: plugin_config.NodePool.paralelism: unknown key; did you mean "
            "\"parallelism\"?");
  EXPECT_EQ(ErrorOf("colour = \"red\"", read),
            "test.toml:1:1: plugin_config.NodePool.colour: unknown key; known keys are: "
            "parallelism, label");
  EXPECT_EQ(
      ErrorOf("colour = \"red\"", [](ArgsReader&) {}),
      "test.toml:1:1: plugin_config.NodePool.colour: unknown key; NodePool takes no arguments");
  // A required key spelt wrongly is named where the misspelling is.
  EXPECT_EQ(ErrorOf("x = 1\nlable = \"a\"", [](ArgsReader& r) { r.RequiredString("label"); }),
            "test.toml:2:1: plugin_config.NodePool.label: is required; did you mean \"label\" "
            "instead of \"lable\"?");
  // Keys asked about through Has and Get are known too.
  EXPECT_EQ(ErrorOf("a = 1\nb = 2",
                    [](ArgsReader& r) {
                      EXPECT_TRUE(r.Has("a"));
                      EXPECT_EQ(r.Get("b").kind(), SCHEDHOST_CONFIG_INT);
                    }),
            "");
}

TEST(ArgsReaderTest, FailNamesAKeyOrAnElementWhereTheReaderLeftIt) {
  const Tree tree("zones = [\"a\", \"b\"]\nmin = 3\nmax = 2\n");
  ArgsReader r = tree.Reader();
  EXPECT_THAT(r.Keys(), ElementsAre("zones", "min", "max"));
  EXPECT_EQ(r.Path("min"), "plugin_config.NodePool.min");
  EXPECT_EQ(ErrorOf([&] { r.Fail("min", "is more than max (2)"); }),
            "test.toml:2:1: plugin_config.NodePool.min: is more than max (2)");
  EXPECT_EQ(ErrorOf([&] { r.Fail("zones", 1, "is listed twice"); }),
            "test.toml:1:15: plugin_config.NodePool.zones[1]: is listed twice");
  // An absent key is reported at its table.
  EXPECT_THAT(ErrorOf([&] { r.Fail("absent", "is needed with min"); }),
              HasSubstr(": plugin_config.NodePool.absent: is needed with min"));
}

TEST(ArgsReaderTest, WithoutPluginConfigOptionalKeysFallBackAndRequiredOnesStillNameTheirPath) {
  const Args none(framework::HostApi(), nullptr);
  ArgsReader r(none, "NodePool");
  EXPECT_EQ(r.Int("max_per_zone", {.min = 0, .fallback = 10}), 10);
  EXPECT_EQ(r.String("label", {.fallback = "example.com/pool"}), "example.com/pool");
  EXPECT_EQ(r.Tables("resources", [](ArgsReader&) {}), 0u);
  EXPECT_FALSE(r.Has("anything"));
  r.Done();
  EXPECT_EQ(ErrorOf([&] { r.RequiredString("label"); }),
            "plugin_config.NodePool.label: is required");
  EXPECT_EQ(ErrorOf([&] { r.RequiredTable("strategy", [](ArgsReader&) {}); }),
            "plugin_config.NodePool.strategy: is required");
}

TEST(ArgsReaderTest, AnOlderHostWithoutKeyLocationsGivesTheValuesLocation) {
  schedhost_host_api old = *framework::HostApi();
  old.struct_size = offsetof(schedhost_host_api, config_key_location);
  old.abi_minor = 3;
  const Tree tree("  weight   =   -1\nlist = [{ name = 3 }]\n");
  EXPECT_EQ(ErrorOf([&] {
              ArgsReader r = tree.Reader(&old);
              r.Int("weight", {.min = 0});
            }),
            "test.toml:1:16: plugin_config.NodePool.weight: must be at least 0, got -1");
  EXPECT_EQ(
      ErrorOf([&] {
        ArgsReader r = tree.Reader(&old);
        r.Tables("list", [](ArgsReader& item) { item.String("name"); });
      }),
      "test.toml:2:18: plugin_config.NodePool.list[0].name: expected a string, not an integer");
  // A host table with the entry but no function behaves the same.
  schedhost_host_api null_entry = *framework::HostApi();
  null_entry.config_key_location = nullptr;
  EXPECT_EQ(tree.args(&null_entry)["weight"].key_location(), "test.toml:1:16");
  EXPECT_EQ(tree.args()["weight"].key_location(), "test.toml:1:3");
}

TEST(ArgsReaderTest, ExpectNoneRefusesAtTheKey) {
  const Tree tree("\n  timeout = \"5s\"\n");
  EXPECT_EQ(ErrorOf([&] { tree.args().ExpectNone("DefaultBinder"); }),
            "test.toml:2:3: plugin_config.DefaultBinder.timeout: DefaultBinder takes no arguments");
}

TEST(ArgsReaderTest, DocumentsThePluginOwnsAreReadTheSameWay) {
  ArgsNode root{.kind = SCHEDHOST_CONFIG_TABLE, .location = "quotas.toml:1:1"};
  ArgsNode quotas{.kind = SCHEDHOST_CONFIG_ARRAY,
                  .key = "quotas",
                  .location = "quotas.toml:1:10",
                  .key_location = "quotas.toml:1:1"};
  ArgsNode quota{.kind = SCHEDHOST_CONFIG_TABLE, .location = "quotas.toml:2:3"};
  quota.children.push_back({.kind = SCHEDHOST_CONFIG_STRING,
                            .key = "namespace",
                            .string_value = "Team_A",
                            .location = "quotas.toml:2:17",
                            .key_location = "quotas.toml:2:5"});
  quotas.children.push_back(std::move(quota));
  root.children.push_back(std::move(quotas));
  const ArgsTree tree(std::move(root));
  ArgsReader r = ArgsReader::Document(tree.root());
  EXPECT_EQ(ErrorOf([&] {
              r.Tables("quotas", [](ArgsReader& q) {
                q.RequiredString("namespace", {.valid = names::IsDnsSubdomain,
                                               .what = "a valid namespace name"});
              });
            }),
            "quotas.toml:2:5: quotas[0].namespace: \"Team_A\" is not a valid namespace name");
  EXPECT_EQ(tree.root()["quotas"].At(0).key_location(), "quotas.toml:2:3");  // an element: itself
}

// A plugin in this process whose constructor reads a required `label` with ArgsReader, as a
// plugin library's would, reporting ArgsError through its create status.
int32_t CreateNeedsLabel(const schedhost_host_api* api, schedhost_host* /*host*/,
                         const schedhost_config* config, void** instance,
                         schedhost_status* status) noexcept {
  static int instance_tag = 0;
  try {
    ArgsReader r(Args(api, config), "NeedsLabel");
    r.RequiredString("label");
    r.Done();
    *instance = &instance_tag;
    return SCHEDHOST_SUCCESS;
  } catch (const ArgsError& e) {
    api->status_add_reason(status, schedhost_str{e.what(), std::strlen(e.what())});
    return SCHEDHOST_ERROR;
  }
}

int32_t FilterAll(void* /*instance*/, const schedhost_cycle_state* /*state*/,
                  const schedhost_pod_view* /*pod*/, const schedhost_node_info_view* /*ni*/,
                  schedhost_status* /*status*/) noexcept {
  return SCHEDHOST_SUCCESS;
}

std::string BuildError(const std::string& plugin_config) {
  static const schedhost_plugin_descriptor kNeedsLabel = [] {
    schedhost_plugin_descriptor d{};
    d.struct_size = sizeof d;
    d.name = schedhost_str{"NeedsLabel", 10};
    d.version = schedhost_str{"1.0.0", 5};
    d.create = &CreateNeedsLabel;
    d.filter = &FilterAll;
    return d;
  }();
  framework::testing::Harness h;
  h.RegisterInProcess(&kNeedsLabel);
  h.OnlyPlugins({"NeedsLabel"}, plugin_config);
  try {
    h.framework();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ArgsReaderHostTest, TheHostReportsArgsErrorsAtTheKey) {
  EXPECT_EQ(BuildError("[profile.plugin_config.NeedsLabel]\nlabel = \"a\"\n"), "");
  EXPECT_THAT(BuildError("[profile.plugin_config.NeedsLabel]\nlabel = \"a\"\n  lable = 1\n"),
              HasSubstr("profile \"test\": plugin \"NeedsLabel\" could not be created: "
                        "test.toml:8:3: plugin_config.NeedsLabel.lable: unknown key; did you mean "
                        "\"label\"?"));
}

TEST(ArgsReaderHostTest, WithoutPluginConfigTheErrorIsWhereThePluginIsEnabled) {
  const std::string error = BuildError("");
  EXPECT_THAT(error, StartsWith("test.toml:5:"));
  EXPECT_THAT(error, HasSubstr("profile \"test\": plugin \"NeedsLabel\" could not be created: "
                               "plugin_config.NeedsLabel.label: is required"));
}

}  // namespace
}  // namespace schedhost
