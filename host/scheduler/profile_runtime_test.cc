// ProfileRuntime: queueing hints from plugins' event registrations (matching events, hint
// callbacks, plugins without registrations), PreEnqueue through the loaded SchedulingGates, and
// QueueSort with its deterministic tie-break; plus ProfileSet's in-process registration.
#include "host/scheduler/profile_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "host/config/host_config.h"
#include "host/framework/testing/fake_plugin.h"
#include "host/queue/cluster_event.h"

namespace schedhost::scheduler {
namespace {

using ::testing::HasSubstr;

std::filesystem::path PluginDir() { return std::getenv("SCHEDHOST_PLUGIN_DIR"); }

// Hinted: registers node additions (with a hint that skips nodes named "skip-me") and pod
// deletions (no hint).
int32_t SkipNamedNodes(void*, const schedhost_pod_view*, const schedhost_cluster_event*,
                       const schedhost_event_object*,
                       const schedhost_event_object* new_obj) noexcept {
  if (new_obj->node != nullptr &&
      std::string_view(new_obj->node->name.data, new_obj->node->name.len) == "skip-me") {
    return SCHEDHOST_QUEUE_SKIP;
  }
  return SCHEDHOST_QUEUE;
}

int32_t HintedEvents(void*, const schedhost_event_registration** out, size_t* len) noexcept {
  static const schedhost_event_registration kEvents[] = {
      {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD}, &SkipNamedNodes},
      {{SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_DELETE}, nullptr},
  };
  *out = kEvents;
  *len = 2;
  return SCHEDHOST_SUCCESS;
}

std::shared_ptr<const model::Node> Node(const std::string& name) {
  model::NodeData d;
  d.metadata.name = name;
  return model::Node::Make(std::move(d));
}

std::shared_ptr<const model::Pod> Pod(const std::string& name, int32_t priority = 0,
                                      int64_t created = 0, std::vector<std::string> gates = {}) {
  model::PodData d;
  d.metadata.name = name;
  d.metadata.uid = "uid-" + name;
  d.metadata.creation_timestamp_ns = created;
  d.spec.priority = priority;
  d.spec.scheduling_gates = std::move(gates);
  return model::Pod::Make(std::move(d));
}

class ProfileRuntimeTest : public ::testing::Test {
 protected:
  ProfileRuntimeTest() {
    framework::testing::FakePlugin& hinted = fakes_.Add("Hinted");
    hinted.filter = [](const schedhost_cycle_state*, const schedhost_pod_view*,
                       const schedhost_node_info_view*,
                       framework::testing::Reasons&) { return SCHEDHOST_SUCCESS; };
    framework::testing::FakePlugin& plain = fakes_.Add("NoEvents");
    plain.filter = hinted.filter;
    config::HostConfig cfg = config::ParseConfig(
        "[host]\nparallelism = 1\n[[profile]]\nname = \"default-scheduler\"\n"
        "[profile.plugins.filter]\nenabled = [{ name = \"Hinted\" }, { name = \"NoEvents\" }]\n",
        "test.toml", {});
    // FakePlugin has no EventsToRegister slot: fill it into the fake's own descriptor (the fake
    // finds itself by the descriptor's address, so it must be that one).
    const schedhost_plugin_descriptor* hd = hinted.descriptor();
    const_cast<schedhost_plugin_descriptor*>(hd)->events_to_register = &HintedEvents;
    runtime_ = std::make_shared<ProfileRuntime>(
        ProfileSet::Build(cfg, PluginDir(), {hd, plain.descriptor()}));
  }

