// CapacityScheduling (plugins/contrib/capacity_scheduling) end to end: the contrib library
// loaded from the build tree by name, the default profile around it with CapacityScheduling as
// the only PostFilter, whole clusters scheduled on the virtual clock. Over-max pods are refused
// with a clear message, a namespace borrows what others leave idle, a namespace within its min
// takes its guarantee back by preemption (lower priority first), and a pod that fails after
// Reserve gives its share back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "host/cli/simulate.h"
#include "host/framework/testing/command.h"
#include "host/framework/testing/harness.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using ::testing::HasSubstr;

constexpr char kClasses[] = R"(---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 100
)";

// kConfig is the example's profile shape: CapacityScheduling everywhere, the only PostFilter.
constexpr char kConfig[] =
    "[[profile]]\nname = \"default-scheduler\"\n"
    "[profile.plugins.multi_point]\nenabled = [{ name = \"CapacityScheduling\" }]\n"
    "[profile.plugins.post_filter]\nenabled = [{ name = \"CapacityScheduling\" }]\n"
    "disabled = [{ name = \"*\" }]\n";

// Quota is an ElasticQuota of namespace `ns` with cpu `min` and `max` ("" leaves one out).
std::string Quota(const std::string& ns, const std::string& min, const std::string& max,
                  const std::string& name = "quota") {
  std::string y = "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\n"
                  "metadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n";
  if (!min.empty()) y += "  min: {cpu: \"" + min + "\"}\n";
  if (!max.empty()) y += "  max: {cpu: \"" + max + "\"}\n";
  return y;
}

// NsPod is a pod of namespace `ns` requesting `cpu`, of priority class `cls` ("": none), bound
// to `node` when given.
std::string NsPod(const std::string& name, const std::string& ns, const std::string& cpu = "1",
                  const std::string& cls = "", const std::string& node = "") {
  std::string spec;
  if (!cls.empty()) spec += "  priorityClassName: " + cls + "\n";
  if (!node.empty()) spec += "  nodeName: " + node + "\n";
  return PodYaml(name, cpu, spec, "  namespace: " + ns + "\n");
}

class CapacitySchedulingTest : public SchedulerTest {
 protected:
  std::shared_ptr<const model::Pod> Get(const std::string& ns, const std::string& name) const {
    return store_.Get<model::Pod>(ns, name);
  }
  std::string NodeIn(const std::string& ns, const std::string& name) const {
    auto p = Get(ns, name);
    return p ? std::string(p->node_name()) : "<deleted>";
  }
  std::string MessageIn(const std::string& ns, const std::string& name) const {
    auto p = Get(ns, name);
    if (!p) return "<deleted>";
    auto d = sched_->Diagnostics(p->uid());
    return d ? d->message : "<no diagnostics>";
  }
  // Bound counts the pods named prefix1..prefixN of `ns` that are bound.
  int Bound(const std::string& ns, const std::string& prefix, int n) const {
    int bound = 0;
    for (int i = 1; i <= n; ++i) {
      const std::string node = NodeIn(ns, prefix + std::to_string(i));
      bound += node.empty() || node == "<deleted>" ? 0 : 1;
    }
    return bound;
  }
  // BuildWith builds the profile and applies the ElasticQuotas `quotas`.
  void BuildWith(const std::string& quotas) {
    Build(kConfig);
    Apply(quotas);
  }
  int Deleted(const std::string& ns, const std::string& prefix, int n) const {
    int deleted = 0;
    for (int i = 1; i <= n; ++i) deleted += Get(ns, prefix + std::to_string(i)) ? 0 : 1;
    return deleted;
  }
};

TEST_F(CapacitySchedulingTest, OverMaxIsRejectedWithAClearMessage) {
  // team-b is idle: team-a may borrow its min, up to team-a's own max.
  BuildWith(Quota("team-a", "2", "3") + Quota("team-b", "4", "8"));
  Apply(NodeYaml("n1", "8") + NsPod("a1", "team-a") + NsPod("a2", "team-a") +
        NsPod("a3", "team-a") + NsPod("a4", "team-a"));
  Run();
  EXPECT_EQ(Bound("team-a", "a", 3), 3);
  EXPECT_EQ(NodeIn("team-a", "a4"), "") << "room on the node, but not in the quota";
  EXPECT_THAT(MessageIn("team-a", "a4"),
              HasSubstr("exceeded quota: namespace team-a would use cpu 4, more than its max 3"));
  // A namespace without a quota is not limited by this plugin.
  Apply(NsPod("free1", "other", "4"));
  Run();
  EXPECT_EQ(NodeIn("other", "free1"), "n1");
}

