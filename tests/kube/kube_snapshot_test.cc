// `schedctl snapshot` of the real control plane, then `schedctl simulate --compare` on the file,
// checked against what schedhost does live with each config: a cluster is built through the
// API with pods still pending, snapshotted, and scheduled live twice (the old config, then the
// pods recreated and the new one); the comparison's placements of the pending pods are the two
// live runs'. The snapshot holds no Secret and no managedFields.
#include "tests/kube/kube_fixture.h"

namespace schedhost::kube::kubetest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The two configs, one Score weight apart: NodeResourcesFit ten times heavier in the new one.
constexpr char kOldProfile[] = "[[profile]]\nname = \"schedhost\"\n";
constexpr char kNewProfile[] =
    "[[profile]]\nname = \"schedhost\"\n[profile.plugins.score]\n"
    "enabled = [{ name = \"NodeResourcesFit\", weight = 10 }]\n";

class KubeSnapshotTest : public KubeModeTest {
 protected:
  // PrefersSsd is a pod that prefers the nodes labelled disk=ssd.
  Json PrefersSsd(const std::string& name) {
    Json pod = Pod(name, "100m");
    pod["spec"]["affinity"] = {
        {"nodeAffinity",
         {{"preferredDuringSchedulingIgnoredDuringExecution",
           Json::array({{{"weight", 100},
                         {"preference",
                          {{"matchExpressions",
                            Json::array({{{"key", "disk"},
                                          {"operator", "In"},
                                          {"values", Json::array({"ssd"})}}})}}}}})}}}};
    return pod;
  }

  // Pending are the pods the test leaves to the scheduler.
  std::vector<Json> Pending() {
    return {PrefersSsd("prefers-ssd-1"), Pod("plain-1", "100m"), PrefersSsd("prefers-ssd-2"),
            Pod("plain-2", "100m")};
  }

  // RunLive schedules the pending pods with `profiles` live and returns where each went.
  std::map<std::string, std::string> RunLive(const std::string& profiles) {
    StartHost(Config("", profiles));
    EXPECT_TRUE(WaitFor([&] {
      for (const Json& pod : Pending()) {
        if (NodeOf(pod["metadata"]["name"]).empty()) return false;
      }
      return true;
    }));
    std::map<std::string, std::string> placed;
    for (const Json& pod : Pending()) {
      const std::string name = pod["metadata"]["name"];
      placed[name] = NodeOf(name);
    }
    host_->Stop();
    host_.reset();
    return placed;
  }
};

