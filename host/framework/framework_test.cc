// Framework tests: building profiles (every validation of reference/004) and the semantics of
// every extension point, with scripted in-process plugins registered through the C ABI.
#include "host/framework/framework.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "host/framework/plugin_instance.h"
#include "host/framework/testing/fake_plugin.h"
#include "host/framework/testing/harness.h"

namespace schedhost::framework {
namespace {

using ::testing::ElementsAre;
using testing::FakePlugin;
using testing::FakePlugins;
using testing::Harness;
using ::testing::HasSubstr;
using testing::Reasons;

std::string NodeName(const schedhost_node_info_view* ni) {
  return std::string(ni->node->name.data, ni->node->name.len);
}

std::string Nodes(int n) {
  std::string y;
  for (int i = 1; i <= n; ++i) {
    y += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n" + std::to_string(i) +
         "\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n";
  }
  return y;
}

constexpr const char* kPod =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
    "  containers: [{name: c, image: busybox}]\n";

class FrameworkTest : public ::testing::Test {
 protected:
  FrameworkTest() : hp(std::make_unique<Harness>(false)) {
    sort = &fakes.Add("Sort");
    sort->queue_sort_less = [](const schedhost_queued_pod* a, const schedhost_queued_pod* b) {
      return a->timestamp_ns < b->timestamp_ns;
    };
    binder = &fakes.Add("Binder");
    binder->bind = [this](std::string_view node, Reasons&) {
      bound.emplace_back(node);
      return SCHEDHOST_SUCCESS;
    };
  }

  // Use registers `plugins` (plus Sort and Binder) and enables them under multi_point.
  void Use(const std::vector<FakePlugin*>& plugins, const std::string& extra = "") {
    std::string toml = "[[profile]]\nname = \"p\"\n[profile.plugins.multi_point]\nenabled = [";
    std::vector<FakePlugin*> all = {sort, binder};
    all.insert(all.end(), plugins.begin(), plugins.end());
    for (size_t i = 0; i < all.size(); ++i) {
      H().RegisterInProcess(all[i]->descriptor());
      toml += (i ? ", " : "") + std::string("{ name = \"") + all[i]->name + "\" }";
    }
    toml += "]\ndisabled = [{ name = \"*\" }]\n" + extra;
    H().SetConfig(toml);
  }

  Harness& H() { return *hp; }
  void Fresh() { hp = std::make_unique<Harness>(false); }

