// Coscheduling through a running schedhostd: the daemon started on the example profile (the
// contrib library found by name beside the builtins), the example cluster applied with schedctl,
// pods watched with `schedctl get`. Real time, so only outcomes are asserted, never timings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/schedctl_fixture.h"

namespace schedhost::testing {
namespace {

fs::path ExampleDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return fs::path(dir ? dir : ".") / "plugins" / "contrib" / "coscheduling" / "examples";
}

class CoschedulingDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(BinDir() / "schedctl") || !fs::exists(BinDir() / "schedhostd")) {
      GTEST_SKIP() << "schedctl and schedhostd are not built in " << BinDir();
    }
    socket_ = dir_.path() / "run" / "schedhost.sock";
    server_ = "unix://" + socket_.string();
    // The example profile, with a short Permit wait and a grace for members still arriving
    // (one `schedctl apply` creates the pods one after the other while the loop runs).
    std::ifstream example(ExampleDir() / "coscheduling.toml");
    std::ostringstream profile;
    profile << example.rdbuf();
    std::string toml = profile.str();
    auto set = [&toml](const std::string& from, const std::string& to) {
      const size_t at = toml.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      toml.replace(at, from.size(), to);
    };
    set("permit_waiting_time_seconds = 60", "permit_waiting_time_seconds = 20");
    set("assembly_grace_seconds = 0", "assembly_grace_seconds = 2");
    const fs::path config = dir_.path() / "schedhost.toml";
    std::ofstream(config) << "[api]\nlisten = \"" << server_
                          << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n"
                          << toml;
    pid_ = StartSchedhostd(config);
    ASSERT_GE(pid_, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(socket_) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(fs::exists(socket_)) << "schedhostd did not start";
  }
  void TearDown() override {
    if (pid_ > 0) StopSchedhostd(pid_);
  }

  Result Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", server_});
    return RunSchedctl(dir_, args);
  }

  // Nodes returns pod name -> node ("" while pending).
  std::map<std::string, std::string> Nodes() {
    std::map<std::string, std::string> out;
    Result r = Ctl({"get", "pods", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json list = nlohmann::json::parse(r.out, nullptr, false);
    if (!list.is_object()) return out;
    for (const auto& pod : list["items"]) {
      out[pod["metadata"]["name"].get<std::string>()] = pod["spec"].value("nodeName", "");
    }
    return out;
  }

  TempDir dir_;
  fs::path socket_;
  std::string server_;
  pid_t pid_ = -1;
};

TEST_F(CoschedulingDaemonTest, OneGangBindsWholeTheOtherHoldsNothingSinglePodsBind) {
  Result applied = Ctl({"apply", "-f", (ExampleDir() / "gangs.yaml").string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  const std::vector<std::string> want = {"training-1", "training-2", "training-3",
                                         "training-4", "web-1",      "web-2"};
  std::map<std::string, std::string> nodes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool all = false;
  while (!all && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    nodes = Nodes();
    all = true;
    for (const std::string& n : want) all = all && !nodes[n].empty();
  }
  ASSERT_TRUE(all) << Ctl({"get", "pods"}).out;
  // The gang that does not fit holds no node: none of its pods is bound, and the single pods
  // got the room its released members had.
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(nodes["etl-" + std::to_string(i)], "") << "etl-" << i;
  }
  const Result described = Ctl({"describe", "pod", "etl-1"});
  EXPECT_THAT(described.out, ::testing::HasSubstr("pod group default/etl")) << described.out;
}

}  // namespace
}  // namespace schedhost::testing
