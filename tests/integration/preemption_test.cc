// Preemption through the scheduler, step by step where simulate cannot stage it: a victim
// waiting at Permit is rejected instead of deleted, and a higher-priority preemptor takes over
// a node another pod was nominated to (the lower nomination is cleared).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/framework/framework.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/integration/test_plugins.h"

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
metadata: {name: mid}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
)";

constexpr char kPreemption[] =
    "[[profile]]\nname = \"default-scheduler\"\n"
    "[profile.plugins.post_filter]\nenabled = [{ name = \"DefaultPreemption\" }]\n";

std::string Prio(const std::string& cls, const std::string& node = "") {
  return "  priorityClassName: " + cls + "\n" + (node.empty() ? "" : "  nodeName: " + node + "\n");
}

std::string Nominated(const std::shared_ptr<const model::Pod>& pod) {
  return pod ? pod->data().status.nominated_node_name : "<gone>";
}

using PreemptionTest = SchedulerTest;

TEST_F(PreemptionTest, VictimWaitingAtPermitIsRejectedNotDeleted) {
  Build(std::string(kPreemption) +
            "[profile.plugins.multi_point]\nenabled = [{ name = \"Gang\" }]\n"
            "[profile.plugin_config.Gang]\nquorum = 2\ntimeout_ms = 600000\n",
        {GangDescriptor()});
  Apply(std::string(kClasses) + NodeYaml("n1", "2") + PodYaml("g1", "2", Prio("low")));
  ASSERT_TRUE(Step());
  ASSERT_EQ(sched_->profiles()->Find("default-scheduler")->waiting_pods().size(), 1u)
      << "g1 waits at Permit for a gang that never comes";
  Apply(PodYaml("p", "2", Prio("high")));
  Run();
  EXPECT_EQ(NodeOf("p"), "n1");
  ASSERT_NE(Pod("g1"), nullptr) << "a waiting victim is rejected, not deleted";
  EXPECT_EQ(NodeOf("g1"), "");
  EXPECT_EQ(sched_->profiles()->Find("default-scheduler")->waiting_pods().size(), 0u);
}

TEST_F(PreemptionTest, HigherPriorityPreemptorTakesOverTheNomination) {
  Build(kPreemption);
  Apply(std::string(kClasses) + NodeYaml("n1", "4") + PodYaml("v1", "2", Prio("low", "n1")) +
        PodYaml("v2", "2", Prio("low", "n1")) + PodYaml("p1", "2", Prio("mid")));
  ASSERT_TRUE(Step());  // p1 preempts one victim and is nominated to n1
  EXPECT_EQ(Nominated(Pod("p1")), "n1");
  EXPECT_EQ((Pod("v1") == nullptr) + (Pod("v2") == nullptr), 1) << "exactly one victim";

  Apply(PodYaml("p2", "4", Prio("high")));
  ASSERT_TRUE(Step());  // p2 pops before p1 leaves backoff: it needs the whole node
  EXPECT_EQ(Nominated(Pod("p2")), "n1");
  EXPECT_EQ(Nominated(Pod("p1")), "") << "the lower-priority nomination on n1 is cleared";
  EXPECT_EQ(Pod("v1"), nullptr);
  EXPECT_EQ(Pod("v2"), nullptr);

  Run();
  EXPECT_EQ(NodeOf("p2"), "n1");
  EXPECT_EQ(NodeOf("p1"), "");
  EXPECT_EQ(Nominated(Pod("p1")), "");
  EXPECT_THAT(MessageOf("p1"), HasSubstr("preemption: 0/1 nodes are available: 1 No preemption "
                                         "victims found for incoming pod."));
}

}  // namespace
}  // namespace schedhost::integration
