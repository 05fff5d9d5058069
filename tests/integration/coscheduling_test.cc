// Coscheduling (plugins/contrib/coscheduling) end to end: the contrib plugin library loaded from
// the build tree by name, the default profile around it, whole clusters scheduled on the virtual
// clock. A gang binds whole or not at all, never keeps resources it cannot use, two gangs that
// do not fit together do not deadlock, and single pods behind a gang are not starved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "host/cli/simulate.h"
#include "host/framework/framework.h"
#include "host/framework/testing/command.h"
#include "host/framework/testing/harness.h"
#include "host/scheduler/profile_set.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using ::testing::HasSubstr;

// The profile: Coscheduling at every point it implements and as the queue sort.
std::string Config(const std::string& args = "permit_waiting_time_seconds = 5") {
  return "[[profile]]\nname = \"default-scheduler\"\n"
         "[profile.plugins.multi_point]\nenabled = [{ name = \"Coscheduling\" }]\n"
         "[profile.plugins.queue_sort]\nenabled = [{ name = \"Coscheduling\" }]\n"
         "disabled = [{ name = \"*\" }]\n"
         "[profile.plugin_config.Coscheduling]\n" +
         args + "\n";
}

// PodGroupYaml returns a PodGroup `name` of `min` members, with `spec_extra` under spec.
std::string PodGroupYaml(const std::string& name, int min, const std::string& spec_extra = "") {
  return "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " +
         name + "\n  namespace: default\nspec:\n  minMember: " + std::to_string(min) + "\n" +
         spec_extra;
}

// Member returns a pod of PodGroup `group`, requesting `cpu`.
std::string Member(const std::string& name, const std::string& group,
                   const std::string& cpu = "1") {
  return PodYaml(name, cpu, "", "  labels:\n    scheduling.x-k8s.io/pod-group: " + group + "\n");
}

// Gang returns PodGroup `prefix` of `min` members and `size` members named prefix1..N.
std::string Gang(const std::string& prefix, int size, int min) {
  std::string y = PodGroupYaml(prefix, min);
  for (int i = 1; i <= size; ++i) y += Member(prefix + std::to_string(i), prefix);
  return y;
}

class CoschedulingTest : public SchedulerTest {
 protected:
  framework::WaitingPods& Waiting() {
    return sched_->profiles()->Find("default-scheduler")->waiting_pods();
  }
  int Bound(const std::string& prefix, int size) {
    int n = 0;
    for (int i = 1; i <= size; ++i) n += NodeOf(prefix + std::to_string(i)).empty() ? 0 : 1;
    return n;
  }
  // ExpectNothingHeld: no pod waits at Permit, nothing is assumed, only bound pods are cached.
  // GroupStatus returns status.<field> of PodGroup default/`name` as the store holds it: the
  // string of a string, the digits of an integer, "" when absent.
  std::string GroupStatus(const std::string& name, const std::string& field) {
    const auto snapshot = store_.objects().Snapshot();
    const store::KindObjects* table = snapshot->Find("podgroups.scheduling.x-k8s.io");
    const store::StoredObject* group = table ? table->Get("default", name) : nullptr;
    const model::ValueNode* status = group ? group->tree->Find("status") : nullptr;
    const model::ValueNode* value = status ? status->Find(field) : nullptr;
    if (value == nullptr) return "";
    return value->kind == SCHEDHOST_CONFIG_INT ? std::to_string(value->int_value)
                                               : value->string_value;
  }
  void ExpectNothingHeld(size_t bound) {
    EXPECT_EQ(Waiting().size(), 0u);
    EXPECT_EQ(sched_->bindings_in_flight(), 0u);
    EXPECT_EQ(sched_->cache().PodCount(), bound) << "an assumed pod still holds resources";
  }
};

TEST_F(CoschedulingTest, GangOfFourOnAClusterThatFitsFourBindsTogether) {
  Build(Config());
  Apply(NodeYaml("n1", "2") + NodeYaml("n2", "2") + Gang("g", 4, 4));
  // The first three wait at Permit, assumed; the fourth completes the gang.
  ASSERT_TRUE(Step());
  ASSERT_TRUE(Step());
  ASSERT_TRUE(Step());
  EXPECT_EQ(Waiting().size(), 3u);
  EXPECT_EQ(Bound("g", 4), 0);
  scheduler::RunResult r = Run();
  EXPECT_EQ(Bound("g", 4), 4);
  EXPECT_EQ(r.virtual_time, std::chrono::nanoseconds(0)) << "no timer had to fire";
  ExpectNothingHeld(4);
}