TEST_F(CapacitySchedulingTest, ANamespaceBorrowsBeyondItsMinWhileOthersAreIdle) {
  BuildWith(Quota("team-a", "2", "8") + Quota("team-b", "4", "8"));
  std::string y = NodeYaml("n1", "4") + NodeYaml("n2", "4");
  for (int i = 1; i <= 7; ++i) y += NsPod("a" + std::to_string(i), "team-a");
  Apply(y);
  Run();
  // team-a may use its own 2 and team-b's idle 4: 6 of the total min 6, not the 7th cpu.
  EXPECT_EQ(Bound("team-a", "a", 6), 6);
  EXPECT_EQ(NodeIn("team-a", "a7"), "");
  EXPECT_THAT(MessageIn("team-a", "a7"),
              HasSubstr("namespace team-a would borrow beyond its min, but no guarantee is left "
                        "to borrow: all quotas would use cpu 7, more than their total min 6"));
}

TEST_F(CapacitySchedulingTest, PreemptionReturnsBorrowedResourcesToANamespaceUnderItsMin) {
  BuildWith(Quota("team-a", "4", "8") + Quota("team-b", "4", "8"));
  // team-a fills the cluster (8 cpus) while team-b is idle: 4 high-priority pods, 4 low.
  std::string y = std::string(kClasses) + NodeYaml("n1", "4") + NodeYaml("n2", "4");
  for (int i = 1; i <= 4; ++i) {
    y += NsPod("hi" + std::to_string(i), "team-a", "1", "high", i % 2 ? "n1" : "n2");
    y += NsPod("lo" + std::to_string(i), "team-a", "1", "low", i % 2 ? "n1" : "n2");
  }
  Apply(y);
  Run();
  // team-b comes back for its min (4) and one more, at low priority.
  std::string b;
  for (int i = 1; i <= 5; ++i) b += NsPod("b" + std::to_string(i), "team-b", "1", "low");
  Apply(b);
  Run();
  EXPECT_EQ(Bound("team-b", "b", 4), 4) << "team-b got its min back";
  EXPECT_EQ(NodeIn("team-b", "b5"), "") << "beyond its min team-b may only borrow, and nothing "
                                           "is left";
  EXPECT_THAT(MessageIn("team-b", "b5"), HasSubstr("no guarantee is left to borrow"));
  // team-a lost exactly what it borrowed, its lower-priority pods first.
  EXPECT_EQ(Deleted("team-a", "lo", 4), 4);
  EXPECT_EQ(Bound("team-a", "hi", 4), 4) << "high-priority pods of the borrower are kept";
  EXPECT_EQ(sched_->cache().PodCount(), 8u);
}

TEST_F(CapacitySchedulingTest, OnlyBorrowersLoseUnderAnotherNamespacesMinWhateverTheirPriority) {
  BuildWith(Quota("team-a", "4", "8") + Quota("team-b", "2", "8") + Quota("team-c", "2", "8"));
  // team-a uses exactly its min (low priority, n1); team-c borrows 2 beyond its min (high, n2).
  std::string y = std::string(kClasses) + NodeYaml("n1", "4") + NodeYaml("n2", "4");
  for (int i = 1; i <= 4; ++i) {
    y += NsPod("a" + std::to_string(i), "team-a", "1", "low", "n1");
    y += NsPod("c" + std::to_string(i), "team-c", "1", "high", "n2");
  }
  Apply(y);
  Run();
  Apply(NsPod("b1", "team-b", "1", "low") + NsPod("b2", "team-b", "1", "low"));
  Run();
  // Priority alone would pick team-a's low pods; the quota says team-c owes the room.
  EXPECT_EQ(NodeIn("team-b", "b1"), "n2");
  EXPECT_EQ(NodeIn("team-b", "b2"), "n2");
  EXPECT_EQ(Bound("team-a", "a", 4), 4) << "a namespace within its min is not a victim";
  EXPECT_EQ(Deleted("team-c", "c", 4), 2) << "the borrower gave back what it borrowed";
}

