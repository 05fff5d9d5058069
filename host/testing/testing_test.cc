// schedhost::testing::Harness through libschedhost-testing.so only, as a plugin author's test
// links it: the Probe plugin (testdata/probe_plugin.cc) loaded from its .so, every extension
// point called in upstream's order on one CycleState, events and queueing hints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <schedhost/plugin.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <schedhost/testing.h>
#include <schedhost/testing.hpp>
#include <string>
#include <vector>

namespace {

using schedhost::testing::Code;
using schedhost::testing::Cycle;
using schedhost::testing::Event;
using schedhost::testing::Harness;
using schedhost::testing::NodeYaml;
using schedhost::testing::PodYaml;
using schedhost::testing::QueueingHint;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Three nodes; n1 runs one `web` pod, n2 runs none, n3 runs two.
class HarnessTest : public ::testing::Test {
 protected:
  HarnessTest() : h_({.libraries = {PROBE_PLUGIN}}) {
    h_.UsePlugins({"Probe"}, "[profile.plugin_config.Probe]\nmax_per_node = 2\n");
    h_.AddObjects(NodeYaml("n1") + "---\n" + NodeYaml("n2") + "---\n" + NodeYaml("n3"));
    h_.AddObjects(PodYaml("w1", {{"app", "web"}}, {}, "n1") + "---\n" +
                  PodYaml("w2", {{"app", "web"}}, {}, "n3") + "---\n" +
                  PodYaml("w3", {{"app", "web"}}, {}, "n3"));
  }

