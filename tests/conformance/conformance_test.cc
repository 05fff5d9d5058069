// Replays every case under tests/conformance/cases: `cluster.yaml` (and `config.toml`, when the
// case has one) through ExplainEachPod, compared with `expected.json`, the document upstream
// kube-scheduler's framework produced for the same input (tests/upstream/cmd/oracle). A case
// is one test; a difference prints as a JSON patch from upstream's document to ours.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "host/cli/simulate.h"
#include "host/framework/testing/harness.h"

namespace schedhost::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Cases() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(SCHEDHOST_CONFORMANCE_CASES)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceTest, MatchesUpstream) {
  const fs::path dir = fs::path(SCHEDHOST_CONFORMANCE_CASES) / GetParam();
  const fs::path config_path = dir / "config.toml";
  config::HostConfig cfg = fs::exists(config_path)
                               ? config::LoadConfigFile(config_path.string())
                               : config::ParseConfig("", "(built-in defaults)", {});
  const nlohmann::json expected = nlohmann::json::parse(Read(dir / "expected.json"));
  std::vector<model::GenericObject> generic;
  const std::vector<model::Object> objects =
      model::DecodeFile((dir / "cluster.yaml").string(), {}, &generic);
  const nlohmann::json got = nlohmann::json::parse(
      ExplainEachPod(cfg, objects, framework::testing::PluginDir(), /*seed=*/0, generic).dump());
  EXPECT_EQ(got, expected) << "patch from upstream's document to schedhost's:\n"
                           << nlohmann::json::diff(expected, got).dump(2);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConformanceTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(ConformanceCasesTest, ThereAreCasesToReplay) {
  // An empty directory would make the suite above pass by running nothing.
  EXPECT_FALSE(Cases().empty()) << SCHEDHOST_CONFORMANCE_CASES << " holds no case";
}

}  // namespace
}  // namespace schedhost::cli
