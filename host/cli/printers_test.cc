// schedctl's output helpers: kubectl's ages, tables, YAML quoting and resource names.
#include "host/cli/printers.h"

#include <gtest/gtest.h>

#include <sstream>

#include "host/cli/resources.h"
#include "host/cli/tables.h"

namespace schedhost::cli {
namespace {

TEST(HumanDurationTest, MatchesKubectlAges) {
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {-5, "<invalid>"},
      {-1, "0s"},
      {0, "0s"},
      {119, "119s"},
      {120, "2m"},
      {200, "3m20s"},
      {599, "9m59s"},
      {600, "10m"},
      {3 * 3600 - 1, "179m"},
      {3 * 3600, "3h"},
      {3 * 3600 + 120, "3h2m"},
      {8 * 3600, "8h"},
      {47 * 3600, "47h"},
      {48 * 3600, "2d"},
      {50 * 3600, "2d2h"},
      {8 * 86400, "8d"},
      {729 * 86400, "729d"},
      {730 * 86400, "2y"},
      {731 * 86400, "2y1d"},
      {9 * 365 * 86400, "9y"},
  };
  for (const auto& [seconds, want] : cases) EXPECT_EQ(HumanDuration(seconds), want) << seconds;
}

TEST(TableTest, PadsColumnsThreeSpacesAndTrimsTheLastOne) {
  Table t({"NAME", "STATUS", "NODE"});
  t.AddRow({"web-1", "Scheduled", "zone-a-1"});
  t.AddRow({"huge", "Pending", ""});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "NAME    STATUS      NODE\n"
            "web-1   Scheduled   zone-a-1\n"
            "huge    Pending\n");
}

TEST(ToYamlTest, QuotesOnlyStringsThatWouldReadAsSomethingElse) {
  const Json doc = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "labels": {"version": "1.0", "on": "yes", "app": "web"},
                 "creationTimestamp": "2026-11-23T14:40:00Z", "annotations": {}},
    "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "500m", "n": "4"}},
                             "ports": [{"containerPort": 80}]}],
             "tolerations": [], "note": "a: b", "empty": "", "multi": "x\ny"}
  })",
                               nullptr, true, false);
  // Keys keep the order written above; "n" is a YAML 1.1 boolean, so it is quoted even as a key.
  EXPECT_EQ(ToYaml(doc),
            "apiVersion: v1\n"
            "kind: Pod\n"
            "metadata:\n"
            "  name: web\n"
            "  labels:\n"
            "    version: \"1.0\"\n"
            "    \"on\": \"yes\"\n"
            "    app: web\n"
            "  creationTimestamp: \"2026-11-23T14:40:00Z\"\n"
            "  annotations: {}\n"
            "spec:\n"
            "  containers:\n"
            "  - name: a\n"
            "    resources:\n"
            "      requests:\n"
            "        cpu: 500m\n"
            "        \"n\": \"4\"\n"
            "    ports:\n"
            "    - containerPort: 80\n"
            "  tolerations: []\n"
            "  note: \"a: b\"\n"
            "  empty: \"\"\n"
            "  multi: \"x\\ny\"\n");
}

TEST(TablesTest, PodAndNodeStatusAsKubectlWouldSayIt) {
  EXPECT_EQ(PodStatus(Json::parse(R"({"spec":{"nodeName":"n1"}})")), "Scheduled");
  EXPECT_EQ(PodStatus(Json::parse(R"({"spec":{"schedulingGates":[{"name":"g"}]}})")),
            "SchedulingGated");
  EXPECT_EQ(PodStatus(Json::parse(R"({"spec":{}})")), "Pending");
  EXPECT_EQ(NodeStatus(Json::parse(R"({"spec":{"unschedulable":true}})")),
            "Ready,SchedulingDisabled");
  EXPECT_EQ(
      NodeStatus(Json::parse(R"({"status":{"conditions":[{"type":"Ready","status":"False"}]}})")),
      "NotReady");
}

TEST(ResourcesTest, AcceptsKubectlSpellings) {
  for (const char* name : {"pod", "pods", "po", "Pod"}) {
    ASSERT_NE(FindResource(name), nullptr) << name;
    EXPECT_EQ(FindResource(name)->kind, v1::POD);
  }
  for (const char* name : {"pdb", "pdbs", "poddisruptionbudgets", "poddisruptionbudget.policy"}) {
    ASSERT_NE(FindResource(name), nullptr) << name;
    EXPECT_EQ(FindResource(name)->kind, v1::POD_DISRUPTION_BUDGET);
  }
  ASSERT_NE(FindResource("pc"), nullptr);
  EXPECT_EQ(TypeName(*FindResource("pc")), "priorityclass.scheduling.k8s.io");
  EXPECT_EQ(GroupPlural(*FindResource("pods")), "pods");
  EXPECT_EQ(KindTypeName("Ticket", "example.schedhost.io/v1"), "ticket.example.schedhost.io");
  EXPECT_EQ(KindTypeName("Widget", "v1"), "widget");
  EXPECT_EQ(FindResource("deployments"), nullptr);
}

}  // namespace
}  // namespace schedhost::cli