  FakePlugins fakes;
  std::unique_ptr<Harness> hp;
  FakePlugin* sort = nullptr;
  FakePlugin* binder = nullptr;
  std::vector<std::string> bound;
};

// ---- Build-time validation -------------------------------------------------------------------

TEST_F(FrameworkTest, BuildRejectsMissingQueueSortAndBind) {
  FakePlugin& f = fakes.Add("OnlyFilter");
  f.filter = [](auto, auto, auto, Reasons&) { return SCHEDHOST_SUCCESS; };
  H().RegisterInProcess(f.descriptor());
  H().SetConfig(
      "[[profile]]\nname = \"p\"\n[profile.plugins.multi_point]\n"
      "disabled = [{ name = \"*\" }]\nenabled = [{ name = \"OnlyFilter\" }]\n");
  EXPECT_THAT([&] { H().framework(); },
              ::testing::ThrowsMessage<FrameworkError>(HasSubstr("no queue_sort plugin")));

  H().RegisterInProcess(sort->descriptor());
  H().SetConfig(
      "[[profile]]\nname = \"p\"\n[profile.plugins.multi_point]\ndisabled = [{ name = \"*\" }]\n"
      "enabled = [{ name = \"OnlyFilter\" }, { name = \"Sort\" }]\n");
  EXPECT_THAT([&] { H().framework(); }, ::testing::ThrowsMessage<FrameworkError>(
                                            HasSubstr("at least one bind plugin is needed")));
}

TEST_F(FrameworkTest, BuildRejectsTwoQueueSortPlugins) {
  FakePlugin& other = fakes.Add("OtherSort");
  other.queue_sort_less = [](auto, auto) { return false; };
  Use({&other});
  EXPECT_THAT([&] { H().framework(); }, ::testing::ThrowsMessage<FrameworkError>(HasSubstr(
                                            "only one queue_sort plugin can be enabled")));
}

TEST_F(FrameworkTest, BuildReportsPluginCreateFailureWithReasons) {
  FakePlugin& f = fakes.Add("Picky");
  f.filter = [](auto, auto, auto, Reasons&) { return SCHEDHOST_SUCCESS; };
  f.create = [](Reasons& r) {
    r.push_back("argument mode must be strict or lax");
    return SCHEDHOST_ERROR;
  };
  Use({&f});
  EXPECT_THAT([&] { H().framework(); }, ::testing::ThrowsMessage<FrameworkError>(AllOf(
                                            HasSubstr("plugin \"Picky\" could not be created"),
                                            HasSubstr("must be strict or lax"))));
}

TEST_F(FrameworkTest, BuildCreatesEachPluginOnceAcrossPoints) {
  FakePlugin& f = fakes.Add("Multi");
  int created = 0;
  f.create = [&](Reasons&) {
    ++created;
    return SCHEDHOST_SUCCESS;
  };
  f.filter = [](auto, auto, auto, Reasons&) { return SCHEDHOST_SUCCESS; };
  f.score = [](auto, int64_t* s, Reasons&) {
    *s = 1;
    return SCHEDHOST_SUCCESS;
  };
  Use({&f});
  Framework& fw = H().framework();
  EXPECT_EQ(created, 1);
  EXPECT_EQ(fw.plugins(config::Point::kFilter).size(), 1u);
  EXPECT_EQ(fw.plugins(config::Point::kScore).size(), 1u);
  EXPECT_EQ(fw.plugins(config::Point::kFilter)[0].plugin,
            fw.plugins(config::Point::kScore)[0].plugin);
}

TEST_F(FrameworkTest, DestroyRunsForEveryInstance) {
  FakePlugin& f = fakes.Add("Gone");
  f.filter = [](auto, auto, auto, Reasons&) { return SCHEDHOST_SUCCESS; };
  Use({&f});
  H().framework();
  H().SetConfig("");  // drops the framework
  EXPECT_EQ(f.destroyed, 1);
  EXPECT_EQ(sort->destroyed, 1);
}

TEST_F(FrameworkTest, BuildChecksScoreWeights) {
  // Build the expanded profile directly: TOML caps weights, the framework must not rely on it.
  FakePlugin& a = fakes.Add("HeavyA");
  a.score = [](auto, int64_t* s, Reasons&) {
    *s = 0;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& b = fakes.Add("HeavyB");
  b.score = a.score;
  for (FakePlugin* p : {sort, binder, &a, &b}) H().RegisterInProcess(p->descriptor());
  config::ExpandedProfile prof;
  prof.name = "heavy";
  prof.points[config::PointIndex(config::Point::kQueueSort)].push_back({"Sort", 0, {}});
  prof.points[config::PointIndex(config::Point::kBind)].push_back({"Binder", 0, {}});
  const int32_t huge = std::numeric_limits<int32_t>::max();
  prof.points[config::PointIndex(config::Point::kScore)].push_back({"HeavyA", huge, {}});
  prof.points[config::PointIndex(config::Point::kScore)].push_back({"HeavyB", huge, {}});
  // Two max-int32 weights times 100 still fit in int64 (as upstream, the overflow check can only
  // trip with tens of millions of plugins), so this builds.
  EXPECT_NO_THROW(Framework::Build(prof, H().registry(), {}));
  config::ExpandedProfile negative = prof;
  negative.points[config::PointIndex(config::Point::kScore)][1].weight = -2;
  EXPECT_THAT([&] { Framework::Build(negative, H().registry(), {}); },
              ::testing::ThrowsMessage<FrameworkError>(HasSubstr("negative weight -2")));
  config::ExpandedProfile dup = prof;
  for (int i = 0; i < 3; ++i)
    dup.points[config::PointIndex(config::Point::kScore)].push_back({"HeavyB", huge, {}});
  EXPECT_THAT([&] { Framework::Build(dup, H().registry(), {}); },
              ::testing::ThrowsMessage<FrameworkError>(HasSubstr("enabled more than once")));
}

TEST_F(FrameworkTest, BuildRejectsPluginAtPointItDoesNotImplement) {
  FakePlugin& f = fakes.Add("FilterOnly");
  f.filter = [](auto, auto, auto, Reasons&) { return SCHEDHOST_SUCCESS; };
  for (FakePlugin* p : {sort, binder, &f}) H().RegisterInProcess(p->descriptor());
  config::ExpandedProfile prof;
  prof.name = "p";
  prof.points[config::PointIndex(config::Point::kQueueSort)].push_back({"Sort", 0, {}});
  prof.points[config::PointIndex(config::Point::kBind)].push_back({"Binder", 0, {}});
  prof.points[config::PointIndex(config::Point::kScore)].push_back({"FilterOnly", 1, {}});
  EXPECT_THAT([&] { Framework::Build(prof, H().registry(), {}); },
              ::testing::ThrowsMessage<FrameworkError>(
                  HasSubstr("\"FilterOnly\" does not implement score")));
  prof.points[config::PointIndex(config::Point::kScore)].clear();
  prof.points[config::PointIndex(config::Point::kFilter)].push_back({"Nope", 0, {}});
  EXPECT_THAT([&] { Framework::Build(prof, H().registry(), {}); },
              ::testing::ThrowsMessage<FrameworkError>(HasSubstr("plugin \"Nope\" is not known")));
}

// ---- PreFilter and Filter --------------------------------------------------------------------

TEST_F(FrameworkTest, PreFilterResultsIntersect) {
  FakePlugin& a = fakes.Add("A");
  a.pre_filter = [](auto, auto, std::vector<std::string>* nodes, bool* set, Reasons&) {
    *nodes = {"n1", "n2"};
    *set = true;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& b = fakes.Add("B");
  b.pre_filter = [](auto, auto, std::vector<std::string>* nodes, bool* set, Reasons&) {
    *nodes = {"n2", "n3"};
    *set = true;
    return SCHEDHOST_SUCCESS;
  };
  Use({&a, &b});
  H().AddObjects(Nodes(3));
  auto pod = H().MakePod(kPod);
  CycleState state;
  auto [subset, status] = H().framework().RunPreFilterPlugins(state, pod->view());
  ASSERT_TRUE(status.ok()) << status.Message();
  ASSERT_TRUE(subset.has_value());
  EXPECT_EQ(*subset, (std::unordered_set<std::string>{"n2"}));
}

TEST_F(FrameworkTest, PreFilterDisjointResultsAreUnresolvable) {
  FakePlugin& a = fakes.Add("A");
  a.pre_filter = [](auto, auto, std::vector<std::string>* nodes, bool* set, Reasons&) {
    *nodes = {"n1"};
    *set = true;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& b = fakes.Add("B");
  b.pre_filter = [](auto, auto, std::vector<std::string>* nodes, bool* set, Reasons&) {
    *nodes = {"n3"};
    *set = true;
    return SCHEDHOST_SUCCESS;
  };
  Use({&a, &b});
  auto pod = H().MakePod(kPod);
  CycleState state;
  auto [subset, status] = H().framework().RunPreFilterPlugins(state, pod->view());
  EXPECT_EQ(status.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(status.Message(), "node(s) didn't satisfy plugin(s) [A B] simultaneously");
}

TEST_F(FrameworkTest, PreFilterSkipSkipsThatPluginsFilter) {
  FakePlugin& a = fakes.Add("Skipper");
  a.pre_filter = [](auto, auto, auto, auto, Reasons&) { return SCHEDHOST_SKIP; };
  std::atomic<int> filtered{0};
  a.filter = [&](auto, auto, auto, Reasons& r) {
    ++filtered;
    r.push_back("should not run");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  Use({&a});
  H().AddObjects(Nodes(3));
  auto results = H().RunFilter(*H().MakePod(kPod));
  for (const auto& r : results) EXPECT_TRUE(r.status.ok()) << r.node << ": " << r.status.Message();
  EXPECT_EQ(filtered.load(), 0);
}

// Unresolvable, an error or an unknown code end PreFilter at once; Unschedulable lets the plugins
// after it run (upstream, kubernetes#119770: their state is what preemption's Filter runs need)
// and is still the result.
TEST_F(FrameworkTest, PreFilterFailureStopsAndNamesPlugin) {
  struct Case {
    int32_t code;
    Code want;
    std::string want_message;
    bool second_runs;
  };
  for (const Case& c :
       {Case{SCHEDHOST_UNSCHEDULABLE, Code::kUnschedulable, "no way", true},
        Case{SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE, Code::kUnschedulableAndUnresolvable,
             "no way", false},
        Case{SCHEDHOST_ERROR, Code::kError, "running PreFilter plugin \"First\": no way", false},
        Case{42, Code::kError,
             "running PreFilter plugin \"First\": plugin returned unknown status code 42, no "
             "way",
             false}}) {
    FakePlugins local;
    FakePlugin& first = local.Add("First");
    first.pre_filter = [&](auto, auto, auto, auto, Reasons& r) {
      r.push_back("no way");
      return c.code;
    };
    FakePlugin& second = local.Add("Second");
    bool second_ran = false;
    second.pre_filter = [&](auto, auto, auto, auto, Reasons&) {
      second_ran = true;
      return SCHEDHOST_SUCCESS;
    };
    Fresh();
    Use({&first, &second});
    CycleState state;
    auto pod = H().MakePod(kPod);
    auto [subset, status] = H().framework().RunPreFilterPlugins(state, pod->view());
    EXPECT_EQ(status.code, c.want);
    EXPECT_EQ(status.Message(), c.want_message);
    EXPECT_EQ(status.plugin, "First");
    EXPECT_EQ(second_ran, c.second_runs) << c.want_message;
    EXPECT_EQ(state.filters_resolved, c.second_runs) << c.want_message;
    Fresh();  // release the instances before `local` goes
  }
}

// After an Unschedulable, a later plugin's Unresolvable or its failure is the result.
TEST_F(FrameworkTest, PreFilterUnschedulableGivesWayToALaterUnresolvable) {
  for (const int32_t later : {SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE, SCHEDHOST_ERROR}) {
    FakePlugins local;
    FakePlugin& first = local.Add("First");
    first.pre_filter = [](auto, auto, auto, auto, Reasons& r) {
      r.push_back("not yet");
      return SCHEDHOST_UNSCHEDULABLE;
    };
    FakePlugin& second = local.Add("Second");
    second.pre_filter = [&](auto, auto, auto, auto, Reasons& r) {
      r.push_back("never");
      return later;
    };
    Fresh();
    Use({&first, &second});
    CycleState state;
    auto pod = H().MakePod(kPod);
    auto [subset, status] = H().framework().RunPreFilterPlugins(state, pod->view());
    EXPECT_EQ(status.plugin, "Second");
    EXPECT_EQ(status.code,
              later == SCHEDHOST_ERROR ? Code::kError : Code::kUnschedulableAndUnresolvable);
    Fresh();
  }
}

TEST_F(FrameworkTest, FilterStopsAtFirstFailureOrCollectsAll) {
  FakePlugin& a = fakes.Add("CpuCheck");
  a.filter = [](auto, auto, const schedhost_node_info_view* ni, Reasons& r) {
    if (NodeName(ni) == "n1") return SCHEDHOST_SUCCESS;
    r.push_back("Insufficient cpu");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  FakePlugin& b = fakes.Add("TaintCheck");
  b.filter = [](auto, auto, const schedhost_node_info_view* ni, Reasons& r) {
    if (NodeName(ni) == "n3") {
      r.push_back("node(s) had untolerated taint {dedicated: gpu}");
      return SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    r.push_back("node(s) were unschedulable");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  Use({&a, &b});
  H().AddObjects(Nodes(3));
  auto pod = H().MakePod(kPod);
  auto first = H().RunFilter(*pod);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].status.plugin, "TaintCheck");
  EXPECT_THAT(first[0].status.reasons, ElementsAre("node(s) were unschedulable"));
  EXPECT_EQ(first[1].status.plugin, "CpuCheck");
  EXPECT_THAT(first[1].status.reasons, ElementsAre("Insufficient cpu"));

  auto all = H().RunFilter(*pod, /*run_all_filters=*/true);
  EXPECT_EQ(all[1].status.code, Code::kUnschedulable);
  EXPECT_THAT(all[1].status.reasons, ElementsAre("Insufficient cpu", "node(s) were unschedulable"));
  EXPECT_EQ(all[2].status.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(all[2].status.reasons,
              ElementsAre("Insufficient cpu", "node(s) had untolerated taint {dedicated: gpu}"));
}

TEST_F(FrameworkTest, FilterErrorIsWrappedWithPluginName) {
  FakePlugin& a = fakes.Add("Broken");
  a.filter = [](auto, auto, auto, Reasons& r) {
    r.push_back("lost my state");
    return SCHEDHOST_ERROR;
  };
  Use({&a});
  H().AddObjects(Nodes(1));
  auto results = H().RunFilter(*H().MakePod(kPod));
  EXPECT_EQ(results[0].status.code, Code::kError);
  EXPECT_EQ(results[0].status.Message(), "running \"Broken\" filter plugin: lost my state");
}

// RunFilterBatch over the snapshot's views in runs of `run` nodes, with the resolved plugins of
// a PreFilter pass on `pod`; `out` gets one (passed, status) per node.
Status FilterInRuns(Harness& h, const model::Pod& pod, size_t run,
                    std::vector<std::pair<bool, Status>>& out) {
  Framework& fw = h.framework();
  const auto& views = h.snapshot().views();
  CycleState state;
  auto [subset, pre] = fw.RunPreFilterPlugins(state, pod.view());
  if (!pre.ok()) return pre;
  FilterBatch batch;
  for (size_t b = 0; b < views.size(); b += run) {
    const size_t len = std::min(run, views.size() - b);
    Status s = fw.RunFilterBatch(state, pod.view(), views.data() + b, len, batch);
    if (!s.ok()) return s;
    for (size_t j = 0; j < len; ++j) out.emplace_back(batch.passed[j] != 0, batch.statuses[j]);
  }
  return {};
}

TEST_F(FrameworkTest, FilterBatchGivesEachNodeTheStatusOfItsFirstRejection) {
  // A batched plugin and a per-node one, in that order: nodes the first rejects never reach the
  // second, whose calls then come one per node; every node ends with its own first rejection.
  FakePlugin& a = fakes.Add("Batched");
  const auto a_one = [](const schedhost_node_info_view* ni, Reasons& r) -> int32_t {
    const std::string name = NodeName(ni);
    if (name == "n2" || name == "n5") {
      r.push_back("Batched says no to " + name);
      return SCHEDHOST_UNSCHEDULABLE;
    }
    if (name == "n7") {
      r.push_back("Batched will never take " + name);
      return SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return SCHEDHOST_SUCCESS;
  };
  std::atomic<int> batch_calls{0};
  a.filter = [&](auto, auto, const schedhost_node_info_view* ni, Reasons& r) -> int32_t {
    return a_one(ni, r);
  };
  a.filter_batch = [&](const schedhost_node_info_view* const* nodes, size_t n, size_t* passed,
                       Reasons& r) -> int32_t {
    ++batch_calls;
    for (size_t k = 0; k < n; ++k) {
      if (int32_t rc = a_one(nodes[k], r); rc != SCHEDHOST_SUCCESS) {
        *passed = k;
        return rc;
      }
    }
    *passed = n;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& b = fakes.Add("Single");
  std::vector<std::string> seen_by_b;
  b.filter = [&](auto, auto, const schedhost_node_info_view* ni, Reasons& r) -> int32_t {
    seen_by_b.push_back(NodeName(ni));
    if (NodeName(ni) == "n3") {
      r.push_back("Single says no");
      return SCHEDHOST_UNSCHEDULABLE;
    }
    return SCHEDHOST_SUCCESS;
  };
  Use({&a, &b});
  H().AddObjects(Nodes(8));
  auto pod = H().MakePod(kPod);
  std::vector<std::pair<bool, Status>> got;
  ASSERT_TRUE(FilterInRuns(H(), *pod, 8, got).ok());
  // n2, n5 and n7 stop the batch: four calls for one run of eight nodes.
  EXPECT_EQ(batch_calls, 4);
  EXPECT_THAT(seen_by_b, ElementsAre("n1", "n3", "n4", "n6", "n8"));
  ASSERT_EQ(got.size(), 8u);
  const auto per_node = H().RunFilter(*pod);
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE("node n" + std::to_string(i + 1));
    EXPECT_EQ(got[i].first, per_node[i].status.ok());
    EXPECT_EQ(got[i].second.code, per_node[i].status.code);
    EXPECT_EQ(got[i].second.plugin, per_node[i].status.plugin);
    EXPECT_EQ(got[i].second.reasons, per_node[i].status.reasons);
  }
  EXPECT_EQ(got[6].second.Message(), "Batched will never take n7");
  EXPECT_EQ(got[2].second.plugin, "Single");
  EXPECT_TRUE(got[0].first && got[3].first && got[5].first && got[7].first);
}

TEST_F(FrameworkTest, AFilterBatchThatAnswersInconsistentlyIsAnErrorNamingThePlugin) {
  struct Case {
    int32_t code;
    size_t passed;  // SIZE_MAX: leave it unset
    const char* want;
  };
  const Case cases[] = {
      {SCHEDHOST_SUCCESS, 2, "answered filter_batch on 3 nodes with code 0 and 2 passed"},
      {SCHEDHOST_UNSCHEDULABLE, 3, "answered filter_batch on 3 nodes with code 2 and 3 passed"},
      {SCHEDHOST_UNSCHEDULABLE, 7, "answered filter_batch on 3 nodes with code 2 and 7 passed"},
      {SCHEDHOST_SUCCESS, SIZE_MAX, "answered filter_batch on 3 nodes with code 0 and 4 passed"},
  };
  for (const Case& c : cases) {
    Fresh();
    FakePlugin& bad = fakes.Add("Liar");
    bad.filter = [](auto, auto, auto, Reasons&) -> int32_t { return SCHEDHOST_SUCCESS; };
    bad.filter_batch = [c](const schedhost_node_info_view* const*, size_t, size_t* passed,
                           Reasons&) -> int32_t {
      if (c.passed != SIZE_MAX) *passed = c.passed;
      return c.code;
    };
    Use({&bad});
    H().AddObjects(Nodes(3));
    std::vector<std::pair<bool, Status>> got;
    Status s = FilterInRuns(H(), *H().MakePod(kPod), 3, got);
    EXPECT_EQ(s.code, Code::kError);
    EXPECT_EQ(s.plugin, "Liar");
    EXPECT_THAT(s.Message(), HasSubstr("plugin \"Liar\" " + std::string(c.want)));
  }
}

TEST_F(FrameworkTest, AFilterBatchErrorIsWrappedWithPluginName) {
  FakePlugin& a = fakes.Add("Broken");
  a.filter = [](auto, auto, auto, Reasons&) -> int32_t { return SCHEDHOST_SUCCESS; };
  a.filter_batch = [](const schedhost_node_info_view* const*, size_t, size_t* passed,
                      Reasons& r) -> int32_t {
    *passed = 1;
    r.push_back("lost my state");
    return SCHEDHOST_ERROR;
  };
  Use({&a});
  H().AddObjects(Nodes(3));
  std::vector<std::pair<bool, Status>> got;
  Status s = FilterInRuns(H(), *H().MakePod(kPod), 3, got);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(), "running \"Broken\" filter plugin: lost my state");
}

TEST_F(FrameworkTest, ScoreBatchScoresAsOneCallPerNodeAndFailsTheCycleOnError) {
  FakePlugin& a = fakes.Add("Scorer");
  // Runs of nodes may be scored on the parallelizer's threads at once: the counters are atomic.
  std::atomic<int> single_calls{0}, batch_calls{0};
  const auto one = [](const schedhost_node_info_view* ni) {
    return static_cast<int64_t>(NodeName(ni).back() - '0') * 10;
  };
  a.score = [&](const schedhost_node_info_view* ni, int64_t* s, Reasons&) -> int32_t {
    ++single_calls;
    *s = one(ni);
    return SCHEDHOST_SUCCESS;
  };
  bool fail = false;
  a.score_batch = [&](const schedhost_node_info_view* const* nodes, size_t n, int64_t* s,
                      Reasons& r) -> int32_t {
    ++batch_calls;
    if (fail) {
      r.push_back("no scores today");
      return SCHEDHOST_ERROR;
    }
    for (size_t k = 0; k < n; ++k) s[k] = one(nodes[k]);
    return SCHEDHOST_SUCCESS;
  };
  Use({&a});
  H().AddObjects(Nodes(5));
  auto pod = H().MakePod(kPod);
  std::vector<testing::ScoredNode> scored;
  ASSERT_TRUE(H().RunScoreDetailed(*pod, scored).ok());
  EXPECT_EQ(single_calls, 0);
  EXPECT_GE(batch_calls, 1);
  ASSERT_EQ(scored.size(), 5u);
  for (const auto& row : scored) {
    EXPECT_EQ(row.raw, std::vector<int64_t>{one(row.node_info)}) << NodeName(row.node_info);
  }
  fail = true;
  Status s = H().RunScoreDetailed(*pod, scored);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(), "running Score plugin \"Scorer\": no scores today");
}

TEST_F(FrameworkTest, FitErrorMessageMatchesUpstream) {
  FakePlugin& a = fakes.Add("Fit");
  a.filter = [](auto, auto, const schedhost_node_info_view* ni, Reasons& r) {
    if (NodeName(ni) == "n3") {
      r.push_back("node(s) had untolerated taint {dedicated: gpu}");
      return SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    r.push_back("Insufficient cpu");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  Use({&a});
  H().AddObjects(Nodes(3));
  std::string failure;
  EXPECT_EQ(H().Schedule(*H().MakePod(kPod), &failure), "");
  EXPECT_EQ(failure,
            "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 "
            "Insufficient cpu.");
}

// ---- PostFilter ------------------------------------------------------------------------------

TEST_F(FrameworkTest, PostFilterFirstSuccessWinsAndSeesStatuses) {
  FakePlugin& a = fakes.Add("Quiet");
  a.post_filter = [](auto, std::string*, Reasons& r) {
    r.push_back("nothing to preempt");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  FakePlugin& b = fakes.Add("Preemptor");
  size_t seen = 0;
  std::string seen_message;
  b.post_filter = [&](const schedhost_node_status_map* m, std::string* nominated, Reasons&) {
    seen = HostApi()->node_status_count(m);
    schedhost_str name{}, msg{};
    int32_t code = 0;
    HostApi()->node_status_at(m, 0, &name, &code, &msg);
    seen_message = std::string(name.data, name.len) + "=" + std::string(msg.data, msg.len);
    *nominated = "n2";
    return SCHEDHOST_SUCCESS;
  };
  Use({&a, &b});
  auto pod = H().MakePod(kPod);
  CycleState state;
  NodeStatuses statuses = {{"n1", Status::Make(Code::kUnschedulable, "Insufficient cpu")},
                           {"n2", Status::Make(Code::kUnschedulable, "Insufficient cpu")}};
  auto [nominated, status] = H().framework().RunPostFilterPlugins(state, pod->view(), statuses);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(nominated, "n2");
  EXPECT_EQ(seen, 2u);
  EXPECT_EQ(seen_message, "n1=Insufficient cpu");
}

TEST_F(FrameworkTest, PostFilterAllUnschedulableMergesReasons) {
  FakePlugin& a = fakes.Add("A");
  a.post_filter = [](auto, std::string*, Reasons& r) {
    r.push_back("a says no");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  FakePlugin& b = fakes.Add("B");
  b.post_filter = [](auto, std::string*, Reasons& r) {
    r.push_back("b says no");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  Use({&a, &b});
  CycleState state;
  auto [nominated, status] =
      H().framework().RunPostFilterPlugins(state, H().MakePod(kPod)->view(), {});
  EXPECT_EQ(status.code, Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "a says no, b says no");
  EXPECT_EQ(nominated, "");
}

// ---- Score -----------------------------------------------------------------------------------

TEST_F(FrameworkTest, ScoresAreNormalisedWeightedAndSummed) {
  FakePlugin& a = fakes.Add("Raw");  // scores 10, 20, 30 normalised to 33, 66, 100
  a.score = [](const schedhost_node_info_view* ni, int64_t* s, Reasons&) {
    *s = 10 * (NodeName(ni)[1] - '0');
    return SCHEDHOST_SUCCESS;
  };
  a.normalize_score = [](schedhost_node_score* s, size_t n, Reasons&) {
    int64_t max = 0;
    for (size_t i = 0; i < n; ++i) max = std::max(max, s[i].score);
    for (size_t i = 0; i < n; ++i) s[i].score = s[i].score * 100 / max;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& b = fakes.Add("Flat");  // 50 everywhere, weight 3
  b.score = [](auto, int64_t* s, Reasons&) {
    *s = 50;
    return SCHEDHOST_SUCCESS;
  };
  Use({&a, &b}, "[profile.plugins.score]\nenabled = [{ name = \"Flat\", weight = 3 }]\n");
  H().AddObjects(Nodes(3));
  auto scores = H().RunScore(*H().MakePod(kPod));
  EXPECT_THAT(scores, ElementsAre(std::pair<std::string, int64_t>{"n1", 33 + 150},
                                  std::pair<std::string, int64_t>{"n2", 66 + 150},
                                  std::pair<std::string, int64_t>{"n3", 100 + 150}));
}

TEST_F(FrameworkTest, ScoreOutOfRangeAfterNormalizeIsAnError) {
  FakePlugin& a = fakes.Add("TooHigh");
  a.score = [](auto, int64_t* s, Reasons&) {
    *s = 101;
    return SCHEDHOST_SUCCESS;
  };
  Use({&a});
  H().AddObjects(Nodes(2));
  std::vector<testing::ScoredNode> out;
  Status s = H().RunScoreDetailed(*H().MakePod(kPod), out);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(),
            "plugin \"TooHigh\" returns an invalid score 101, it should in the range of [0, 100] "
            "after normalizing");
}

// OutOfRangeMessage is the error a cycle fails with when `plugin` scores `score` after
// NormalizeScore.
std::string OutOfRangeMessage(const std::string& plugin, int64_t score) {
  return "plugin \"" + plugin + "\" returns an invalid score " + std::to_string(score) +
         ", it should in the range of [0, 100] after normalizing";
}

// Plugins without NormalizeScore are range-checked by the threads that score the nodes, the
// others after NormalizeScore: the error still names the first plugin in profile order and,
// within it, the first node in the table's order, and a failed NormalizeScore comes first.
TEST_F(FrameworkTest, ScoreOutOfRangeNamesTheFirstPluginAndNodeWhateverThreadSawIt) {
  bool bad = false;
  FakePlugin& n = fakes.Add("Normalized");  // out of range after NormalizeScore on every node
  n.score = [](auto, int64_t* s, Reasons&) {
    *s = 1;
    return SCHEDHOST_SUCCESS;
  };
  n.normalize_score = [&bad](schedhost_node_score* s, size_t count, Reasons&) {
    for (size_t i = 0; i < count; ++i) s[i].score = bad ? 200 + static_cast<int64_t>(i) : 1;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& d = fakes.Add("Direct");  // 100 + k on node nk from n150 on
  d.score = [&bad](const schedhost_node_info_view* ni, int64_t* s, Reasons&) {
    const int64_t k = std::stoll(NodeName(ni).substr(1));
    *s = bad && k >= 150 ? 100 + k : 0;
    return SCHEDHOST_SUCCESS;
  };
  Use({&d, &n});
  H().AddObjects(Nodes(300));  // runs of 64 nodes over two threads
  const auto pod = H().MakePod(kPod);
  std::vector<testing::ScoredNode> rows;
  ASSERT_TRUE(H().RunScoreDetailed(*pod, rows).ok());
  ASSERT_EQ(rows.size(), 300u);
  // The first node of the table whose Direct score will be out of range.
  int64_t first = 0;
  for (const auto& row : rows) {
    first = std::stoll(NodeName(row.node_info).substr(1));
    if (first >= 150) break;
  }
  bad = true;
  Status s = H().RunScoreDetailed(*pod, rows);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(), OutOfRangeMessage("Direct", 100 + first));
  // A NormalizeScore that fails is reported before any score out of range.
  n.normalize_score = [](schedhost_node_score*, size_t, Reasons& r) {
    r.push_back("cannot normalise");
    return SCHEDHOST_ERROR;
  };
  s = H().RunScoreDetailed(*pod, rows);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.Message(), HasSubstr("running Normalize on Score plugin \"Normalized\""));
}

// The same through runs of nodes: Direct scores a run in one score_batch call, Normalized (no
// batched entry) node by node within the run; weighted totals and the range check are what
// one call per node gives.
TEST_F(FrameworkTest, ScoresInRunsAreRangeCheckedAndWeightedAsNodeByNode) {
  bool bad = false;
  FakePlugin& n = fakes.Add("Normalized");  // 1 everywhere, normalised to 1
  n.score = [](auto, int64_t* s, Reasons&) {
    *s = 1;
    return SCHEDHOST_SUCCESS;
  };
  n.normalize_score = [](schedhost_node_score* s, size_t count, Reasons&) {
    for (size_t i = 0; i < count; ++i) s[i].score = 1;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& d = fakes.Add("Direct");  // k % 100 on node nk; 100 + k from n150 on when bad
  const auto direct = [&bad](const schedhost_node_info_view* ni) {
    const int64_t k = std::stoll(NodeName(ni).substr(1));
    return bad && k >= 150 ? 100 + k : k % 100;
  };
  std::atomic<int> batch_calls{0};  // runs are scored on both threads
  d.score_batch = [&](const schedhost_node_info_view* const* nodes, size_t count, int64_t* s,
                      Reasons&) {
    ++batch_calls;
    for (size_t i = 0; i < count; ++i) s[i] = direct(nodes[i]);
    return SCHEDHOST_SUCCESS;
  };
  d.score = [&](const schedhost_node_info_view* ni, int64_t* s, Reasons&) {
    *s = direct(ni);
    return SCHEDHOST_SUCCESS;
  };
  Use({&d, &n}, "[profile.plugins.score]\nenabled = [{ name = \"Direct\", weight = 3 }]\n");
  H().AddObjects(Nodes(300));
  const auto pod = H().MakePod(kPod);
  std::vector<testing::ScoredNode> rows;
  ASSERT_TRUE(H().RunScoreDetailed(*pod, rows).ok());
  EXPECT_GT(batch_calls.load(), 0);
  ASSERT_EQ(rows.size(), 300u);
  int64_t first = -1;
  for (const auto& row : rows) {
    const int64_t k = std::stoll(NodeName(row.node_info).substr(1));
    EXPECT_EQ(row.raw, (std::vector<int64_t>{k % 100, 1})) << k;
    EXPECT_EQ(row.total, (k % 100) * 3 + 1) << k;
    if (first < 0 && k >= 150) first = k;
  }
  bad = true;
  Status s = H().RunScoreDetailed(*pod, rows);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(), OutOfRangeMessage("Direct", 100 + first));
}

TEST_F(FrameworkTest, ScoresByRangesAreTheScoresByChunks) {
  bool bad = false;
  FakePlugin& n = fakes.Add("Normalized");  // halves its raw score, k % 7 on node nk
  n.score = [](const schedhost_node_info_view* ni, int64_t* s, Reasons&) {
    *s = std::stoll(NodeName(ni).substr(1)) % 7;
    return SCHEDHOST_SUCCESS;
  };
  n.normalize_score = [](schedhost_node_score* s, size_t count, Reasons&) {
    for (size_t i = 0; i < count; ++i) s[i].score /= 2;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& d = fakes.Add("Direct");  // k % 100 on node nk; 100 + k from n200 on when bad
  d.score_batch = [&bad](const schedhost_node_info_view* const* nodes, size_t count, int64_t* s,
                         Reasons&) {
    for (size_t i = 0; i < count; ++i) {
      const int64_t k = std::stoll(NodeName(nodes[i]).substr(1));
      s[i] = bad && k >= 200 ? 100 + k : k % 100;
    }
    return SCHEDHOST_SUCCESS;
  };
  d.score = [&bad](const schedhost_node_info_view* ni, int64_t* s, Reasons&) {
    const int64_t k = std::stoll(NodeName(ni).substr(1));
    *s = bad && k >= 200 ? 100 + k : k % 100;
    return SCHEDHOST_SUCCESS;
  };
  Use({&d, &n}, "[profile.plugins.score]\nenabled = [{ name = \"Direct\", weight = 3 }]\n");
  H().AddObjects(Nodes(300));
  const auto pod = H().MakePod(kPod);
  std::vector<testing::ScoredNode> by_chunks;
  ASSERT_TRUE(H().RunScoreDetailed(*pod, by_chunks).ok());
  ASSERT_EQ(by_chunks.size(), 300u);
  // Ranges of uneven sizes marked for the caller, a helper and a thread that does not exist
  // (whoever is done first takes those).
  std::vector<Parallelizer::Range> ranges;
  for (size_t begin = 0, k = 0; begin < 300; ++k) {
    const size_t end = std::min<size_t>(300, begin + 13 + (k * 29) % 70);
    ranges.push_back({begin, end, static_cast<int>(k % 3) == 2 ? 7 : static_cast<int>(k % 2)});
    begin = end;
  }
  std::vector<testing::ScoredNode> by_ranges;
  ASSERT_TRUE(H().RunScoreDetailed(*pod, by_ranges, ranges).ok());
  ASSERT_EQ(by_ranges.size(), 300u);
  for (size_t i = 0; i < 300; ++i) {
    EXPECT_EQ(by_ranges[i].node_info, by_chunks[i].node_info) << i;
    EXPECT_EQ(by_ranges[i].raw, by_chunks[i].raw) << i;
    EXPECT_EQ(by_ranges[i].weighted, by_chunks[i].weighted) << i;
    EXPECT_EQ(by_ranges[i].total, by_chunks[i].total) << i;
  }
  const int64_t k = std::stoll(NodeName(by_ranges[123].node_info).substr(1));
  EXPECT_EQ(by_ranges[123].total, (k % 100) * 3 + (k % 7) / 2);
  // The first node out of range is named whichever thread scored it.
  int64_t first = -1;
  for (const auto& row : by_chunks) {
    const int64_t kk = std::stoll(NodeName(row.node_info).substr(1));
    if (kk >= 200) {
      first = kk;
      break;
    }
  }
  bad = true;
  Status s = H().RunScoreDetailed(*pod, by_ranges, ranges);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(), OutOfRangeMessage("Direct", 100 + first));
}

TEST_F(FrameworkTest, ScoreOutOfRangeAfterNormalizeNamesThatPluginWhenItComesFirst) {
  FakePlugin& n = fakes.Add("Normalized");
  n.score = [](auto, int64_t* s, Reasons&) {
    *s = 1;
    return SCHEDHOST_SUCCESS;
  };
  n.normalize_score = [](schedhost_node_score* s, size_t count, Reasons&) {
    for (size_t i = 0; i < count; ++i) s[i].score = -1;
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& d = fakes.Add("Direct");
  d.score = [](auto, int64_t* s, Reasons&) {
    *s = 101;
    return SCHEDHOST_SUCCESS;
  };
  Use({&n, &d});
  H().AddObjects(Nodes(3));
  std::vector<testing::ScoredNode> rows;
  Status s = H().RunScoreDetailed(*H().MakePod(kPod), rows);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(),
            "plugin \"Normalized\" returns an invalid score -1, it should in the range of [0, 100] "
            "after normalizing");
}

TEST_F(FrameworkTest, PreScoreSkipSkipsScoreAndScoreErrorStops) {
  FakePlugin& a = fakes.Add("Skipped");
  a.pre_score = [](auto, auto, Reasons&) { return SCHEDHOST_SKIP; };
  a.score = [](auto, int64_t* s, Reasons&) {
    *s = 1000;  // would be out of range if it ran
    return SCHEDHOST_SUCCESS;
  };
  FakePlugin& b = fakes.Add("Failing");
  b.score = [](const schedhost_node_info_view* ni, int64_t* s, Reasons& r) {
    *s = 0;
    if (NodeName(ni) == "n150") {
      r.push_back("cannot score n150");
      return SCHEDHOST_ERROR;
    }
    return SCHEDHOST_SUCCESS;
  };
  Use({&a, &b});
  H().AddObjects(Nodes(200));
  std::vector<testing::ScoredNode> out;
  Status s = H().RunScoreDetailed(*H().MakePod(kPod), out);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_EQ(s.Message(), "running Score plugin \"Failing\": cannot score n150");
}

TEST_F(FrameworkTest, ScoreRunsInParallelOverManyNodes) {
  FakePlugin& a = fakes.Add("ByIndex");
  a.score = [](const schedhost_node_info_view* ni, int64_t* s, Reasons&) {
    *s = std::stoi(NodeName(ni).substr(1)) % 101;
    return SCHEDHOST_SUCCESS;
  };
  Use({&a});
  H().AddObjects(Nodes(500));
  auto scores = H().RunScore(*H().MakePod(kPod));
  ASSERT_EQ(scores.size(), 500u);
  for (size_t i = 0; i < scores.size(); ++i)
    EXPECT_EQ(scores[i].second, static_cast<int64_t>((i + 1) % 101));
}

// ---- Reserve, Permit, Bind -------------------------------------------------------------------

TEST_F(FrameworkTest, ReserveFailureUnreservesInReverseOrder) {
  std::vector<std::string> calls;
  FakePlugin& a = fakes.Add("R1");
  a.reserve = [&](std::string_view n, Reasons&) {
    calls.push_back("reserve R1 " + std::string(n));
    return SCHEDHOST_SUCCESS;
  };
  a.unreserve = [&](std::string_view) { calls.push_back("unreserve R1"); };
  FakePlugin& b = fakes.Add("R2");
  b.reserve = [&](std::string_view, Reasons& r) {
    calls.push_back("reserve R2");
    r.push_back("volume gone");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  b.unreserve = [&](std::string_view) { calls.push_back("unreserve R2"); };
  FakePlugin& c = fakes.Add("R3");
  c.reserve = [&](std::string_view, Reasons&) {
    calls.push_back("reserve R3");
    return SCHEDHOST_SUCCESS;
  };
  c.unreserve = [&](std::string_view) { calls.push_back("unreserve R3"); };
  Use({&a, &b, &c});
  H().AddObjects(Nodes(1));
  std::string failure;
  EXPECT_EQ(H().Schedule(*H().MakePod(kPod), &failure), "");
  EXPECT_EQ(failure, "volume gone");
  EXPECT_THAT(calls, ElementsAre("reserve R1 n1", "reserve R2", "unreserve R3", "unreserve R2",
                                 "unreserve R1"));
  EXPECT_TRUE(bound.empty());
}

TEST_F(FrameworkTest, PermitAggregatesWaitsCapsTimeoutAndStopsOnReject) {
  FakePlugin& a = fakes.Add("WaitLong");
  a.permit = [](std::string_view, int64_t* t, Reasons&) {
    *t = SCHEDHOST_MAX_PERMIT_TIMEOUT_NS * 2;
    return SCHEDHOST_WAIT;
  };
  FakePlugin& b = fakes.Add("WaitShort");
  b.permit = [](std::string_view, int64_t* t, Reasons&) {
    *t = 5'000'000'000;
    return SCHEDHOST_WAIT;
  };
  Use({&a, &b});
  CycleState state;
  auto pod = H().MakePod(kPod);
  PermitResult r = H().framework().RunPermitPlugins(state, pod->view(), "n1");
  EXPECT_EQ(r.status.code, Code::kWait);
  EXPECT_EQ(r.status.Message(),
            "one or more plugins asked to wait and no plugin rejected pod \"p\"");
  ASSERT_EQ(r.waits.size(), 2u);
  EXPECT_EQ(r.waits[0].first, "WaitLong");
  EXPECT_EQ(r.waits[0].second, std::chrono::minutes(15));
  EXPECT_EQ(r.waits[1].second, std::chrono::seconds(5));

  FakePlugins more;
  FakePlugin& rej = more.Add("Rejector");
  rej.permit = [](std::string_view, int64_t*, Reasons& rs) {
    rs.push_back("quota exceeded");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  FakePlugin& err = more.Add("Erring");
  err.permit = [](std::string_view, int64_t*, Reasons& rs) {
    rs.push_back("boom");
    return SCHEDHOST_ERROR;
  };
  Fresh();
  Use({&a, &rej});
  r = H().framework().RunPermitPlugins(state, pod->view(), "n1");
  EXPECT_EQ(r.status.code, Code::kUnschedulable);
  EXPECT_EQ(r.status.plugin, "Rejector");
  EXPECT_TRUE(r.waits.empty());
  Fresh();
  Use({&err});
  r = H().framework().RunPermitPlugins(state, pod->view(), "n1");
  EXPECT_EQ(r.status.code, Code::kError);
  EXPECT_EQ(r.status.Message(), "running Permit plugin \"Erring\": boom");
  Fresh();  // release the instances before `more` goes
}

TEST_F(FrameworkTest, BindTriesPluginsUntilOneDoesNotSkip) {
  FakePlugin& skip = fakes.Add("SkipBinder");
  int skipped = 0;
  skip.bind = [&](std::string_view, Reasons&) {
    ++skipped;
    return SCHEDHOST_SKIP;
  };
  std::vector<std::string> post;
  FakePlugin& pb = fakes.Add("After");
  pb.post_bind = [&](std::string_view n) { post.emplace_back(n); };
  // Explicit bind order: SkipBinder first, then Binder.
  Use({&skip, &pb},
      "[profile.plugins.bind]\nenabled = [{ name = \"SkipBinder\" }, { name = \"Binder\" }]\n");
  H().AddObjects(Nodes(1));
  EXPECT_EQ(H().Schedule(*H().MakePod(kPod)), "n1");
  EXPECT_EQ(skipped, 1);
  EXPECT_THAT(bound, ElementsAre("n1"));
  EXPECT_THAT(post, ElementsAre("n1"));
}

TEST_F(FrameworkTest, PreEnqueueRejectionKeepsPodOut) {
  FakePlugin& gate = fakes.Add("Gate");
  gate.pre_enqueue = [](const schedhost_pod_view* pod, Reasons& r) {
    if (pod->scheduling_gates_len == 0) return SCHEDHOST_SUCCESS;
    r.push_back("waiting for scheduling gates");
    return SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE;
  };
  Use({&gate});
  auto open = H().MakePod(kPod);
  auto gated = H().MakePod(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n  schedulingGates: [{name: wait}]\n"
      "  containers: [{name: c, image: x}]\n");
  EXPECT_TRUE(H().framework().RunPreEnqueuePlugins(open->view()).ok());
  Status s = H().framework().RunPreEnqueuePlugins(gated->view());
  EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.plugin, "Gate");
}

}  // namespace
}  // namespace schedhost::framework
