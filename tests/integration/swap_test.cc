// Hot swap on the virtual clock (Scheduler::ReplaceProfiles): a new policy applies to the pods
// scheduled after the swap, a pod waiting at Permit finishes on the plugin instance that admitted
// it, QueueSort changes re-sort activeQ, and a pod whose profile goes away is parked, not lost,
// and scheduled once the profile returns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/config/host_config.h"
#include "host/framework/framework.h"
#include "host/framework/testing/harness.h"
#include "host/scheduler/profile_set.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using framework::testing::FakePlugin;
using framework::testing::Reasons;

std::string NodeName(const schedhost_node_info_view* ni) {
  return {ni->node->name.data, ni->node->name.len};
}

class SwapTest : public SchedulerTest {
 protected:
  // Replace swaps in the profiles of `toml` (same host settings as Build) and returns the
  // generation.
  uint64_t Replace(const std::string& toml,
                   const std::vector<const schedhost_plugin_descriptor*>& in_process = {}) {
    config::HostConfig cfg =
        config::ParseConfig("[host]\nparallelism = 2\n" + toml, "reload.toml", {});
    return sched_->ReplaceProfiles(
        scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir(), in_process));
  }

  // Prefer returns a Score plugin that gives `node` 100 and every other node 0.
  const schedhost_plugin_descriptor* Prefer(const std::string& name, const std::string& node) {
    FakePlugin& f = fakes_.Add(name);
    f.score = [node](const schedhost_node_info_view* ni, int64_t* score, Reasons&) {
      *score = NodeName(ni) == node ? 100 : 0;
      return SCHEDHOST_SUCCESS;
    };
    return f.descriptor();
  }
};

std::string Profile(const std::string& name, const std::string& enabled) {
  return "[[profile]]\nname = \"" + name + "\"\n[profile.plugins.multi_point]\nenabled = [" +
         enabled + "]\n";
}

TEST_F(SwapTest, NewWeightsAndPluginsApplyToPodsScheduledAfterTheSwap) {
  const std::vector<const schedhost_plugin_descriptor*> plugins = {Prefer("PreferN1", "n1"),
                                                                   Prefer("PreferN2", "n2")};
  Build(Profile("default-scheduler",
                "{ name = \"PreferN1\", weight = 50 }, { name = \"PreferN2\", weight = 1 }"),
        plugins);
  Apply(NodeYaml("n1", "16") + NodeYaml("n2", "16") + PodYaml("before-1") + PodYaml("before-2"));
  Run();
  EXPECT_EQ(NodeOf("before-1"), "n1");
  EXPECT_EQ(NodeOf("before-2"), "n1");
  EXPECT_EQ(sched_->generation(), 1u);

  // PreferN1 disabled, PreferN2 weighs 50: the next pods go to n2.
  EXPECT_EQ(Replace(Profile("default-scheduler", "{ name = \"PreferN2\", weight = 50 }"), plugins),
            2u);
  EXPECT_EQ(sched_->generation(), 2u);
  Apply(PodYaml("after-1") + PodYaml("after-2"));
  Run();
  EXPECT_EQ(NodeOf("after-1"), "n2");
  EXPECT_EQ(NodeOf("after-2"), "n2");
  EXPECT_EQ(NodeOf("before-1"), "n1") << "bound pods stay where they are";
  EXPECT_EQ(sched_->DrainingSets(), 0u) << "nothing holds the replaced set any more";
}

TEST_F(SwapTest, AnIdleSchedulerReleasesTheReplacedSetAtOnce) {
  const std::vector<const schedhost_plugin_descriptor*> plugins = {Prefer("PreferN1", "n1"),
                                                                   Prefer("PreferN2", "n2")};
  Build(Profile("default-scheduler", "{ name = \"PreferN1\", weight = 1 }"), plugins);
  Apply(NodeYaml("n1", "16") + PodYaml("explained"));
  Run();
  ASSERT_EQ(NodeOf("explained"), "n1");
  // The pod's explanation is kept; it must not keep the set it was made with.
  EXPECT_EQ(Replace(Profile("default-scheduler", "{ name = \"PreferN2\", weight = 1 }"), plugins),
            2u);
  EXPECT_EQ(sched_->DrainingSets(), 0u) << "no pod scheduled since the swap, nothing in flight";
  const auto explanation = sched_->Explanation(Pod("explained")->uid());
  ASSERT_NE(explanation, nullptr) << "the explanation made with the old set is still there";
}

