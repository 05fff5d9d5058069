// `schedctl shadow` against schedhostd: status tables and JSON, stop and start, and promote,
// which rewrites the config file and reloads it (and puts the file back when it cannot).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/schedctl_fixture.h"

namespace schedhost::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The live profile weighs TaintToleration 1, its shadow 3 (see shadow_test.cc's cluster).
std::string Scoring(int taint_weight) {
  return "[profile.plugins.score]\ndisabled = [{ name = \"*\" }]\n"
         "enabled = [{ name = \"NodeAffinity\", weight = 2 }, "
         "{ name = \"TaintToleration\", weight = " +
         std::to_string(taint_weight) + " }]\n";
}

std::string Cluster() {
  std::string yaml;
  for (int i = 1; i <= 4; ++i) {
    const std::string name = "n" + std::to_string(i);
    yaml += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
            "\n  labels:\n    kubernetes.io/hostname: " + name + "\n" +
            (i == 1 ? "    disk: ssd\nspec:\n  taints:\n  - {key: spot, effect: PreferNoSchedule}\n"
                    : "") +
            "status:\n  allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\"}\n";
  }
  for (const std::string name : {"flip-a", "flip-b", "plain-a"}) {
    yaml += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n";
    if (name.rfind("flip", 0) == 0) {
      yaml += "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:"
              "\n      - weight: 100\n        preference:\n          matchExpressions:\n"
              "          - {key: disk, operator: In, values: [ssd]}\n";
    }
    yaml += "  containers:\n  - name: c\n    image: busybox\n";
  }
  return yaml;
}

class ShadowCtlTest : public SchedctlTest {
 protected:
  std::string Profile() override {
    return "[shadow]\nevery_pod = true\n[[profile]]\nname = \"default-scheduler\"\n" +
           Scoring(1) + "\n# the candidate\n[[profile]]\nname = \"default-next\"\n" +
           "shadow_of = \"default-scheduler\"\n" + Scoring(3);
  }
  // Compared polls `shadow status -o json` until the shadow compared `n` pods (10 s at most).
  nlohmann::json Compared(uint64_t n) {
    nlohmann::json j;
    for (int i = 0; i < 100; ++i) {
      const Result r = Ctl({"shadow", "status", "-o", "json"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      j = nlohmann::json::parse(r.out);
      if (j["shadows"][0]["compared"].get<std::string>() == std::to_string(n)) return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the shadow did not compare " << n << " pods: " << j.dump();
    return j;
  }
};

TEST_F(ShadowCtlTest, StatusStopStartAndPromote) {
  const fs::path file = dir_.path() / "cluster.yaml";
  std::ofstream(file) << Cluster();
  ASSERT_EQ(Ctl({"apply", "-f", file.string()}).exit_code, 0);
  const std::map<std::string, std::string> nodes = WaitForNodes({"flip-a", "flip-b", "plain-a"});
  EXPECT_EQ(nodes.at("flip-a"), "n1");
  EXPECT_EQ(nodes.at("flip-b"), "n1");

  const nlohmann::json j = Compared(3);
  const nlohmann::json& s = j["shadows"][0];
  EXPECT_EQ(s["profile"], "default-next");
  EXPECT_EQ(s["state"], "running");
  EXPECT_EQ(s["disagreements"], "2");  // uint64 renders as a string in proto3 JSON
  EXPECT_EQ(s["agree_node"], "1");

  const Result table = Ctl({"shadow", "status"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ContainsRegex("SHADOW +OF +STATE +COMPARED"));
  EXPECT_THAT(table.out,
              ContainsRegex("\ndefault-next +default-scheduler +running +3 +0 +0 +1 \\(33\\.3%\\)"));

  const Result details = Ctl({"shadow", "status", "default-next"});
  ASSERT_EQ(details.exit_code, 0) << details.err;
  EXPECT_THAT(details.out, HasSubstr("2 disagreements in 3 compared pods"));
  EXPECT_THAT(details.out, ContainsRegex("\ndefault +flip-b +n1 +n[234] \\(best of 3\\) +Score +"
                                         "TaintToleration +TaintToleration scores"));
  EXPECT_THAT(details.out, ContainsRegex("\nScore +TaintToleration +[0-9.]+us \\([0-9]+\\)"));

  const Result stop = Ctl({"shadow", "stop", "default-next"});
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_THAT(stop.out, HasSubstr("shadow \"default-next\" is stopped"));
  EXPECT_THAT(Ctl({"shadow", "status"}).out, ContainsRegex("\ndefault-next +default-scheduler +stopped"));
  const Result unknown = Ctl({"shadow", "stop", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no shadow profile named \"nope\" (shadows: default-next)"));
  ASSERT_EQ(Ctl({"shadow", "start"}).exit_code, 0);
  EXPECT_THAT(Ctl({"shadow", "status"}).out, ContainsRegex("\ndefault-next +default-scheduler +running"));

  // A promote of something that is no shadow changes nothing, the file included.
  const fs::path config = dir_.path() / "schedhost.toml";
  const std::string before = ReadAll(config);
  const Result bad = Ctl({"shadow", "promote", "default-scheduler"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("no shadow profile named \"default-scheduler\""));
  EXPECT_EQ(ReadAll(config), before);

  const Result promote = Ctl({"shadow", "promote", "default-next"});
  ASSERT_EQ(promote.exit_code, 0) << promote.err;
  EXPECT_THAT(promote.out, HasSubstr("promoted shadow \"default-next\""));
  EXPECT_THAT(promote.out, HasSubstr("generation 2 is live (1 profile(s): default-scheduler)"));
  EXPECT_EQ(ReadAll(dir_.path() / "schedhost.toml.pre-promote"), before);
  const std::string after = ReadAll(config);
  EXPECT_THAT(after, Not(HasSubstr("shadow_of")));
  EXPECT_THAT(after, HasSubstr("# the candidate"));  // comments stay
  EXPECT_THAT(Ctl({"profiles"}).out, HasSubstr("TaintToleration(3)"));
  const Result none = Ctl({"shadow", "status"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_THAT(none.err, HasSubstr("No shadow profiles"));

  // The promoted profile places the next preferring pod as the shadow would have.
  std::ofstream(file) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: flip-c\nspec:\n"
                         "  affinity:\n    nodeAffinity:\n      preferredDuringScheduling"
                         "IgnoredDuringExecution:\n      - weight: 100\n        preference:\n"
                         "          matchExpressions:\n          - {key: disk, operator: In, "
                         "values: [ssd]}\n  containers:\n  - name: c\n    image: busybox\n";
  ASSERT_EQ(Ctl({"apply", "-f", file.string()}).exit_code, 0);
  EXPECT_NE(WaitForNodes({"flip-c"}).at("flip-c"), "n1");
}

}  // namespace
}  // namespace schedhost::testing