TEST_F(KubeSnapshotTest, SimulatingTheSnapshotUnderTwoConfigsGivesWhatEachDidLive) {
  const std::string ssd = ns_ + "-ssd";
  const std::string big = ns_ + "-big";
  AddNode(ssd, "4", "8Gi", {{"disk", "ssd"}});
  AddNode(big, "16", "32Gi");
  // What runs already: half of the ssd node, and a pod that prefers it.
  Json filler = Pod("filler", "2");
  filler["spec"]["nodeName"] = ssd;
  filler["spec"]["containers"][0]["resources"]["requests"]["memory"] = "4Gi";
  Create(filler);
  Json runs_ssd = PrefersSsd("runs-ssd");
  runs_ssd["spec"]["nodeName"] = ssd;
  Create(runs_ssd);
  for (const Json& pod : Pending()) Create(pod);
  // Read by nothing that schedules: never read by the snapshot either.
  Kubectl({"create", "secret", "generic", "db-password", "-n", ns_,
           "--from-literal=password=hunter2-" + ns_});
  // Every pod gets a last-applied-configuration annotation and managedFields from the server.
  Kubectl({"annotate", "pod", "plain-1", "-n", ns_, "team=shop"});

  const std::filesystem::path snapshot = dir_.path() / "cluster.yaml";
  const std::string schedctl = (framework::testing::BinDir() / "schedctl").string();
  const auto snap_start = std::chrono::steady_clock::now();
  const auto snap = framework::testing::RunCommand(schedctl + " snapshot --kubeconfig " +
                                                   cp_->admin_kubeconfig() + " -o " +
                                                   snapshot.string() + " 2>&1");
  const double snap_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - snap_start).count();
  ASSERT_EQ(snap.exit_code, 0) << snap.output;
  EXPECT_THAT(snap.output, HasSubstr("Wrote "));
  std::ifstream in(snapshot);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, Not(HasSubstr("kind: Secret")));
  EXPECT_THAT(text, Not(HasSubstr("hunter2")));
  EXPECT_THAT(text, Not(HasSubstr("managedFields")));
  EXPECT_THAT(text, Not(HasSubstr("resourceVersion")));
  EXPECT_THAT(text, HasSubstr("team: shop"));
  EXPECT_THAT(text, HasSubstr("name: " + ssd));
  EXPECT_THAT(text, HasSubstr("name: prefers-ssd-1"));

  const std::filesystem::path old_toml = dir_.path() / "old.toml";
  const std::filesystem::path new_toml = dir_.path() / "new.toml";
  std::ofstream(old_toml) << kOldProfile;
  std::ofstream(new_toml) << kNewProfile;
  const auto cmp_start = std::chrono::steady_clock::now();
  const auto cmp = framework::testing::RunCommand(
      schedctl + " simulate -o json -f " + snapshot.string() + " --config " + new_toml.string() +
      " --compare " + old_toml.string());
  const double cmp_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cmp_start).count();
  ASSERT_EQ(cmp.exit_code, 0) << cmp.output;
  std::cout << "snapshot " << snap_seconds << " s, compare " << cmp_seconds << " s: "
            << snap.output;
  const Json comparison = Json::parse(cmp.output);
  std::map<std::string, Json> mine;  // the test's pods, by "kind name"
  for (const Json& p : comparison["pods"]) {
    if (p["namespace"] != ns_) continue;
    mine[p["kind"].get<std::string>() + " " + p["name"].get<std::string>()] = p;
  }
  ASSERT_EQ(mine.size(), 6u) << cmp.output;
  // The replayed pod that prefers the ssd node leaves it under the new weight, for the plugin.
  EXPECT_EQ(mine["replay runs-ssd"]["old"]["node"], ssd);
  EXPECT_EQ(mine["replay runs-ssd"]["new"]["node"], big);
  EXPECT_EQ(mine["replay runs-ssd"]["diff"]["plugin"], "NodeResourcesFit");
  EXPECT_FALSE(mine["replay filler"]["differs"].get<bool>());

  // Live: the old config schedules the pending pods; then they are made again, pending, for the
  // new one.
  const std::map<std::string, std::string> live_old = RunLive(kOldProfile);
  for (const Json& pod : Pending()) {
    Kubectl({"delete", "pod", pod["metadata"]["name"], "-n", ns_, "--grace-period=0", "--force"});
  }
  for (const Json& pod : Pending()) Create(pod);
  const std::map<std::string, std::string> live_new = RunLive(kNewProfile);

  size_t differ = 0;
  for (const Json& pod : Pending()) {
    const std::string name = pod["metadata"]["name"];
    const Json& p = mine["pending " + name];
    EXPECT_EQ(p["old"]["node"], live_old.at(name)) << name;
    EXPECT_EQ(p["new"]["node"], live_new.at(name)) << name;
    EXPECT_EQ(p["differs"].get<bool>(), live_old.at(name) != live_new.at(name)) << name;
    if (!p["differs"].get<bool>()) continue;
    ++differ;
    EXPECT_EQ(p["diff"]["plugin"], "NodeResourcesFit") << name;
  }
  // The weight turns exactly the pods that prefer the ssd node.
  EXPECT_EQ(live_old.at("prefers-ssd-1"), ssd);
  EXPECT_EQ(live_new.at("prefers-ssd-1"), big);
  EXPECT_EQ(differ, 2u);
}

TEST_F(KubeSnapshotTest, TheSchedulersOwnCredentialsSnapshotWhatTheyMayRead) {
  AddNode(ns_ + "-a", "2", "4Gi");
  const std::filesystem::path snapshot = dir_.path() / "cluster.yaml";
  const auto snap = framework::testing::RunCommand(
      (framework::testing::BinDir() / "schedctl").string() + " snapshot --kubeconfig " +
      cp_->user_kubeconfig() + " -o " + snapshot.string() + " 2>&1");
  ASSERT_EQ(snap.exit_code, 0) << snap.output;
  // kube-scheduler's role does not cover PriorityClasses: left out, said, and the rest written.
  EXPECT_THAT(snap.output, HasSubstr("warning: priorityclasses left out"));
  const auto sim = framework::testing::RunCommand(
      (framework::testing::BinDir() / "schedctl").string() + " simulate -f " +
      snapshot.string() + " 2>&1");
  EXPECT_EQ(sim.exit_code, 0) << sim.output;
}

}  // namespace
}  // namespace schedhost::kube::kubetest