  Harness h_;
};

TEST_F(HarnessTest, LoadsThePluginFromItsLibraryIntoTheProfile) {
  EXPECT_THAT(h_.PluginNames(),
              ::testing::IsSupersetOf({"Probe", "PrioritySort", "DefaultBinder"}));
}

TEST_F(HarnessTest, PreFilterFilterScoreSeeTheClusterThroughTheCycleState) {
  Cycle c = h_.StartCycle(PodYaml("new", {{"app", "web"}}));
  ASSERT_TRUE(c.PreFilter().ok());
  EXPECT_EQ(c.PreFilterNodes(), std::nullopt);

  const auto filtered = c.FilterAll();
  ASSERT_EQ(filtered.size(), 3u);
  EXPECT_EQ(filtered[0].node, "n1");
  EXPECT_TRUE(filtered[0].result.ok());
  EXPECT_TRUE(filtered[1].result.ok());
  EXPECT_EQ(filtered[2].result.code, Code::kUnschedulable);
  EXPECT_EQ(filtered[2].result.plugin, "Probe");
  EXPECT_THAT(filtered[2].result.reasons, ElementsAre("node(s) already run 2 pod(s) of app web"));

  ASSERT_TRUE(c.PreScore().ok());
  const auto scores = c.Score();
  ASSERT_EQ(scores.size(), 2u);  // the feasible nodes
  EXPECT_EQ(scores[0].node, "n1");
  ASSERT_EQ(scores[0].plugins.size(), 1u);
  // Raw = pods of the app; NormalizeScore inverts against the maximum (1): n1 0, n2 100.
  EXPECT_EQ(scores[0].plugins[0].plugin, "Probe");
  EXPECT_EQ(scores[0].plugins[0].raw, 1);
  EXPECT_EQ(scores[0].plugins[0].normalized, 0);
  EXPECT_EQ(scores[1].node, "n2");
  EXPECT_EQ(scores[1].plugins[0].raw, 0);
  EXPECT_EQ(scores[1].plugins[0].normalized, 100);
  EXPECT_EQ(scores[1].total, 100);  // weight 1
}

TEST_F(HarnessTest, AddPodAndRemovePodChangeWhatFilterSees) {
  Cycle c = h_.StartCycle(PodYaml("new", {{"app", "web"}}));
  ASSERT_TRUE(c.PreFilter().ok());
  // n3 is full; removing one of its web pods (as preemption would) frees it.
  EXPECT_EQ(c.Filter("n3").code, Code::kUnschedulable);
  ASSERT_TRUE(c.RemovePod("default/w2", "n3").ok());
  EXPECT_TRUE(c.Filter("n3").ok());
  // n1 has one; a nominated web pod added to it fills it.
  EXPECT_TRUE(c.Filter("n1").ok());
  ASSERT_TRUE(c.AddPod(PodYaml("nominated", {{"app", "web"}}), "n1").ok());
  EXPECT_EQ(c.Filter("n1").code, Code::kUnschedulable);
  // A pod of another app changes nothing.
  ASSERT_TRUE(c.AddPod(PodYaml("db", {{"app", "db"}}), "n2").ok());
  EXPECT_TRUE(c.Filter("n2").ok());
  EXPECT_THAT(
      [&] { c.RemovePod("default/ghost", "n2"); },
      ::testing::ThrowsMessage<schedhost::testing::Error>(HasSubstr("no pod default/ghost")));
}

TEST_F(HarnessTest, PreFilterNodeSetAndSkip) {
  Cycle only = h_.StartCycle(PodYaml("pinned", {{"app", "web"}, {"probe/only-node", "n2"}}));
  ASSERT_TRUE(only.PreFilter().ok());
  EXPECT_EQ(only.PreFilterNodes(), std::vector<std::string>{"n2"});
  const schedhost::testing::Result n1 = only.Filter("n1");
  EXPECT_EQ(n1.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(n1.Message(), HasSubstr("didn't satisfy plugin(s) [Probe]"));
  EXPECT_TRUE(only.Filter("n2").ok());

  // No app label: PreFilter skips, so Filter does not run (it would fail without state).
  Cycle plain = h_.StartCycle(PodYaml("plain"));
  EXPECT_TRUE(plain.PreFilter().ok());
  EXPECT_TRUE(plain.Filter("n3").ok());
}

TEST_F(HarnessTest, SkipIsNamedAtPreFilterAndPreScoreAndInTheScores) {
  // No app label: Probe returns Skip at PreFilter and PreScore; its Score column is no score.
  Cycle plain = h_.StartCycle(PodYaml("plain"));
  const schedhost::testing::Result pre_filter = plain.PreFilter();
  EXPECT_TRUE(pre_filter.ok());
  EXPECT_THAT(pre_filter.skipped, ElementsAre("Probe"));
  EXPECT_EQ(plain.FilterAll().size(), 3u);
  const schedhost::testing::Result pre_score = plain.PreScore();
  EXPECT_TRUE(pre_score.ok());
  EXPECT_THAT(pre_score.skipped, ElementsAre("Probe"));
  const auto skipped_scores = plain.Score();
  ASSERT_EQ(skipped_scores.size(), 3u);
  for (const auto& node : skipped_scores) {
    ASSERT_EQ(node.plugins.size(), 1u);
    EXPECT_EQ(node.plugins[0].plugin, "Probe");
    EXPECT_TRUE(node.plugins[0].skipped) << node.node;
    EXPECT_EQ(node.plugins[0].weighted, 0);
  }

  // An app label: nothing skips.
  Cycle web = h_.StartCycle(PodYaml("new", {{"app", "web"}}));
  EXPECT_THAT(web.PreFilter().skipped, ::testing::IsEmpty());
  web.FilterAll();
  EXPECT_THAT(web.PreScore().skipped, ::testing::IsEmpty());
  for (const auto& node : web.Score()) EXPECT_FALSE(node.plugins.at(0).skipped) << node.node;
}

TEST_F(HarnessTest, CallsOutOfUpstreamsOrderAreRefused) {
  Cycle c = h_.StartCycle(PodYaml("new", {{"app", "web"}}));
  EXPECT_THAT([&] { c.Filter("n1"); }, ::testing::ThrowsMessage<schedhost::testing::Error>(
                                           HasSubstr("run PreFilter first")));
  ASSERT_TRUE(c.PreFilter().ok());
  EXPECT_THROW(c.PreScore(), schedhost::testing::Error);
  EXPECT_THROW(c.PostFilter(), schedhost::testing::Error);
  c.FilterAll();
  EXPECT_THROW(c.Score(), schedhost::testing::Error);
  h_.AddObjects(NodeYaml("n4"));
  EXPECT_THAT([&] { c.FilterAll(); }, ::testing::ThrowsMessage<schedhost::testing::Error>(
                                          HasSubstr("cluster or profile changed")));
  Cycle d = h_.StartCycle(PodYaml("other", {{"app", "web"}}));
  h_.UsePlugins({"Probe"});
  EXPECT_THROW(d.PreFilter(), schedhost::testing::Error);
}

TEST_F(HarnessTest, PostFilterSeesFilterAllsRejections) {
  h_.AddObjects(PodYaml("w4", {{"app", "web"}}, {}, "n1") + "---\n" +
                PodYaml("w5", {{"app", "web"}}, {}, "n2") + "---\n" +
                PodYaml("w6", {{"app", "web"}}, {}, "n2"));
  Cycle c = h_.StartCycle(PodYaml("new", {{"app", "web"}}));
  ASSERT_TRUE(c.PreFilter().ok());
  for (const auto& r : c.FilterAll()) EXPECT_EQ(r.result.code, Code::kUnschedulable) << r.node;
  const auto post = c.PostFilter();
  EXPECT_TRUE(post.result.ok()) << post.result.Message();
  EXPECT_EQ(post.nominated_node, "n1");
}

TEST_F(HarnessTest, ReserveUnreservePermitAndBinding) {
  Cycle a = h_.StartCycle(PodYaml("a", {{"app", "web"}}));
  Cycle b = h_.StartCycle(PodYaml("b", {{"app", "web"}}));
  ASSERT_TRUE(a.Reserve("n2").ok());
  const auto taken = b.Reserve("n2");
  EXPECT_EQ(taken.code, Code::kUnschedulable);
  EXPECT_EQ(taken.plugin, "Probe");
  a.Unreserve("n2");
  EXPECT_TRUE(b.Reserve("n2").ok());

  EXPECT_TRUE(b.Permit("n2").result.ok());
  Cycle waits = h_.StartCycle(PodYaml("w", {{"probe/permit", "wait"}}));
  const auto wait = waits.Permit("n2");
  EXPECT_EQ(wait.result.code, Code::kWait);
  ASSERT_EQ(wait.waits.size(), 1u);
  EXPECT_EQ(wait.waits[0].first, "Probe");
  EXPECT_EQ(wait.waits[0].second, std::chrono::seconds(5));
  Cycle denied = h_.StartCycle(PodYaml("d", {{"probe/permit", "deny"}}));
  EXPECT_EQ(denied.Permit("n2").result.code, Code::kUnschedulable);

  EXPECT_EQ(b.PreBind("no-prebind").code, Code::kError);
  ASSERT_TRUE(b.PreBind("n2").ok());
  ASSERT_TRUE(b.Bind("n2").ok());
  EXPECT_EQ(a.Reserve("n2").code, Code::kUnschedulable);  // b holds the slot until PostBind
  b.PostBind("n2");
  EXPECT_TRUE(a.Reserve("n2").ok());
  EXPECT_THAT(h_.Bindings(), ElementsAre("default/b -> n2"));
}

TEST_F(HarnessTest, ScheduleOneRunsTheWholeCycle) {
  const auto placed = h_.ScheduleOne(PodYaml("new", {{"app", "web"}}));
  EXPECT_EQ(placed.node, "n2");  // n3 is full, n1 scores 0
  const auto failed =
      h_.ScheduleOne(PodYaml("pinned", {{"app", "web"}, {"probe/only-node", "n3"}}));
  EXPECT_EQ(failed.node, "");
  EXPECT_THAT(failed.message, HasSubstr("0/3 nodes are available"));
}

TEST_F(HarnessTest, EventsToRegisterAndQueueingHintsAsTheQueueAsks) {
  const auto regs = h_.EventsToRegister();
  std::vector<std::string> probe;
  for (const auto& r : regs) {
    if (r.plugin == "Probe")
      probe.push_back(std::to_string(r.resource) + ":" + std::to_string(r.actions) + ":" +
                      (r.has_hint ? "hint" : "-"));
  }
  EXPECT_THAT(probe, ElementsAre(std::to_string(SCHEDHOST_RESOURCE_NODE) + ":" +
                                     std::to_string(SCHEDHOST_ACTION_ADD |
                                                    SCHEDHOST_ACTION_UPDATE_NODE_LABEL) +
                                     ":hint",
                                 std::to_string(SCHEDHOST_RESOURCE_ASSIGNED_POD) + ":" +
                                     std::to_string(SCHEDHOST_ACTION_DELETE) + ":-"));

  const std::string pod = PodYaml("p", {{"app", "web"}});
  const std::string plain = NodeYaml("n9");
  const std::string ready = NodeYaml("n9", {{"probe/ready", "true"}});
  struct Case {
    const char* name;
    Event event;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"node add, hint says skip", Event::NodeAdd(plain), QueueingHint::kSkip},
      {"node add, hint says queue", Event::NodeAdd(ready), QueueingHint::kQueue},
      {"label update to ready", Event::NodeUpdate(plain, ready), QueueingHint::kQueue},
      {"update that changes nothing moves no pod", Event::NodeUpdate(plain, plain),
       QueueingHint::kSkip},
      {"node delete: not registered", Event::NodeDelete(plain), QueueingHint::kSkip},
      {"assigned pod delete: registered, no hint",
       Event::AssignedPodDelete(PodYaml("w1", {{"app", "web"}}, {}, "n1")), QueueingHint::kQueue},
      {"assigned pod add: not registered",
       Event::AssignedPodAdd(PodYaml("w9", {{"app", "web"}}, {}, "n1")), QueueingHint::kSkip},
  };
  for (const Case& c : cases) EXPECT_EQ(h_.Hint("Probe", pod, c.event), c.want) << c.name;
  EXPECT_THROW(h_.Hint("Ghost", pod, Event::NodeAdd(plain)), schedhost::testing::Error);
}

TEST_F(HarnessTest, PreEnqueueRunsBeforeAnyCycle) {
  h_.UsePlugins({"Probe", "SchedulingGates"});
  EXPECT_TRUE(h_.PreEnqueue(PodYaml("free")).ok());
  const auto gated =
      h_.PreEnqueue(PodYaml("held") + "  schedulingGates: [{name: example.com/hold}]\n");
  EXPECT_EQ(gated.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(gated.plugin, "SchedulingGates");
  EXPECT_THAT(gated.Message(), HasSubstr("example.com/hold"));
}

TEST(HarnessErrors, RefusedInputsSayWhy) {
  EXPECT_THAT(
      [] { Harness({.libraries = {"/nonexistent/plugin.so"}}); },
      ::testing::ThrowsMessage<schedhost::testing::Error>(HasSubstr("/nonexistent/plugin.so")));
  Harness h({.libraries = {PROBE_PLUGIN}});
  EXPECT_THROW(h.AddObjects("apiVersion: v1\nkind: Node\nmetadata: {}\n"),
               schedhost::testing::Error);
  h.UsePlugins({"Probe"}, "[profile.plugin_config.Probe]\nmax_per_nod = 2\n");
  EXPECT_THAT([&] { h.PluginNames(); },
              ::testing::ThrowsMessage<schedhost::testing::Error>(HasSubstr("max_per_nod")));
}

TEST(HarnessPluginDir, FoundBesideTheLibraryWithoutTheEnvironment) {
  const std::string saved = std::getenv("SCHEDHOST_PLUGIN_DIR");
  unsetenv("SCHEDHOST_PLUGIN_DIR");
  std::vector<std::string> names;
  EXPECT_NO_THROW({
    Harness h;
    names = h.PluginNames();
  });
  setenv("SCHEDHOST_PLUGIN_DIR", saved.c_str(), 1);
  EXPECT_THAT(names, ::testing::Contains("NodeResourcesFit"));  // the default profile
}

// An author's build of a plugin that is also installed in the plugin directory (the contrib
// package beside the template it came from) takes the installed copy's place instead of being
// refused as a duplicate.
TEST(HarnessPrecedenceTest, AnAuthorsBuildTakesThePlaceOfTheCopyInThePluginDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("schedhost-precedence-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(BUILTIN_PLUGIN_DIR)) {
    if (e.path().extension() == ".so") fs::create_symlink(e.path(), dir / e.path().filename());
  }
  fs::copy_file(PROBE_PLUGIN, dir / "probe_installed.so");
  std::vector<std::string> names;
  EXPECT_NO_THROW({
    Harness h({.libraries = {PROBE_PLUGIN}, .plugin_dir = dir.string()});
    h.UsePlugins({"Probe"});
    names = h.PluginNames();
  });
  fs::remove_all(dir);
  EXPECT_THAT(names, ::testing::Contains("Probe"));
}

// The C API of testing.h (what the Rust crate drives): a bad request is an {"error": ...} naming
// what is wrong, and a good one answers {"ok": ...}.
std::string Take(char* text) {
  std::string out = text == nullptr ? "" : text;
  schedhost_testing_free(text);
  return out;
}

TEST(TestingCApiTest, BadRequestsAreErrorsThatSayWhyAndGoodOnesAnswer) {
  EXPECT_EQ(schedhost_testing_api_version(), SCHEDHOST_TESTING_C_API_VERSION);
  schedhost_testing_harness* h = nullptr;
  const std::string opts = std::string(R"({"libraries": [")") + PROBE_PLUGIN + R"("]})";
  ASSERT_EQ(Take(schedhost_testing_harness_new(opts.c_str(), &h)), R"({"ok":null})");
  ASSERT_NE(h, nullptr);
  EXPECT_THAT(Take(schedhost_testing_harness_call(h, "not json")),
              HasSubstr(R"({"error":"the request is not a JSON object: not json"})"));
  EXPECT_THAT(Take(schedhost_testing_harness_call(h, R"({"op": "fly"})")),
              HasSubstr(R"(unknown harness op \"fly\" (use_plugins,)"));
  EXPECT_THAT(Take(schedhost_testing_harness_call(h, R"({"op": "add_objects"})")),
              HasSubstr(R"(the request has no \"yaml\")"));
  EXPECT_EQ(Take(schedhost_testing_harness_call(
                h, R"({"op": "use_plugins", "plugins": ["Probe"], "extra_toml": ""})")),
            R"({"ok":null})");
  EXPECT_THAT(Take(schedhost_testing_harness_call(h, R"({"op": "plugin_names"})")),
              HasSubstr(R"("Probe")"));
  schedhost_testing_cycle* c = nullptr;
  EXPECT_THAT(Take(schedhost_testing_cycle_start(h, "kind: Pod", &c)), HasSubstr("error"));
  EXPECT_EQ(c, nullptr);
  const std::string pod = PodYaml("p");
  ASSERT_EQ(Take(schedhost_testing_cycle_start(h, pod.c_str(), &c)), R"({"ok":null})");
  EXPECT_THAT(Take(schedhost_testing_cycle_call(c, R"({"op": "filter", "node": "n9"})")),
              HasSubstr("error"));  // before PreFilter: out of upstream's order
  EXPECT_THAT(Take(schedhost_testing_cycle_call(c, R"({"op": "pre_filter"})")),
              HasSubstr(R"("code":0)"));
  schedhost_testing_cycle_delete(c);
  schedhost_testing_harness_delete(h);
  EXPECT_THAT(Take(schedhost_testing_run(R"({"op": "simulate", "seed": -1, "manifests": ""})")),
              HasSubstr(R"(\"seed\" must be a non-negative integer)"));
}

}  // namespace