TEST_F(CoschedulingTest, GangOfFourOnAClusterThatFitsThreeBindsNoneAndHoldsNothing) {
  Build(Config());
  Apply(NodeYaml("n1", "3") + Gang("g", 4, 4));
  Run();
  EXPECT_EQ(Bound("g", 4), 0);
  ExpectNothingHeld(0);
  // The member that did not fit says why; the released ones name it.
  // g4, woken by the room its siblings freed, met the group's denial.
  EXPECT_THAT(MessageOf("g4"),
              HasSubstr("pod group default/g is denied for 5s after member g4 did not fit"));
  for (const char* name : {"g1", "g2", "g3"}) {
    EXPECT_THAT(MessageOf(name), HasSubstr("pod group default/g rejected: member g4 did not fit"))
        << name;
    EXPECT_EQ(Where(name), queue::PodLocation::kUnschedulable) << name;
  }
}

TEST_F(CoschedulingTest, PermitTimeoutReleasesTheWholeGang) {
  Build(Config());
  Apply(NodeYaml("n1", "8") + Gang("g", 4, 4));
  ASSERT_TRUE(Step());
  ASSERT_TRUE(Step());
  ASSERT_TRUE(Step());
  EXPECT_EQ(Waiting().size(), 3u);
  // The fourth member goes away before its turn: the other three can never be completed.
  store_.Delete<model::Pod>("default", "g4");
  scheduler::RunResult r = Run();
  EXPECT_EQ(r.virtual_time, std::chrono::seconds(5)) << "the Permit timers fired";
  EXPECT_EQ(Bound("g", 3), 0);
  ExpectNothingHeld(0);
  int timed_out = 0;
  for (const char* name : {"g1", "g2", "g3"}) {
    const std::string m = MessageOf(name);
    if (m.find("rejected due to timeout after waiting 5s at plugin Coscheduling") !=
        std::string::npos) {
      ++timed_out;
    } else {
      EXPECT_THAT(m, HasSubstr("was unreserved")) << name;
    }
  }
  EXPECT_GE(timed_out, 1);
}

TEST_F(CoschedulingTest, TwoGangsThatDoNotFitTogetherOneBindsTheOtherWaits) {
  Build(Config());
  // 6 cpus for two gangs of 4; their pods arrive interleaved. QueueSort keeps each gang
  // together (a's group was created first), so a assembles whole; b cannot and holds nothing.
  std::string y = NodeYaml("n1", "3") + NodeYaml("n2", "3") + PodGroupYaml("a", 4) +
                  PodGroupYaml("b", 4);
  for (int i = 1; i <= 4; ++i) {
    y += Member("a" + std::to_string(i), "a") + Member("b" + std::to_string(i), "b");
  }
  Apply(y);
  scheduler::RunResult r = Run();  // ends idle: no deadlock, no endless retry
  EXPECT_TRUE(r.idle);
  EXPECT_EQ(Bound("a", 4), 4);
  EXPECT_EQ(Bound("b", 4), 0);
  ExpectNothingHeld(4);
  for (int i = 1; i <= 4; ++i) {
    EXPECT_THAT(MessageOf("b" + std::to_string(i)), HasSubstr("pod group default/b")) << "b" << i;
  }
  // Room appears (a finishes): b is retried on the event and binds whole.
  for (int i = 1; i <= 4; ++i) store_.Delete<model::Pod>("default", "a" + std::to_string(i));
  Run();
  EXPECT_EQ(Bound("b", 4), 4);
  ExpectNothingHeld(4);
}

TEST_F(CoschedulingTest, AGangDoesNotStarveSinglePodsBehindIt) {
  Build(Config());
  std::string y = NodeYaml("n1", "3") + Gang("g", 4, 4);
  for (int i = 1; i <= 3; ++i) y += PodYaml("s" + std::to_string(i));
  Apply(y);
  Run();
  EXPECT_EQ(Bound("g", 4), 0);
  EXPECT_EQ(Bound("s", 3), 3) << "the gang's reservations were released for the single pods";
  ExpectNothingHeld(3);
}

TEST_F(CoschedulingTest, TooFewMembersAreRejectedEarlyThenCompletedByNewMembers) {
  Build(Config());
  Apply(NodeYaml("n1", "4") + Gang("g", 2, 4));
  Run();
  EXPECT_EQ(Waiting().size(), 0u) << "rejected at PreFilter, never assumed";
  EXPECT_THAT(MessageOf("g1"),
              HasSubstr("pod group default/g has 2 of the 4 pods its PodGroup needs "
                        "(spec.minMember)"));
  ExpectNothingHeld(0);
  // The missing members arrive. This host sends no event for a new pending pod (upstream's
  // UnscheduledPodAdd) and plugins cannot activate pods (upstream's PodsToActivate), so g1 and
  // g2 come back on the next cluster event that may make room: here a node.
  Apply(Member("g3", "g") + Member("g4", "g") + NodeYaml("n2", "1"));
  Run();
  EXPECT_EQ(Bound("g", 4), 4);
  ExpectNothingHeld(4);
}

