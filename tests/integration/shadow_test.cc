// Shadow profiles on the virtual clock, through the builtin plugin libraries: a shadow that
// differs from its live profile in one Score weight disagrees on exactly the pods that weight
// flips, naming the plugin; the live placements and the store's writes are those of a run
// without the shadow; and a shadow plugin that fails or hangs stops the shadow, reported,
// without the live cycles noticing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "host/framework/testing/harness.h"
#include "host/scheduler/alloc_limit.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using framework::testing::Reasons;
using ::testing::HasSubstr;

// Scoring by NodeAffinity and TaintToleration alone: neither depends on the other pods, so
// each pod's choice is its own whatever the order.
std::string Profile(const std::string& name, int taint_weight, const std::string& extra = "") {
  return "[[profile]]\nname = \"" + name + "\"\n" + extra +
         "[profile.plugins.score]\ndisabled = [{ name = \"*\" }]\n"
         "enabled = [{ name = \"NodeAffinity\", weight = 2 }, "
         "{ name = \"TaintToleration\", weight = " +
         std::to_string(taint_weight) + " }]\n";
}

// Two ssd nodes tainted spot (PreferNoSchedule), four plain ones. Live (TaintToleration weight
// 1) puts a pod preferring ssd on an ssd node (2x100 against 1x100); the shadow (weight 3) puts
// it on a plain one (300 against 200). Pods without the preference, or tolerating the taint,
// land alike in both.
std::string Cluster() {
  std::string yaml;
  for (int i = 1; i <= 6; ++i) {
    const bool ssd = i <= 2;
    yaml += NodeYaml("n" + std::to_string(i), "64", "256Gi", "",
                     ssd ? "    disk: ssd\nspec:\n  taints:\n  - {key: spot, effect: PreferNoSchedule}\n"
                         : "");
  }
  const std::string prefer_ssd =
      "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
      "      - weight: 100\n        preference:\n          matchExpressions:\n"
      "          - {key: disk, operator: In, values: [ssd]}\n";
  const std::string tolerate = "  tolerations:\n  - {key: spot, operator: Exists}\n";
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    yaml += PodYaml("flip-" + n, "1", prefer_ssd);
    yaml += PodYaml("plain-" + n, "1");
    yaml += PodYaml("tolerant-" + n, "1", prefer_ssd + tolerate);
  }
  return yaml;
}

class ShadowTest : public SchedulerTest {
 protected:
  std::map<std::string, std::string> Placements() {
    std::map<std::string, std::string> out;
    for (const auto& pod : store_.List<model::Pod>()) out[std::string(pod->name())] = std::string(pod->node_name());
    return out;
  }
  // RunShadowFilter runs pods a and b on `nodes` with the live profile and a shadow "next" whose
  // Filter adds `plugin` ([shadow] every_pod, plus `settings`), checks that the live profile
  // bound both, and returns the shadow's status.
  scheduler::ShadowStatus RunShadowFilter(framework::testing::FakePlugin& plugin,
                                          const std::string& settings, const std::string& nodes) {
    Build("[shadow]\nevery_pod = true\n" + settings + Profile("default-scheduler", 1) +
              "[[profile]]\nname = \"next\"\nshadow_of = \"default-scheduler\"\n"
              "[profile.plugins.filter]\nenabled = [{ name = \"" + plugin.name + "\" }]\n",
          {plugin.descriptor()});
    Apply(nodes + PodYaml("a") + PodYaml("b"));
    Run();
    sched_->shadows().WaitIdle();
    EXPECT_NE(NodeOf("a"), "");
    EXPECT_NE(NodeOf("b"), "");
    return StatusOf("next");
  }
  scheduler::ShadowStatus StatusOf(const std::string& profile) {
    for (scheduler::ShadowStatus& s : sched_->shadows().Status()) {
      if (s.profile == profile) return s;
    }
    ADD_FAILURE() << "no shadow " << profile;
    return {};
  }
};