TEST_F(SwapTest, PodWaitingAtPermitFinishesOnTheOldInstance) {
  FakePlugin& waiter = fakes_.Add("Waiter");
  int post_binds = 0;
  waiter.permit = [](std::string_view, int64_t* timeout_ns, Reasons&) {
    *timeout_ns = 60'000'000'000;  // a minute: only Allow below ends the wait in time
    return SCHEDHOST_WAIT;
  };
  waiter.post_bind = [&post_binds](std::string_view) { ++post_binds; };
  Build(Profile("default-scheduler", "{ name = \"Waiter\" }"), {waiter.descriptor()});
  Apply(NodeYaml("n1") + PodYaml("waits"));
  ASSERT_TRUE(Step());
  std::shared_ptr<const scheduler::ProfileRuntime> old = sched_->profiles();
  framework::WaitingPods& old_waiting = old->Find("default-scheduler")->waiting_pods();
  ASSERT_EQ(old_waiting.size(), 1u);

  // The new set has no Waiter at all; the waiting pod keeps the old set (and its instance).
  Replace("");
  EXPECT_EQ(sched_->DrainingSets(), 1u);
  EXPECT_EQ(waiter.destroyed, 0) << "the old instance lives while its pod waits";
  EXPECT_EQ(Where("waits"), queue::PodLocation::kInFlight);
  // A pod scheduled meanwhile uses the new set: no wait. (Step, not Run: Run would jump the
  // virtual clock to the Permit timer.)
  Apply(PodYaml("fresh"));
  ASSERT_TRUE(Step());
  EXPECT_EQ(NodeOf("fresh"), "n1");
  EXPECT_EQ(NodeOf("waits"), "");
  EXPECT_EQ(post_binds, 0);

  auto waiting = old_waiting.Get(Pod("waits")->uid());
  ASSERT_NE(waiting, nullptr);
  ASSERT_TRUE(waiting->Allow("Waiter"));
  waiting.reset();
  old.reset();
  Run();
  EXPECT_EQ(NodeOf("waits"), "n1");
  EXPECT_EQ(post_binds, 1) << "PostBind ran on the old instance";
  EXPECT_EQ(sched_->DrainingSets(), 0u);
  EXPECT_EQ(waiter.destroyed, 1) << "destroyed once the binding cycle ended";
}

TEST_F(SwapTest, QueueSortChangeReordersActiveQ) {
  FakePlugin& reverse = fakes_.Add("ReverseName");
  reverse.queue_sort_less = [](const schedhost_queued_pod* a, const schedhost_queued_pod* b) {
    return std::string_view(a->pod->name.data, a->pod->name.len) >
           std::string_view(b->pod->name.data, b->pod->name.len);
  };
  Build("", {reverse.descriptor()});
  // One cpu for three one-cpu pods: whichever pops first gets it.
  Apply(NodeYaml("n1", "1") + PodYaml("a") + PodYaml("b") + PodYaml("c"));
  Replace(
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.queue_sort]\n"
      "enabled = [{ name = \"ReverseName\" }]\ndisabled = [{ name = \"PrioritySort\" }]\n",
      {reverse.descriptor()});
  ASSERT_TRUE(Step());
  EXPECT_EQ(NodeOf("c"), "n1") << "activeQ was re-sorted by the new QueueSort";
  EXPECT_EQ(NodeOf("a"), "");
}

TEST_F(SwapTest, PodOfARemovedProfileIsParkedAndScheduledWhenItReturns) {
  const std::string both =
      "[[profile]]\nname = \"default-scheduler\"\n[[profile]]\nname = \"batch\"\n";
  Build(both);
  const std::string batch_pod = "  schedulerName: batch\n";
  // Only a small node yet: the batch pod is unschedulable when its profile goes away.
  Apply(NodeYaml("small", "1") + PodYaml("early", "2", batch_pod));
  Run();
  ASSERT_EQ(Where("early"), queue::PodLocation::kUnschedulable);

  Replace("[[profile]]\nname = \"default-scheduler\"\n");
  Apply(NodeYaml("n1", "6") + PodYaml("late", "2", batch_pod) + PodYaml("web", "2"));
  Run();
  EXPECT_EQ(NodeOf("web"), "n1");
  for (const char* name : {"early", "late"}) {
    EXPECT_EQ(NodeOf(name), "") << name;
    EXPECT_EQ(Where(name), queue::PodLocation::kNone) << name << " is parked, out of the queue";
  }
  EXPECT_EQ(MessageOf("early"), "no profile named \"batch\"");

  EXPECT_EQ(Replace(both), 3u);
  Run();
  EXPECT_EQ(NodeOf("early"), "n1");
  EXPECT_EQ(NodeOf("late"), "n1");
  EXPECT_EQ(MessageOf("late"), "");
}

}  // namespace
}  // namespace schedhost::integration