TEST_F(CoschedulingTest, AMemberWaitsForItsPodGroupAndBindsOnceItIsCreated) {
  Build(Config());
  Apply(NodeYaml("n1", "4") + Member("g1", "g") + Member("g2", "g"));
  Run();
  // Held before the queue (PreEnqueue): nothing is tried, nothing bound on a guess.
  for (const char* name : {"g1", "g2"}) {
    EXPECT_EQ(NodeOf(name), "") << name;
    EXPECT_EQ(Where(name), queue::PodLocation::kGated) << name;
    EXPECT_THAT(MessageOf(name), HasSubstr("PodGroup default/g not found")) << name;
  }
  // The PodGroup's creation is an event of the declared kind: its members come back and bind.
  Apply(PodGroupYaml("g", 2));
  Run();
  EXPECT_EQ(Bound("g", 2), 2);
  ExpectNothingHeld(2);
}

TEST_F(CoschedulingTest, AGroupIsOrderedByItsPodGroupsTimeEvenWhenItsPodsCameFirst) {
  Build(Config());
  // b's PodGroup is a year younger than a's, but a's pods (created in 2030) arrive before their
  // PodGroup and wait for it: the group's place in the queue is its PodGroup's time, not its
  // pods'.
  auto late_member = [](const std::string& name) {
    return PodYaml(name, "1", "",
                   "  creationTimestamp: \"2030-01-01T00:00:00Z\"\n"
                   "  labels:\n    scheduling.x-k8s.io/pod-group: a\n");
  };
  Apply(NodeYaml("n1", "2") +
        "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: b\n"
        "  namespace: default\n  creationTimestamp: \"2021-01-01T00:00:00Z\"\nspec:\n"
        "  minMember: 2\n" +
        late_member("a1") + late_member("a2") + Member("b1", "b") + Member("b2", "b"));
  Apply("---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: a\n"
        "  namespace: default\n  creationTimestamp: \"2020-01-01T00:00:00Z\"\nspec:\n"
        "  minMember: 2\n");
  Run();
  EXPECT_EQ(Bound("a", 2), 2) << "the older PodGroup's gang goes first";
  EXPECT_EQ(Bound("b", 2), 0);
  ExpectNothingHeld(2);
}

TEST_F(CoschedulingTest, ALoweredMinMemberTakesEffectWithoutAReload) {
  Build(Config());
  Apply(NodeYaml("n1", "4") + Gang("g", 2, 3));
  Run();
  EXPECT_EQ(Bound("g", 2), 0);
  EXPECT_THAT(MessageOf("g1"), HasSubstr("has 2 of the 3 pods its PodGroup needs"));
  // Another PodGroup changing wakes nobody; this one's update wakes its members.
  Apply(PodGroupYaml("other", 5));
  Apply(PodGroupYaml("g", 2));
  Run();
  EXPECT_EQ(Bound("g", 2), 2);
}

TEST_F(CoschedulingTest, APodGroupThatDoesNotDecodeKeepsItsMembersOutNamingTheField) {
  Build(Config());
  Apply(NodeYaml("n1") +
        "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n"
        "  name: g\n  namespace: default\nspec:\n  minMember: four\n" +
        Member("bad", "g"));
  Run();
  EXPECT_EQ(NodeOf("bad"), "");
  EXPECT_THAT(MessageOf("bad"), HasSubstr("PodGroup default/g: spec.minMember: expected an integer"));
  // Fixed, it lets the pod in.
  Apply(PodGroupYaml("g", 1));
  Run();
  EXPECT_EQ(NodeOf("bad"), "n1");
}

TEST_F(CoschedulingTest, TheClusterLackingMinResourcesKeepsTheGroupOut) {
  Build(Config());
  Apply(NodeYaml("n1", "2") + PodGroupYaml("g", 2, "  minResources:\n    cpu: \"3\"\n") +
        Member("g1", "g") + Member("g2", "g"));
  Run();
  EXPECT_EQ(Bound("g", 2), 0);
  EXPECT_EQ(Waiting().size(), 0u) << "rejected at PreFilter, never assumed";
  EXPECT_THAT(MessageOf("g1"), HasSubstr("pod group default/g: the cluster's free resources lack "
                                         "cpu 1 of its PodGroup's spec.minResources"));
  // A node with room arrives: the group passes the check and binds.
  Apply(NodeYaml("n2", "2"));
  Run();
  EXPECT_EQ(Bound("g", 2), 2);
}