  framework::testing::FakePlugins fakes_;
  std::shared_ptr<ProfileRuntime> runtime_;
};

TEST_F(ProfileRuntimeTest, HintsFollowRegistrationsAndHintCallbacks) {
  auto pod = Pod("p");
  struct Case {
    const char* name;
    std::string plugin;
    queue::ClusterEvent event;
    bool want;
  };
  const std::vector<Case> cases = {
      {"registered event, hint says queue", "Hinted", queue::MakeNodeAddEvent(Node("fresh")), true},
      {"registered event, hint says skip", "Hinted", queue::MakeNodeAddEvent(Node("skip-me")),
       false},
      {"registered without hint", "Hinted", queue::MakeAssignedPodDeleteEvent(Pod("gone")), true},
      {"not registered", "Hinted", queue::MakeNodeDeleteEvent(Node("n")), false},
      {"plugin without registrations wants everything", "NoEvents",
       queue::MakeNodeDeleteEvent(Node("n")), true},
      {"unknown plugin", "Ghost", queue::MakeNodeDeleteEvent(Node("n")), true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(runtime_->Hint(c.plugin, *pod, c.event), c.want) << c.name;
  }
  model::PodData other = pod->data();
  other.spec.scheduler_name = "elsewhere";
  EXPECT_TRUE(
      runtime_->Hint("Hinted", *model::Pod::Make(other), queue::MakeNodeAddEvent(Node("skip-me"))))
      << "a pod of no profile here: nothing to ask";
}

TEST_F(ProfileRuntimeTest, InterestAgreesWithHintAboutDeafPlugins) {
  auto pod = Pod("p");
  const std::vector<queue::ClusterEvent> events = {
      queue::MakeNodeAddEvent(Node("fresh")), queue::MakeNodeDeleteEvent(Node("n")),
      queue::MakeAssignedPodDeleteEvent(Pod("gone")), queue::MakeAssignedPodAddEvent(Pod("new"))};
  for (const queue::ClusterEvent& ev : events) {
    const queue::EventInterest interest = runtime_->Interest(ev);
    for (const std::string plugin : {"Hinted", "NoEvents", "Ghost"}) {
      queue::QueuedPodInfo info;
      info.pod = pod;
      info.unschedulable_plugins = {plugin};
      // Deaf means Hint would say Skip; the reverse need not hold (a hint may skip).
      if (!interest.MayMatter(info)) {
        EXPECT_FALSE(runtime_->Hint(plugin, *pod, ev)) << plugin << " " << ev.label;
      }
    }
  }
  // Hinted registered for node additions and pod deletions only: deaf to a node deletion.
  queue::QueuedPodInfo hinted;
  hinted.pod = pod;
  hinted.unschedulable_plugins = {"Hinted"};
  EXPECT_FALSE(runtime_->Interest(queue::MakeNodeDeleteEvent(Node("n"))).MayMatter(hinted));
  EXPECT_TRUE(runtime_->Interest(queue::MakeNodeAddEvent(Node("fresh"))).MayMatter(hinted));
  hinted.unschedulable_plugins = {"NoEvents"};  // registers nothing: everything may matter
  EXPECT_TRUE(runtime_->Interest(queue::MakeNodeDeleteEvent(Node("n"))).MayMatter(hinted));
}

TEST_F(ProfileRuntimeTest, PreEnqueueRunsTheProfilesGates) {
  EXPECT_TRUE(runtime_->PreEnqueue(*Pod("free")).admitted);
  queue::PreEnqueueResult r = runtime_->PreEnqueue(*Pod("held", 0, 0, {"a", "b"}));
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.plugin, "SchedulingGates");
  EXPECT_EQ(r.message, "waiting for scheduling gates: [a b]");
}

TEST_F(ProfileRuntimeTest, QueueSortOrdersByPriorityThenTimeThenCreation) {
  auto info = [](std::shared_ptr<const model::Pod> p, int64_t t) {
    queue::QueuedPodInfo i;
    i.pod = std::move(p);
    i.timestamp = queue::TimePoint(std::chrono::nanoseconds(t));
    return i;
  };
  auto hi = info(Pod("hi", 10, 50), 100);
  auto early = info(Pod("early", 0, 50), 50);
  auto late = info(Pod("late", 0, 10), 60);
  auto same_time_older = info(Pod("older", 0, 10), 70);
  auto same_time_newer = info(Pod("newer", 0, 20), 70);
  EXPECT_TRUE(runtime_->QueueSortLess(hi, early));
  EXPECT_TRUE(runtime_->QueueSortLess(early, late)) << "queue time before creation time";
  EXPECT_TRUE(runtime_->QueueSortLess(same_time_older, same_time_newer));
  EXPECT_FALSE(runtime_->QueueSortLess(same_time_newer, same_time_older));
  EXPECT_FALSE(runtime_->QueueSortLess(early, early));
}

TEST(ProfileSetInProcessTest, RegistersBeforeBuildingAndRefusesDuplicates) {
  framework::testing::FakePlugins fakes;
  framework::testing::FakePlugin& f = fakes.Add("NodeName");  // a builtin's name
  f.filter = [](const schedhost_cycle_state*, const schedhost_pod_view*,
                const schedhost_node_info_view*,
                framework::testing::Reasons&) { return SCHEDHOST_SUCCESS; };
  config::HostConfig cfg = config::ParseConfig("", "test.toml", {});
  EXPECT_THAT([&] { ProfileSet::Build(cfg, PluginDir(), {f.descriptor()}); },
              ::testing::ThrowsMessage<ProfileSetError>(HasSubstr("NodeName")));
}

}  // namespace
}  // namespace schedhost::scheduler