TEST_F(CapacitySchedulingTest, ANamespaceOverItsMinPreemptsOnlyItsOwnLowerPriorityPods) {
  BuildWith(Quota("team-a", "2", "3") + Quota("team-b", "2", "8"));
  std::string y = std::string(kClasses) + NodeYaml("n1", "4");
  y += NsPod("a-lo1", "team-a", "1", "low", "n1") + NsPod("a-lo2", "team-a", "1", "low", "n1");
  y += NsPod("a-hi1", "team-a", "1", "high", "n1") + NsPod("b-lo1", "team-b", "1", "low", "n1");
  Apply(y);
  Run();
  // team-a at 3 of max 3: a high-priority pod of its own may only replace a lower one of its
  // own, never team-b's (team-b is within its min).
  Apply(NsPod("a-hi2", "team-a", "1", "high"));
  Run();
  EXPECT_EQ(NodeIn("team-a", "a-hi2"), "n1");
  EXPECT_EQ(Deleted("team-a", "a-lo", 2), 1) << "one low pod of team-a made room in the quota";
  EXPECT_EQ(NodeIn("team-b", "b-lo1"), "n1");
}

TEST_F(CapacitySchedulingTest, APodFailingAfterReserveGivesItsUsageBack) {
  // The first PreBind fails: that pod was reserved (counted) and must be released, or the
  // quota would look full to the pods after it.
  auto& fail_once = fakes_.Add("FailOnce");
  int calls = 0;
  fail_once.pre_bind = [&calls](std::string_view, framework::testing::Reasons& r) {
    if (calls++ > 0) return SCHEDHOST_SUCCESS;
    r.push_back("volume not ready");
    return SCHEDHOST_ERROR;
  };
  Build(std::string(kConfig) + "[profile.plugins.pre_bind]\nenabled = [{ name = \"FailOnce\" }]\n",
        {fail_once.descriptor()});
  Apply(Quota("team-a", "1", "2") + Quota("team-b", "4", "8"));
  Apply(NodeYaml("n1", "8") + NsPod("a1", "team-a") + NsPod("a2", "team-a") +
        NsPod("a3", "team-a"));
  Run();
  EXPECT_EQ(calls, 3) << "a1 failed once, a2 and a3 bound";
  EXPECT_EQ(NodeIn("team-a", "a2"), "n1");
  EXPECT_EQ(NodeIn("team-a", "a3"), "n1");
  EXPECT_EQ(NodeIn("team-a", "a1"), "") << "a1 came back to a full quota";
  EXPECT_THAT(MessageIn("team-a", "a1"), HasSubstr("more than its max 2"));
  // Deleting a bound pod frees its share: a1 binds on the event.
  store_.Delete<model::Pod>("team-a", "a2");
  Run();
  EXPECT_EQ(NodeIn("team-a", "a1"), "n1");
}

TEST_F(CapacitySchedulingTest, AChangedElasticQuotaAppliesWithoutAReload) {
  BuildWith(Quota("team-a", "2", "3") + Quota("team-b", "4", "8"));
  Apply(NodeYaml("n1", "16") + NsPod("a1", "team-a") + NsPod("a2", "team-a") +
        NsPod("a3", "team-a") + NsPod("a4", "team-a"));
  Run();
  EXPECT_EQ(NodeIn("team-a", "a4"), "") << "over max 3";
  EXPECT_THAT(MessageIn("team-a", "a4"), HasSubstr("more than its max 3"));
  // max raised to 5: the change is an event of the kind, and the refused pod is admitted.
  Apply(Quota("team-a", "2", "5"));
  Run();
  EXPECT_NE(NodeIn("team-a", "a4"), "") << MessageIn("team-a", "a4");
  // A namespace given its first quota is held to it from the next cycle.
  Apply(Quota("team-c", "1", "1") + NsPod("c1", "team-c") + NsPod("c2", "team-c"));
  Run();
  EXPECT_EQ(Bound("team-c", "c", 2), 1);
  EXPECT_THAT(MessageIn("team-c", "c2"),
              HasSubstr("namespace team-c would use cpu 2, more than its max 1"));
  // Its quota deleted, the namespace is limited no more.
  store_.objects().Delete("elasticquotas.scheduling.x-k8s.io", "team-c", "quota");
  Run();
  EXPECT_EQ(Bound("team-c", "c", 2), 2) << MessageIn("team-c", "c2");
}