TEST_F(CoschedulingTest, ScheduleTimeoutSecondsBoundsThePermitWait) {
  Build(Config("permit_waiting_time_seconds = 30"));
  Apply(NodeYaml("n1", "8") + PodGroupYaml("g", 3, "  scheduleTimeoutSeconds: 2\n") +
        Member("g1", "g") + Member("g2", "g") + Member("g3", "g"));
  ASSERT_TRUE(Step());
  ASSERT_TRUE(Step());
  EXPECT_EQ(Waiting().size(), 2u);
  store_.Delete<model::Pod>("default", "g3");
  scheduler::RunResult r = Run();
  EXPECT_EQ(r.virtual_time, std::chrono::seconds(2)) << "the PodGroup's timeout, not the args'";
  ExpectNothingHeld(0);
}

TEST_F(CoschedulingTest, BindingMembersWritesThePodGroupStatus) {
  Build(Config());
  Apply(NodeYaml("n1", "4") + Gang("g", 3, 3));
  EXPECT_EQ(GroupStatus("g", "phase"), "");
  Run();
  EXPECT_EQ(Bound("g", 3), 3);
  EXPECT_EQ(GroupStatus("g", "phase"), "Scheduled");
  EXPECT_EQ(GroupStatus("g", "scheduled"), "3");
  EXPECT_THAT(GroupStatus("g", "scheduleStartTime"), ::testing::MatchesRegex(
                                                         "[0-9]{4}-[0-9]{2}-[0-9]{2}T.*Z"));
}

TEST_F(CoschedulingTest, PodsWithoutAGroupScheduleAsUsual) {
  Build(Config());
  Apply(NodeYaml("n1", "2") + PodYaml("p1") + PodYaml("p2") + PodYaml("p3"));
  Run();
  EXPECT_EQ(NodeOf("p1"), "n1");
  EXPECT_EQ(NodeOf("p2"), "n1");
  EXPECT_EQ(NodeOf("p3"), "");
}

TEST_F(CoschedulingTest, BadArgumentsAreRefusedNamingTheField) {
  for (const auto& [args, want] : std::vector<std::pair<std::string, std::string>>{
           {"permit_waiting_time = 5",
            "plugin_config.Coscheduling.permit_waiting_time: unknown key; did you mean "
            "\"permit_waiting_time_seconds\"?"},
           {"permit_waiting_time_seconds = 0",
            "plugin_config.Coscheduling.permit_waiting_time_seconds: must be in the range [0.001, "
            "900], got 0"},
           {"permit_waiting_time_seconds = 901", "must be in the range [0.001, 900], got 901"},
           {"assembly_grace_seconds = -1",
            "plugin_config.Coscheduling.assembly_grace_seconds: must be in the range [0, 3600], "
            "got -1"},
           {"denied_group_retry_seconds = \"5s\"",
            "plugin_config.Coscheduling.denied_group_retry_seconds: expected a number"},
       }) {
    try {
      Build(Config(args));
      ADD_FAILURE() << "accepted: " << args;
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), HasSubstr(want)) << args;
    }
  }
}

// The plugin folder's example through `schedctl simulate --config` (the library API the binary
// runs, then the binary itself): Coscheduling is found by name without any library path.
std::string ExampleDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/plugins/contrib/coscheduling/examples/";
}

TEST(CoschedulingSimulateTest, TheExampleBindsOneGangWholeAndTheSinglePods) {
  cli::SimulateOptions o;
  o.config_path = ExampleDir() + "coscheduling.toml";
  o.manifest_paths = {ExampleDir() + "gangs.yaml"};
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(cli::RunSimulate(o, out, err), 0) << err.str();
  EXPECT_EQ(err.str(), "") << "the run ended idle";
  std::map<std::string, nlohmann::json> pods;
  const nlohmann::json j = nlohmann::json::parse(out.str());
  for (const auto& p : j["pods"]) {
    pods[p["name"].get<std::string>()] = p;
  }
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(pods["training-" + std::to_string(i)]["status"], "Bound") << i;
    EXPECT_EQ(pods["validation-" + std::to_string(i)]["status"], "Pending") << i;
    EXPECT_THAT(pods["validation-" + std::to_string(i)]["message"].get<std::string>(),
                HasSubstr("pod group default/validation"));
  }
  EXPECT_EQ(pods["web-1"]["status"], "Bound");
  EXPECT_EQ(pods["web-2"]["status"], "Bound");
}

TEST(CoschedulingSimulateTest, TheBinaryFindsTheContribPluginWithoutALibraryPath) {
  const std::filesystem::path schedctl = framework::testing::BinDir() / "schedctl";
  if (!std::filesystem::exists(schedctl)) GTEST_SKIP() << "schedctl not built at " << schedctl;
  const auto r = framework::testing::RunCommand(schedctl.string() + " simulate -o json --config " +
                                                ExampleDir() + "coscheduling.toml -f " +
                                                ExampleDir() + "gangs.yaml 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int bound = 0;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  for (const auto& p : j["pods"]) bound += p["status"].get<std::string>() == "Bound" ? 1 : 0;
  EXPECT_EQ(bound, 6) << r.output;
}

}  // namespace
}  // namespace schedhost::integration
