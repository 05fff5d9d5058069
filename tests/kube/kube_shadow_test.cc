// A shadow profile against a real control plane whose API server keeps an audit log of every
// write: the shadow disagrees with the live profile on the pods a weight flips, and the audit
// shows schedhost's writes to be the live profile's alone (one binding per pod, to the node the
// live profile chose, and its Scheduled event), nothing the shadow would have done.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "host/scheduler/scheduler.h"
#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using kubetest::ControlPlane;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::WaitFor;

// The policy: every write, at Metadata level (who, what, which object), once it is answered.
constexpr std::string_view kAuditPolicy = R"(apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
)";

class KubeShadowTest : public KubeModeTest {
 protected:
  static void SetUpTestSuite() {
    if (!ControlPlane::Unavailable().empty()) return;  // SetUp skips or fails, saying why
    char pattern[] = "/tmp/schedhost-audit-XXXXXX";
    audit_dir_ = ::mkdtemp(pattern);
    std::ofstream(audit_dir_ / "policy.yaml") << kAuditPolicy;
    ControlPlane::Options options;
    options.apiserver_args = {"--audit-policy-file=" + (audit_dir_ / "policy.yaml").string(),
                              "--audit-log-path=" + AuditLog().string(),
                              "--audit-log-format=json", "--audit-log-mode=blocking"};
    cp_ = ControlPlane::Start(options);
  }
  static void TearDownTestSuite() {
    KubeModeTest::TearDownTestSuite();
    std::error_code ec;
    if (!audit_dir_.empty()) std::filesystem::remove_all(audit_dir_, ec);
  }
  static std::filesystem::path AuditLog() { return audit_dir_ / "audit.log"; }

  // Writes returns the audited writes of user `user` to the test's namespace, as
  // "resource[/subresource] verb" -> the names written.
  std::map<std::string, std::multiset<std::string>> Writes(const std::string& user) {
    std::map<std::string, std::multiset<std::string>> out;
    std::ifstream in(AuditLog());
    for (std::string line; std::getline(in, line);) {
      const Json e = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!e.is_object() || e.value("stage", "") != "ResponseComplete") continue;
      if (e["user"].value("username", "") != user) continue;
      const Json& ref = e.value("objectRef", Json::object());
      if (ref.value("namespace", "") != ns_) continue;
      std::string what = ref.value("resource", "");
      if (!ref.value("subresource", "").empty()) what += "/" + ref.value("subresource", "");
      out[what + " " + e.value("verb", "")].insert(ref.value("name", ""));
    }
    return out;
  }

  static inline std::filesystem::path audit_dir_;
};

TEST_F(KubeShadowTest, TheAuditShowsNoWriteFromTheShadow) {
  // n1 is the ssd node, with a PreferNoSchedule taint; the live profile weighs TaintToleration
  // 1 (a pod preferring ssd lands on n1), the shadow 3 (it would land elsewhere).
  AddNode(ns_ + "-n1", "8", "16Gi", {{"disk", "ssd"}},
          {{"taints", Json::array({{{"key", "spot"}, {"effect", "PreferNoSchedule"}}})}});
  AddNode(ns_ + "-n2", "8", "16Gi");
  AddNode(ns_ + "-n3", "8", "16Gi");
  const auto scoring = [](int taint_weight) {
    return "[profile.plugins.score]\ndisabled = [{ name = \"*\" }]\n"
           "enabled = [{ name = \"NodeAffinity\", weight = 2 }, "
           "{ name = \"TaintToleration\", weight = " +
           std::to_string(taint_weight) + " }]\n";
  };
  StartHost(Config("", "[shadow]\nevery_pod = true\n[[profile]]\nname = \"schedhost\"\n" +
                           scoring(1) + "[[profile]]\nname = \"schedhost-next\"\n" +
                           "shadow_of = \"schedhost\"\n" + scoring(3)));
  Json flip = Pod("flip", "100m");
  flip["spec"]["affinity"] = Json::parse(
      R"({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
          "preference": {"matchExpressions": [{"key": "disk", "operator": "In",
          "values": ["ssd"]}]}}]}})");
  Create(PodList("flip-", 3, flip));
  Create(PodList("plain-", 3, Pod("plain", "100m")));
  const std::set<std::string> pods = {"flip-0", "flip-1", "flip-2", "plain-0", "plain-1",
                                      "plain-2"};
  ASSERT_TRUE(WaitFor([&] {
    for (const std::string& p : pods) {
      if (NodeOf(p).empty()) return false;
    }
    return true;
  })) << "not every pod was bound";
  scheduler::ShadowStatus status;
  ASSERT_TRUE(WaitFor([&] {
    status = host_->scheduler()->shadows().Status().at(0);
    return status.compared == pods.size();
  })) << "the shadow compared " << status.compared << " pods";
  EXPECT_EQ(status.state, "running") << status.reason;
  EXPECT_EQ(status.disagreements, 3u);
  for (const scheduler::ShadowDisagreement& d : status.recent) {
    EXPECT_EQ(d.name.rfind("flip-", 0), 0u) << d.name;
    EXPECT_EQ(d.plugin, "TaintToleration") << d.detail;
    EXPECT_EQ(d.live_node, ns_ + "-n1");
    EXPECT_NE(d.shadow_node, ns_ + "-n1");
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(NodeOf("flip-" + std::to_string(i)), ns_ + "-n1");
  // The Scheduled events are written in the background: wait for the six.
  ASSERT_TRUE(WaitFor([&] { return ScheduledEvents().size() == pods.size(); }));

  // What schedhost wrote: one binding per pod and its events, nothing else.
  const auto writes = Writes("schedhost");
  std::set<std::string> kinds;
  for (const auto& [what, names] : writes) kinds.insert(what);
  EXPECT_THAT(kinds, ::testing::IsSubsetOf(std::set<std::string>{
                         "pods/binding create", "events create", "events patch"}))
      << ::testing::PrintToString(writes);
  ASSERT_EQ(writes.count("pods/binding create"), 1u) << ::testing::PrintToString(writes);
  EXPECT_EQ(writes.at("pods/binding create"),
            std::multiset<std::string>(pods.begin(), pods.end()));
  for (const auto& [pod, count] : ScheduledEvents()) EXPECT_EQ(count, 1) << pod;
}

}  // namespace
}  // namespace schedhost::kube
