// Permit end to end: a pod waits (WaitingPods) until every waiting plugin allows it, is
// rejected by any plugin or by its timer on the virtual clock, and a deleted waiting pod is
// rejected and frees what it held. The Gang test plugin acts through the host API table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/framework/framework.h"
#include "tests/integration/scheduler_fixture.h"
#include "tests/integration/test_plugins.h"

namespace schedhost::integration {
namespace {

std::string GangConfig(int quorum) {
  return "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\n"
         "enabled = [{ name = \"Gang\" }]\n[profile.plugin_config.Gang]\nquorum = " +
         std::to_string(quorum) + "\ntimeout_ms = 5000\n";
}

class PermitTest : public SchedulerTest {
 protected:
  framework::WaitingPods& Waiting() {
    return sched_->profiles()->Find("default-scheduler")->waiting_pods();
  }
};

TEST_F(PermitTest, WaitThenAllow) {
  Build(GangConfig(2), {GangDescriptor()});
  Apply(NodeYaml("n1") + PodYaml("g1") + PodYaml("g2"));
  ASSERT_TRUE(Step());
  // g1 waits at Permit: assumed on its node, in flight, not bound.
  EXPECT_EQ(Waiting().size(), 1u);
  EXPECT_EQ(Where("g1"), queue::PodLocation::kInFlight);
  EXPECT_TRUE(sched_->cache().IsAssumed(Pod("g1")->uid()));
  EXPECT_EQ(NodeOf("g1"), "");
  EXPECT_EQ(sched_->bindings_in_flight(), 1u);
  // g2 completes the gang: Gang allows g1 through waiting_pod_allow and lets g2 pass.
  scheduler::RunResult r = Run();
  EXPECT_EQ(NodeOf("g1"), "n1");
  EXPECT_EQ(NodeOf("g2"), "n1");
  EXPECT_EQ(Waiting().size(), 0u);
  EXPECT_EQ(sched_->bindings_in_flight(), 0u);
  EXPECT_EQ(r.virtual_time, std::chrono::nanoseconds(0));
}

TEST_F(PermitTest, WaitThenTimeoutOnTheVirtualClock) {
  Build(GangConfig(3), {GangDescriptor()});
  Apply(NodeYaml("n1") + PodYaml("g1") + PodYaml("g2"));
  scheduler::RunResult r = Run();
  EXPECT_EQ(r.virtual_time, std::chrono::seconds(5)) << "the clock jumped to the Permit timers";
  for (const char* name : {"g1", "g2"}) {
    EXPECT_EQ(NodeOf(name), "") << name;
    EXPECT_EQ(MessageOf(name),
              "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Gang.")
        << name;
    EXPECT_EQ(Where(name), queue::PodLocation::kUnschedulable) << name;
    EXPECT_FALSE(sched_->cache().IsAssumed(Pod(name)->uid())) << "forgotten";
  }
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
}

TEST_F(PermitTest, RejectByAPluginEndsEveryWait) {
  Build(GangConfig(3), {GangDescriptor()});
  Apply(NodeYaml("n1") + PodYaml("g1") + PodYaml("g2") + PodYaml("abort-now"));
  scheduler::RunResult r = Run();
  EXPECT_EQ(r.virtual_time, std::chrono::nanoseconds(0)) << "rejected before any timer";
  for (const char* name : {"g1", "g2", "abort-now"}) {
    EXPECT_EQ(NodeOf(name), "") << name;
    EXPECT_EQ(MessageOf(name), "0/1 nodes are available: 1 gang aborted.") << name;
  }
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
}

TEST_F(PermitTest, DeletedWaitingPodIsRejectedAndFreesItsNode) {
  Build(GangConfig(2), {GangDescriptor()});
  Apply(NodeYaml("n1", "1") + PodYaml("g1", "1") + PodYaml("other", "1"));
  ASSERT_TRUE(Step());  // g1 waits, holding n1's only cpu
  ASSERT_TRUE(Step());  // other does not fit beside the assumed g1
  EXPECT_EQ(MessageOf("other"),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "No preemption victims found for incoming pod.");
  const std::string g1_uid(Pod("g1")->uid());
  store_.Delete<model::Pod>("default", "g1");
  sched_->DrainBindings();  // g1's binding cycle sees the rejection
  EXPECT_EQ(Waiting().size(), 0u);
  EXPECT_FALSE(sched_->cache().IsAssumed(g1_uid));
  EXPECT_EQ(sched_->queue().Where(g1_uid), queue::PodLocation::kNone);
  Run();
  EXPECT_EQ(NodeOf("other"), "n1") << "the forgotten pod's cpu went to the pod waiting for it";
}

TEST_F(PermitTest, StopRequeuesWaitingPods) {
  Build(GangConfig(2), {GangDescriptor()});
  Apply(NodeYaml("n1") + PodYaml("g1"));
  ASSERT_TRUE(Step());
  EXPECT_EQ(Waiting().size(), 1u);
  sched_->Stop();
  EXPECT_EQ(Waiting().size(), 0u);
  EXPECT_EQ(sched_->bindings_in_flight(), 0u);
  EXPECT_EQ(MessageOf("g1"), "0/1 nodes are available: 1 scheduler is stopping.");
  EXPECT_NE(Where("g1"), queue::PodLocation::kInFlight);
  EXPECT_NE(Where("g1"), queue::PodLocation::kNone);
}

}  // namespace
}  // namespace schedhost::integration