// Alone is a host of its own for the run without a shadow.
class Alone : public ShadowTest {
 public:
  void TestBody() override {}
  using ShadowTest::Apply;
  using ShadowTest::Build;
  using ShadowTest::Placements;
  using ShadowTest::Run;
  uint64_t writes() const { return store_.resource_version(); }
};

TEST_F(ShadowTest, AWeightChangeDisagreesOnExactlyThePodsItFlips) {
  // Without a shadow: the live placements and the store's writes.
  Alone alone_host;
  alone_host.Build(Profile("default-scheduler", 1));
  alone_host.Apply(Cluster());
  alone_host.Run();
  const std::map<std::string, std::string> alone = alone_host.Placements();
  const uint64_t writes_alone = alone_host.writes();
  for (int i = 0; i < 4; ++i) {
    EXPECT_THAT(alone.at("flip-" + std::to_string(i)), ::testing::AnyOf("n1", "n2"));
  }

  // The same run with a shadow that weighs TaintToleration 3.
  Build("[shadow]\nevery_pod = true\n" + Profile("default-scheduler", 1) +
        Profile("default-next", 3, "shadow_of = \"default-scheduler\"\n"));
  Apply(Cluster());
  Run();
  sched_->shadows().WaitIdle();
  EXPECT_EQ(Placements(), alone) << "the shadow changed a live placement";
  EXPECT_EQ(store_.resource_version(), writes_alone) << "the shadow wrote to the store";

  const scheduler::ShadowStatus s = StatusOf("default-next");
  EXPECT_EQ(s.state, "running") << s.reason;
  EXPECT_EQ(s.shadow_of, "default-scheduler");
  EXPECT_EQ(s.compared, 12u);
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.disagreements, 4u);
  EXPECT_EQ(s.agree_node, 8u);
  EXPECT_EQ(s.agree_feasibility, 12u);  // every node feasible on both sides
  EXPECT_EQ(s.agree_postfilter, 12u);
  std::set<std::string> disagreeing;
  for (const scheduler::ShadowDisagreement& d : s.recent) {
    disagreeing.insert(d.name);
    EXPECT_EQ(d.point, "Score") << d.name;
    EXPECT_EQ(d.plugin, "TaintToleration") << d.name << ": " << d.detail;
    EXPECT_EQ(d.live_node, alone.at(d.name));
    EXPECT_THAT(d.shadow_best, ::testing::ElementsAre("n3", "n4", "n5", "n6"));
    ASSERT_NE(d.live, nullptr);
    ASSERT_NE(d.shadow, nullptr);
    EXPECT_EQ(d.live->Expand()->score_weights, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(d.shadow->Expand()->score_weights, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(d.shadow->Expand()->nodes.size(), 6u);
    EXPECT_THAT(d.detail, HasSubstr("weight 3")) << d.detail;
  }
  EXPECT_EQ(disagreeing, (std::set<std::string>{"flip-0", "flip-1", "flip-2", "flip-3"}));
  // Every shadow cycle timed its plugins.
  bool timed = false;
  for (const scheduler::ShadowLatency& l : s.latency) {
    timed = timed || (l.plugin == "TaintToleration" && l.point == "Score" && l.shadow_calls > 0);
  }
  EXPECT_TRUE(timed);
}

TEST_F(ShadowTest, StopPausesAndStartResumes) {
  Build("[shadow]\nevery_pod = true\n" + Profile("default-scheduler", 1) +
        Profile("default-next", 3, "shadow_of = \"default-scheduler\"\n"));
  sched_->shadows().Stop("default-next");
  Apply(NodeYaml("n1") + PodYaml("a"));
  Run();
  sched_->shadows().WaitIdle();
  EXPECT_EQ(StatusOf("default-next").state, "stopped");
  EXPECT_EQ(StatusOf("default-next").compared, 0u);
  sched_->shadows().Start("");
  Apply(PodYaml("b"));
  Run();
  sched_->shadows().WaitIdle();
  EXPECT_EQ(StatusOf("default-next").state, "running");
  EXPECT_EQ(StatusOf("default-next").compared, 1u);
  EXPECT_THROW(sched_->shadows().Stop("nope"), scheduler::ShadowError);
  try {
    sched_->shadows().Start("nope");
  } catch (const scheduler::ShadowError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no shadow profile named \"nope\" (shadows: default-next)"));
  }
}

