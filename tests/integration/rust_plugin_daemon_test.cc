// Plugins written in Rust (sdk/rust) in a running schedhostd, driven by schedctl: the contrib
// TargetLoadPacking is listed and places pods, `schedctl simulate` runs it, the test plugin
// Panicky's library is swapped for another build under load (`schedctl reload`), and a panic
// inside it becomes an Error status with the panic's message in the daemon's log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/schedctl_fixture.h"

namespace schedhost::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kPanickyDir = SCHEDHOST_RUST_PANICKY_DIR;

std::string NodeYaml(const std::string& name, const std::string& labels) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {kubernetes.io/hostname: " + name + labels +
         "}\nstatus:\n  capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n"
         "  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n---\n";
}

std::string PodYaml(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\nspec:\n  containers:\n  - name: c\n    image: app\n"
         "    resources:\n      requests: {cpu: \"1\"}\n---\n";
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Publish puts a build of Panicky at `path` as operators are told to: beside it, then renamed.
void Publish(int variant, const fs::path& path) {
  const fs::path temp = path.string() + ".new";
  fs::copy_file(kPanickyDir / ("panicky_v" + std::to_string(variant) + ".so"), temp,
                fs::copy_options::overwrite_existing);
  fs::rename(temp, path);
}

// schedhostd with Panicky from a library path of the test's (build 1 to start with) and
// TargetLoadPacking from the plugin directory, its log in a file.
class RustPluginDaemonTest : public SchedctlTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kPanickyDir / "panicky_v1.so")) {
      GTEST_SKIP() << "the Rust plugins are not built (no cargo at configure time)";
    }
    Publish(1, library_);
    log_ = dir_.path() / "schedhostd.log";
    SchedctlTest::SetUp();
  }
  std::string HostKeys() override {
    return "libraries = [{ path = \"" + library_.string() + "\" }]\n";
  }
  std::string Profile() override {
    return "[[profile]]\nname = \"default-scheduler\"\n"
           "[profile.plugins.filter]\nenabled = [{ name = \"Panicky\" }]\n"
           "[profile.plugins.pre_score]\nenabled = [{ name = \"TargetLoadPacking\" }]\n"
           "[profile.plugins.score]\nenabled = [{ name = \"TargetLoadPacking\", weight = 50 }]\n";
  }
  void Apply(const std::string& yaml) {
    const fs::path file = dir_.path() / "apply.yaml";
    std::ofstream(file) << yaml;
    const Result r = Ctl({"apply", "-f", file.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string NodeOf(const std::string& pod) { return WaitForNodes({pod})[pod]; }

  const fs::path library_ = dir_.path() / "panicky.so";
};

TEST_F(RustPluginDaemonTest, RustPluginsAreListedPlacePodsAndSurviveASwapAndAPanic) {
  Result plugins = Ctl({"plugins"});
  ASSERT_EQ(plugins.exit_code, 0) << plugins.err;
  EXPECT_THAT(plugins.out, ContainsRegex("\nTargetLoadPacking +1\\.0\\.0 +1\\.9 +[^\n]*"
                                         "target_load_packing\\.so"));
  EXPECT_THAT(plugins.out, ContainsRegex("\nPanicky +1\\.0\\.0 +1\\.9 +[^\n]*panicky\\.so"));

  // Build 1 of Panicky avoids node "a"; TargetLoadPacking prefers "b" (at its 40 % target with
  // the pod) over "c" (idle) and refuses nothing.
  Apply(NodeYaml("a", ", panicky-avoid: v1, schedhost.io/cpu-utilization: \"15\"") +
        NodeYaml("b", ", panicky-avoid: v2, schedhost.io/cpu-utilization: \"15\"") +
        NodeYaml("c", ", schedhost.io/cpu-utilization: \"0\""));
  Apply(PodYaml("web-1"));
  EXPECT_EQ(NodeOf("web-1"), "b");

  // A panic in Filter: the pod stays pending with the panic as an Error, the daemon goes on.
  Apply(PodYaml("panic"));
  std::string log;
  for (int i = 0; i < 100 && log.find("Panicky panicked in Filter") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log = Slurp(log_);
  }
  EXPECT_THAT(log, HasSubstr("Panicky panicked in Filter: pod panic on node "));
  EXPECT_THAT(log, HasSubstr("is not welcome (at "));
  Result panic_pod = Ctl({"get", "pod", "panic", "-o", "json"});
  ASSERT_EQ(panic_pod.exit_code, 0) << panic_pod.err;
  EXPECT_THAT(panic_pod.out, Not(HasSubstr("\"nodeName\"")));

  // Hot swap: build 2 avoids "b" instead; a pod created after the reload goes to "a".
  Publish(2, library_);
  Result reload = Ctl({"reload"});
  ASSERT_EQ(reload.exit_code, 0) << reload.err << reload.out;
  plugins = Ctl({"plugins"});
  EXPECT_THAT(plugins.out, ContainsRegex("\nPanicky +2\\.0\\.0 +1\\.9 +"));
  Apply(PodYaml("web-2"));
  EXPECT_EQ(NodeOf("web-2"), "a");
  Apply(PodYaml("web-3"));
  EXPECT_EQ(NodeOf("web-3"), "a");
}

TEST_F(RustPluginDaemonTest, SimulateRunsTheRustPlugin) {
  const fs::path cluster = dir_.path() / "cluster.yaml";
  std::ofstream(cluster) << NodeYaml("cold", ", schedhost.io/cpu-utilization: \"0\"")
                         << NodeYaml("target", ", schedhost.io/cpu-utilization: \"15\"")
                         << NodeYaml("hot", ", schedhost.io/cpu-utilization: \"70\"")
                         << PodYaml("web");
  const fs::path config = dir_.path() / "tlp.toml";
  std::ofstream(config) << "[[profile]]\nname = \"default-scheduler\"\n"
                           "[profile.plugins.multi_point]\nenabled = [{ name = "
                           "\"TargetLoadPacking\", weight = 10 }]\n";
  const Result r = RunSchedctl(dir_, {"simulate", "-f", cluster.string(), "-c", config.string(),
                                      "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out;
  EXPECT_EQ(out["pods"][0]["node"], "target") << r.out;
}

}  // namespace
}  // namespace schedhost::testing
