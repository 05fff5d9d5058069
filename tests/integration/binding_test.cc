// The binding cycle end to end: Reserve failures unreserve in reverse and requeue, a failing
// Bind requeues with backoff and succeeds later, a PreBind error is reported, a pod changed
// while it was being scheduled is not bound with a stale version, and PostBind runs last.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/framework/testing/fake_plugin.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using framework::testing::FakePlugin;
using framework::testing::Reasons;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Profile(const std::string& points) {
  return "[[profile]]\nname = \"default-scheduler\"\n" + points;
}

class BindingTest : public SchedulerTest {
 protected:
  // Stop before log_ goes: stopping may still unreserve.
  ~BindingTest() override {
    if (sched_) sched_->Stop();
  }

  // Reserve plugins that log reserve / unreserve calls in order.
  FakePlugin& Reserver(const std::string& name, int32_t code = SCHEDHOST_SUCCESS,
                       std::string reason = "") {
    FakePlugin& f = fakes_.Add(name);
    f.reserve = [this, name, code, reason](std::string_view, Reasons& r) {
      log_.push_back("reserve " + name);
      if (!reason.empty()) r.push_back(reason);
      return code;
    };
    f.unreserve = [this, name](std::string_view) { log_.push_back("unreserve " + name); };
    return f;
  }

  std::vector<std::string> log_;
};

TEST_F(BindingTest, ReserveFailureUnreservesInReverseAndRequeues) {
  const auto* r1 = Reserver("R1").descriptor();
  const auto* r2 = Reserver("R2").descriptor();
  const auto* r3 = Reserver("R3", SCHEDHOST_UNSCHEDULABLE, "no capacity reserved").descriptor();
  Build(Profile("[profile.plugins.reserve]\nenabled = [{ name = \"R1\" }, { name = \"R2\" }, "
                "{ name = \"R3\" }]\n"),
        {r1, r2, r3});
  Apply(NodeYaml("n1") + PodYaml("p"));
  Run();
  EXPECT_THAT(log_, ElementsAre("reserve R1", "reserve R2", "reserve R3", "unreserve R3",
                                "unreserve R2", "unreserve R1"));
  EXPECT_EQ(NodeOf("p"), "");
  EXPECT_EQ(MessageOf("p"), "0/1 nodes are available: 1 no capacity reserved.");
  EXPECT_EQ(Where("p"), queue::PodLocation::kUnschedulable);
  EXPECT_EQ(sched_->cache().PodCount(), 0u) << "the assumed pod was forgotten";
}

TEST_F(BindingTest, FailingBindRequeuesWithBackoffThenBinds) {
  const auto* reserve = Reserver("R1").descriptor();
  FakePlugin& flaky = fakes_.Add("FlakyBinder");
  int calls = 0;
  flaky.bind = [&](std::string_view, Reasons& r) {
    if (++calls <= 2) {
      r.push_back("bind exploded");
      return SCHEDHOST_ERROR;
    }
    return SCHEDHOST_SKIP;  // let DefaultBinder bind
  };
  std::vector<std::string> post_bound;
  flaky.post_bind = [&](std::string_view node) { post_bound.emplace_back(node); };
  Build(Profile("[profile.plugins.reserve]\nenabled = [{ name = \"R1\" }]\n"
                "[profile.plugins.bind]\ndisabled = [{ name = \"*\" }]\n"
                "enabled = [{ name = \"FlakyBinder\" }, { name = \"DefaultBinder\" }]\n"
                "[profile.plugins.post_bind]\nenabled = [{ name = \"FlakyBinder\" }]\n"),
        {reserve, flaky.descriptor()});
  Apply(NodeYaml("n1") + PodYaml("p"));
  ASSERT_TRUE(Step());
  EXPECT_EQ(MessageOf("p"), "running Bind plugin \"FlakyBinder\": bind exploded");
  EXPECT_EQ(Where("p"), queue::PodLocation::kBackoff);
  EXPECT_THAT(log_, ElementsAre("reserve R1", "unreserve R1"));
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  scheduler::RunResult r = Run();
  EXPECT_EQ(NodeOf("p"), "n1");
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(sched_->Diagnostics(Pod("p")->uid())->attempts, 3);
  EXPECT_EQ(MessageOf("p"), "");
  EXPECT_THAT(post_bound, ElementsAre("n1"));
  // Backoffs of 1s and then 2s, waited out on the virtual clock.
  EXPECT_GE(r.virtual_time, std::chrono::seconds(3));
  EXPECT_LE(r.virtual_time, std::chrono::seconds(4));
}

TEST_F(BindingTest, PreBindErrorIsReportedAndRetried) {
  FakePlugin& pre = fakes_.Add("Volumes");
  int calls = 0;
  pre.pre_bind = [&](std::string_view, Reasons& r) {
    if (++calls == 1) {
      r.push_back("volume not ready");
      return SCHEDHOST_ERROR;
    }
    return SCHEDHOST_SUCCESS;
  };
  Build(Profile("[profile.plugins.pre_bind]\nenabled = [{ name = \"Volumes\" }]\n"),
        {pre.descriptor()});
  Apply(NodeYaml("n1") + PodYaml("p"));
  ASSERT_TRUE(Step());
  EXPECT_EQ(MessageOf("p"), "running PreBind plugin \"Volumes\": volume not ready");
  Run();
  EXPECT_EQ(NodeOf("p"), "n1");
}

TEST_F(BindingTest, PodChangedDuringItsCycleIsNotBoundWithAStaleVersion) {
  FakePlugin& pre = fakes_.Add("Relabel");
  int calls = 0;
  pre.pre_bind = [&](std::string_view, Reasons&) {
    if (++calls == 1) {
      model::PodData d = store_.Get<model::Pod>("default", "p")->data();
      d.metadata.labels.emplace_back("touched", "yes");
      store_.Update(d);
    }
    return SCHEDHOST_SUCCESS;
  };
  Build(Profile("[profile.plugins.pre_bind]\nenabled = [{ name = \"Relabel\" }]\n"),
        {pre.descriptor()});
  Apply(NodeYaml("n1") + PodYaml("p"));
  ASSERT_TRUE(Step());
  EXPECT_THAT(MessageOf("p"), HasSubstr("changed since it was read"));
  Run();
  EXPECT_EQ(NodeOf("p"), "n1") << "retried with the new version";
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace schedhost::integration