TEST_F(ShadowTest, AShadowPluginErrorStopsTheShadowAndTheLiveProfileGoesOn) {
  framework::testing::FakePlugin& broken = fakes_.Add("Broken");
  broken.filter = [](const schedhost_cycle_state*, const schedhost_pod_view*,
                     const schedhost_node_info_view*, Reasons& r) {
    r.push_back("out of cheese");
    return SCHEDHOST_ERROR;
  };
  const scheduler::ShadowStatus s = RunShadowFilter(broken, "", NodeYaml("n1") + NodeYaml("n2"));
  EXPECT_EQ(s.state, "failed");
  EXPECT_THAT(s.reason, HasSubstr("out of cheese"));
  EXPECT_THAT(s.reason, HasSubstr("pod default/a"));
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.compared, 0u);  // stopped at the first pod: b was not compared
}

TEST_F(ShadowTest, AShadowCyclePastItsDeadlineIsAbandonedAndReported) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  framework::testing::FakePlugin& slow = fakes_.Add("Slow");
  slow.filter = [released, &calls](const schedhost_cycle_state*, const schedhost_pod_view*,
                                   const schedhost_node_info_view*, Reasons&) {
    if (calls.fetch_add(1) == 0) released.wait();  // the first call hangs until the test ends
    return SCHEDHOST_SUCCESS;
  };
  const auto start = std::chrono::steady_clock::now();
  const scheduler::ShadowStatus s = RunShadowFilter(slow, "deadline = \"200ms\"\n", NodeYaml("n1"));
  // The live loop waited (every_pod) for the deadline, not for the plugin.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(s.state, "failed");
  EXPECT_THAT(s.reason, HasSubstr("passed its deadline of 200 ms"));
  release.set_value();
  // The abandoned thread returns and ends; give it the moment before the plugin goes away.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

TEST_F(ShadowTest, AShadowPluginAllocatingWithoutBoundIsRefusedAndReported) {
  if (!scheduler::AllocLimitsEnforced()) {
    GTEST_SKIP() << "this build's malloc is a sanitizer's: shadow memory limits are not enforced";
  }
  std::vector<void*> kept;  // what the plugin leaks, freed at the end
  framework::testing::FakePlugin& greedy = fakes_.Add("Greedy");
  greedy.filter = [&kept](const schedhost_cycle_state*, const schedhost_pod_view*,
                          const schedhost_node_info_view*, Reasons& r) {
    for (;;) {
      void* p = std::malloc(size_t{1} << 20);
      if (p == nullptr) {
        r.push_back("malloc failed");
        return SCHEDHOST_ERROR;
      }
      std::memset(p, 1, 64);
      kept.push_back(p);
    }
  };
  const scheduler::ShadowStatus s =
      RunShadowFilter(greedy, "memory_limit_mib = 32\n", NodeYaml("n1"));
  EXPECT_EQ(s.state, "failed");
  EXPECT_THAT(s.reason, HasSubstr("allocated past its memory limit of 32 MiB"));
  EXPECT_THAT(s.reason, HasSubstr("malloc failed"));
  EXPECT_TRUE(s.memory_limit_enforced);
  // It got about its limit, no more.
  EXPECT_LE(kept.size(), 32u);
  EXPECT_GE(kept.size(), 24u);
  for (void* p : kept) std::free(p);
}

}  // namespace
}  // namespace schedhost::integration