TEST_F(CapacitySchedulingTest, AnElasticQuotaThatCannotBeUsedHoldsItsNamespaceSayingWhy) {
  BuildWith(Quota("team-b", "", "8") +
            "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata:\n"
            "  name: quota\n  namespace: team-a\nspec:\n  max: {cpu: lots}\n" +
            Quota("team-c", "", "4", "first") + Quota("team-c", "", "8", "second"));
  Apply(NodeYaml("n1", "16") + NsPod("a1", "team-a") + NsPod("b1", "team-b") +
        NsPod("c1", "team-c") + NsPod("d1", "team-d"));
  Run();
  EXPECT_EQ(NodeIn("team-a", "a1"), "");
  EXPECT_THAT(MessageIn("team-a", "a1"),
              HasSubstr("ElasticQuota team-a/quota: spec.max.cpu: \"lots\" is not a quantity"));
  EXPECT_EQ(NodeIn("team-c", "c1"), "");
  EXPECT_THAT(MessageIn("team-c", "c1"),
              HasSubstr("namespace team-c has 2 ElasticQuotas (first, second); "
                        "CapacityScheduling takes one per namespace"));
  EXPECT_EQ(NodeIn("team-b", "b1"), "n1") << "other namespaces go on";
  EXPECT_EQ(NodeIn("team-d", "d1"), "n1") << "a namespace without a quota is not limited";
  // Fixed, the namespace's pod is admitted.
  Apply(Quota("team-a", "", "2"));
  Run();
  EXPECT_EQ(NodeIn("team-a", "a1"), "n1") << MessageIn("team-a", "a1");
}

// The plugin folder's example through `schedctl simulate --config` (the library API the binary
// runs, then the binary itself): CapacityScheduling is found by name without a library path.
std::string ExampleDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/plugins/contrib/capacity_scheduling/examples/";
}

void ExpectExampleOutcome(const nlohmann::json& j) {
  std::map<std::string, nlohmann::json> pods;
  for (const auto& p : j["pods"]) pods[p["name"].get<std::string>()] = p;
  EXPECT_EQ(pods["a-big"]["status"], "Pending");
  EXPECT_THAT(pods["a-big"]["message"].get<std::string>(),
              HasSubstr("exceeded quota: namespace team-a would use cpu"));
  EXPECT_THAT(pods["a-big"]["message"].get<std::string>(), HasSubstr("more than its max 6"));
  for (const char* b : {"b1", "b2", "b3"}) EXPECT_EQ(pods[b]["status"], "Bound") << b;
  ASSERT_EQ(j["evicted"].size(), 1u) << j.dump(2);
  EXPECT_THAT(j["evicted"][0]["name"].get<std::string>(), HasSubstr("a-batch-"));
  EXPECT_EQ(j["evicted"][0]["namespace"], "team-a");
  for (const char* a : {"a-service-1", "a-service-2", "a-service-3"}) {
    EXPECT_EQ(pods[a]["status"], "Bound") << a;
  }
}

TEST(CapacitySchedulingSimulateTest, TheExampleRejectsOverMaxAndReclaimsTheMin) {
  cli::SimulateOptions o;
  o.config_path = ExampleDir() + "capacity.toml";
  o.manifest_paths = {ExampleDir() + "quotas.yaml"};
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(cli::RunSimulate(o, out, err), 0) << err.str();
  EXPECT_EQ(err.str(), "") << "the run ended idle";
  ExpectExampleOutcome(nlohmann::json::parse(out.str()));
}

TEST(CapacitySchedulingSimulateTest, TheBinaryFindsTheContribPluginWithoutALibraryPath) {
  const std::filesystem::path schedctl = framework::testing::BinDir() / "schedctl";
  if (!std::filesystem::exists(schedctl)) GTEST_SKIP() << "schedctl not built at " << schedctl;
  const auto r = framework::testing::RunCommand(schedctl.string() + " simulate -o json --config " +
                                                ExampleDir() + "capacity.toml -f " + ExampleDir() +
                                                "quotas.yaml 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectExampleOutcome(nlohmann::json::parse(r.output));
}

}  // namespace
}  // namespace schedhost::integration
