// Objects of a declared kind through a running schedhostd, driven by schedctl: TicketGate
// (ticket_gate/) declares example.schedhost.io/v1 Ticket, so the daemon takes Tickets with
// `schedctl apply`, lists them with `schedctl get tickets`, streams them with `schedctl watch`,
// and a Ticket created, approved or deleted reaches the plugin's queueing hint: a pod parked
// for want of its Ticket is scheduled once the Ticket exists, and only then; PostBind writes
// the Ticket's status back through the host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/schedctl_fixture.h"

namespace schedhost::testing {
namespace {

using ::testing::HasSubstr;

class DeclaredKindsDaemonTest : public SchedctlTest {
 protected:
  std::string HostKeys() override {
    return std::string("libraries = [{ path = \"") + TICKET_GATE_PLUGIN + "\" }]\n";
  }
  std::string Profile() override {
    return "[[profile]]\nname = \"default-scheduler\"\n"
           "[profile.plugins.multi_point]\nenabled = [{ name = \"TicketGate\" }]\n";
  }

  // Apply writes `yaml` to a file and applies it.
  Result Apply(const std::string& name, const std::string& yaml) {
    const fs::path file = dir_.path() / (name + ".yaml");
    std::ofstream(file) << yaml;
    return Ctl({"apply", "-f", file.string()});
  }

  // NodeOf returns the node of pod team-a/`name` ("" while pending), waiting up to `wait` for
  // it to be bound.
  std::string NodeOf(const std::string& name, std::chrono::seconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
      const std::string node = PodNodes()["team-a/" + name];
      if (!node.empty() || std::chrono::steady_clock::now() >= deadline) return node;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
};

constexpr const char* kNodes = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

std::string Pod(const std::string& name, const std::string& ticket) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: team-a, labels: {ticket: " + ticket +
         "}}\nspec: {containers: [{name: c, image: pause}]}\n";
}

std::string Ticket(const std::string& name, bool approved, const std::string& node) {
  return "apiVersion: example.schedhost.io/v1\nkind: Ticket\nmetadata: {name: " + name +
         ", namespace: team-a}\nspec: {approved: " + (approved ? "true" : "false") +
         ", nodes: [" + node + "]}\n";
}

TEST_F(DeclaredKindsDaemonTest, ATicketAppliedLaterWakesThePodThatNamesIt) {
  ASSERT_EQ(Apply("nodes", kNodes).exit_code, 0);
  ASSERT_EQ(Apply("pods", Pod("waits", "late") + "---\n" + Pod("other", "never")).exit_code, 0);
  // Both pods are parked: no Ticket yet.
  EXPECT_EQ(NodeOf("waits", std::chrono::seconds(2)), "");
  Result described = Ctl({"describe", "pod", "waits", "-n", "team-a"});
  EXPECT_THAT(described.out, HasSubstr("ticket \"late\" not found")) << described.err;

  // An unapproved Ticket wakes the pod, which is rejected again, saying why.
  Result applied = Apply("late", Ticket("late", false, "n2"));
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(applied.out, "ticket.example.schedhost.io/late (namespace team-a) created\n");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Ctl({"describe", "pod", "waits", "-n", "team-a"}).out.find("is not approved") ==
             std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(Ctl({"describe", "pod", "waits", "-n", "team-a"}).out,
              HasSubstr("ticket \"late\" is not approved"));

  // Approving it (an update) schedules the pod onto the Ticket's node.
  applied = Apply("late", Ticket("late", true, "n2"));
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(applied.out, "ticket.example.schedhost.io/late (namespace team-a) configured\n");
  EXPECT_EQ(NodeOf("waits", std::chrono::seconds(20)), "n2");
  // PostBind recorded the pod in its Ticket's status (object_write, a status merge patch).
  nlohmann::json late;
  const auto written = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    late = nlohmann::json::parse(Ctl({"get", "ticket", "late", "-n", "team-a", "-o", "json"}).out);
  } while (!late.contains("status") && std::chrono::steady_clock::now() < written);
  EXPECT_EQ(late["status"]["lastPod"], "team-a/waits") << late.dump();
  EXPECT_EQ(late["status"]["lastNode"], "n2");
  EXPECT_EQ(late["spec"]["approved"], true);
  // The hint kept the pod naming another Ticket parked: still pending, still not found.
  EXPECT_EQ(PodNodes()["team-a/other"], "");
  EXPECT_THAT(Ctl({"describe", "pod", "other", "-n", "team-a"}).out,
              HasSubstr("ticket \"never\" not found"));
}

TEST_F(DeclaredKindsDaemonTest, SchedctlReadsWritesAndWatchesTickets) {
  ASSERT_EQ(Apply("t", Ticket("t1", true, "n1")).exit_code, 0);
  // Applying the same manifest again changes nothing.
  Result again = Apply("t", Ticket("t1", true, "n1"));
  EXPECT_EQ(again.out, "ticket.example.schedhost.io/t1 (namespace team-a) unchanged\n")
      << again.err;

  Result table = Ctl({"get", "tickets", "-n", "team-a"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::StartsWith("NAME   AGE\nt1     "));
  // The stored manifest: as applied, with the identity the host owns.
  Result json = Ctl({"get", "ticket", "t1", "-n", "team-a", "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json t1 = nlohmann::json::parse(json.out);
  EXPECT_EQ(t1["spec"]["nodes"], nlohmann::json::array({"n1"}));
  EXPECT_EQ(t1["metadata"]["namespace"], "team-a");
  EXPECT_EQ(t1["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_FALSE(t1["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_FALSE(t1["metadata"]["creationTimestamp"].get<std::string>().empty());
  // The full resource name works too, and a stale resourceVersion is a conflict.
  EXPECT_EQ(Ctl({"get", "tickets.example.schedhost.io", "-n", "team-a", "-o", "name"}).out,
            "ticket.example.schedhost.io/t1\n");
  Result stale = Apply("stale", "apiVersion: example.schedhost.io/v1\nkind: Ticket\nmetadata: "
                                "{name: t1, namespace: team-a, resourceVersion: \"999\"}\n"
                                "spec: {approved: false}\n");
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_THAT(stale.err, HasSubstr("Error from server (Aborted)"));
  EXPECT_THAT(stale.err, HasSubstr("resourceVersion 999 is not current"));

  // Watch from the start: the current Ticket, then the delete.
  // (Another directory for its output: Ctl's files are per directory.)
  TempDir other;
  Result deleted;
  std::thread deleter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    deleted = RunSchedctl(other, {"--server", server_, "delete", "ticket", "t1", "-n", "team-a"});
  });
  Result watched = Ctl({"watch", "tickets", "-n", "team-a", "--count", "2", "--timeout", "20"});
  deleter.join();
  EXPECT_EQ(deleted.out, "ticket.example.schedhost.io \"t1\" deleted\n") << deleted.err;
  EXPECT_EQ(watched.exit_code, 0) << watched.err;
  EXPECT_THAT(watched.out, ::testing::MatchesRegex("ADDED ticket.example.schedhost.io/t1 "
                                                   "namespace=team-a rv=[0-9]+\n"
                                                   "DELETED ticket.example.schedhost.io/t1 "
                                                   "namespace=team-a rv=[0-9]+\n"));
  // schedctl plugins lists the kind, who declares it and what the host holds.
  Result plugins = Ctl({"plugins"});
  ASSERT_EQ(plugins.exit_code, 0) << plugins.err;
  EXPECT_THAT(plugins.out, ::testing::ContainsRegex(
                               "Declared kinds:\nRESOURCE +KIND +PLUGINS +OBJECTS +STATUS\n"));
  EXPECT_THAT(plugins.out, ::testing::ContainsRegex(
                               "\ntickets.example.schedhost.io +example.schedhost.io/v1 Ticket +"
                               "TicketGate +0 +mirrored\n"));
  // The default profile's VolumeBinding declares the storage kinds.
  EXPECT_THAT(plugins.out, ::testing::ContainsRegex(
                               "\npersistentvolumeclaims +v1 PersistentVolumeClaim +"
                               "[A-Za-z,]*VolumeBinding[A-Za-z,]* +0 +mirrored\n"));
  Result gone = Ctl({"get", "ticket", "t1", "-n", "team-a"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(gone.err, "Error from server (NotFound): ticket \"t1\" not found\n");
}

TEST_F(DeclaredKindsDaemonTest, KindsNoPluginDeclaresAreRefusedNamingThem) {
  Result get = Ctl({"get", "podgroups"});
  EXPECT_EQ(get.exit_code, 1);
  EXPECT_THAT(get.err, HasSubstr("the server doesn't have a resource type \"podgroups\""));
  EXPECT_THAT(get.err, HasSubstr("tickets.example.schedhost.io (example.schedhost.io/v1 Ticket)"));
  Result apply = Apply("pg", "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                             "metadata: {name: g}\nspec: {minMember: 2}\n");
  EXPECT_EQ(apply.exit_code, 1);
  EXPECT_THAT(apply.err, HasSubstr("unsupported kind \"PodGroup\" of apiVersion "
                                   "\"scheduling.x-k8s.io/v1alpha1\""));
  EXPECT_THAT(apply.err, HasSubstr("tickets.example.schedhost.io"));
}

}  // namespace
}  // namespace schedhost::testing
