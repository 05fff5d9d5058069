// A kind the host has never heard of, mirrored from the real API server: TicketGate
// (tests/integration/ticket_gate), loaded from its .so, declares example.schedhost.io/v1 Ticket.
// The host starts before the Ticket CRD exists, says so (readiness body, the pod's message),
// picks the kind up once the CRD is installed and RBAC lets it read it, schedules on the
// Tickets it mirrors (a new Ticket wakes the pod that names it), tells a malformed Ticket apart
// without stopping the watch, writes a Ticket's status back from PostBind (object_write), and
// marks the kind unavailable again when the CRD is deleted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using ::testing::HasSubstr;
using kubetest::HttpGet;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::WaitFor;

// The Ticket CRD: namespaced, spec kept whole (x-kubernetes-preserve-unknown-fields), so a
// malformed Ticket (nodes holding a number) reaches the plugin as the API server stored it.
const char* const kTicketCrd = R"({
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "tickets.example.schedhost.io"},
  "spec": {
    "group": "example.schedhost.io",
    "scope": "Namespaced",
    "names": {"plural": "tickets", "singular": "ticket", "kind": "Ticket"},
    "versions": [{"name": "v1", "served": true, "storage": true,
                  "subresources": {"status": {}},
                  "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]
  }
})";

class KubeDeclaredKindsTest : public KubeModeTest {
 protected:
  void TearDown() override {
    KubeModeTest::TearDown();
    if (cp_ == nullptr) return;
    cp_->Kubectl({"delete", "crd", "tickets.example.schedhost.io", "--ignore-not-found"});
    cp_->Kubectl({"delete", "clusterrolebinding", "schedhost-test-tickets", "--ignore-not-found"});
    cp_->Kubectl({"delete", "clusterrole", "schedhost-test-tickets", "--ignore-not-found"});
  }

  // TicketConfig is Config() with TicketGate loaded and enabled in the test's profile.
  std::string TicketConfig() {
    std::string config = Config("", "[[profile]]\nname = \"schedhost\"\n"
                                     "[profile.plugins.multi_point]\n"
                                     "enabled = [{ name = \"TicketGate\" }]\n");
    const std::string host = "[host]\n";
    config.insert(config.find(host) + host.size(),
                  std::string("libraries = [{ path = \"") + TICKET_GATE_PLUGIN + "\" }]\n");
    return config;
  }

  Json Ticket(const std::string& name, const Json& nodes) {
    return Json{{"apiVersion", "example.schedhost.io/v1"},
                {"kind", "Ticket"},
                {"metadata", {{"name", name}, {"namespace", ns_}}},
                {"spec", {{"approved", true}, {"nodes", nodes}}}};
  }

  Json TicketedPod(const std::string& name, const std::string& ticket) {
    Json pod = Pod(name, "100m");
    pod["metadata"]["labels"]["ticket"] = ticket;
    return pod;
  }

  std::string Message(const std::string& pod) {
    const Json c = Condition(pod, "PodScheduled");
    return c.is_object() ? c.value("message", "") : "";
  }
};

TEST_F(KubeDeclaredKindsTest, TicketsFromTheApiServerAsTheirCrdAndRbacComeAndGo) {
  const std::string node = ns_ + "-a";
  AddNode(node, "4", "8Gi");
  AddNode(ns_ + "-b", "4", "8Gi");
  StartHost(TicketConfig());

  // Neither RBAC nor a CRD: the API server refuses the credentials first. The host runs,
  // ready but degraded, names the missing permission, and the pod waits saying why.
  std::string why;
  EXPECT_TRUE(kube_->Healthy(&why)) << why;
  EXPECT_THAT(kube_->Degraded(), HasSubstr("tickets.example.schedhost.io unavailable"));
  EXPECT_THAT(kube_->Degraded(), HasSubstr("RBAC: grant the verbs list and watch"));
  const auto [ready, body] = HttpGet(host_->metrics_port(), "/readyz");
  EXPECT_EQ(ready, 200);
  EXPECT_THAT(body, HasSubstr("degraded: declared kind tickets.example.schedhost.io"));
  Create(TicketedPod("waits", "go"));
  ASSERT_TRUE(WaitFor([&] { return Message("waits").find("cannot read tickets") !=
                                   std::string::npos; }))
      << Message("waits");
  EXPECT_THAT(Message("waits"), HasSubstr("cannot list resource \"tickets\""));

  // Granted, but the CRD is not installed: the host says so.
  // (As a manifest: `kubectl create clusterrole` wants the resource served already.)
  Create(Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRole"},
              {"metadata", {{"name", "schedhost-test-tickets"}}},
              {"rules", Json::array({{{"apiGroups", {"example.schedhost.io"}},
                                      {"resources", {"tickets"}},
                                      {"verbs", {"get", "list", "watch"}}},
                                     {{"apiGroups", {"example.schedhost.io"}},
                                      {"resources", {"tickets/status"}},
                                      {"verbs", {"patch"}}}})}});
  Kubectl({"create", "clusterrolebinding", "schedhost-test-tickets",
           "--clusterrole=schedhost-test-tickets", "--user=" + cp_->user()});
  ASSERT_TRUE(WaitFor([&] { return kube_->Degraded().find("is the CustomResourceDefinition") !=
                                   std::string::npos; },
                      std::chrono::seconds(60)))
      << kube_->Degraded();

  // The CRD installed: the kind is mirrored, and a Ticket created now wakes the pod naming it.
  Kubectl({"apply", "-f", "-"}, kTicketCrd);
  ASSERT_TRUE(WaitFor([&] { return kube_->Degraded().empty(); }, std::chrono::seconds(60)))
      << kube_->Degraded();
  Create(Ticket("go", Json::array({node})));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("waits") == node; }, std::chrono::seconds(30)))
      << Message("waits");
  // PostBind wrote the pod into the Ticket's status, through the API server.
  ASSERT_TRUE(WaitFor([&] {
    const Json t = Get("ticket", "go");
    return t.is_object() && t.contains("status") && t["status"].value("lastNode", "") == node;
  })) << Get("ticket", "go").dump();
  EXPECT_EQ(Get("ticket", "go")["status"]["lastPod"], ns_ + "/waits");

  // A Ticket that does not decode as the plugin expects: the pod waits naming the field, the
  // watch goes on (a good Ticket after it still schedules its pod).
  Create(Ticket("bad", Json::array({node, 3})));
  Create(TicketedPod("bad-ticket", "bad"));
  ASSERT_TRUE(WaitFor([&] {
    return Message("bad-ticket").find("spec.nodes[1]: expected a string") != std::string::npos;
  })) << Message("bad-ticket");
  EXPECT_THAT(Message("bad-ticket"), HasSubstr("Ticket " + ns_ + "/bad"));
  Create(Ticket("late", Json::array({ns_ + "-b"})));
  Create(TicketedPod("after-bad", "late"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("after-bad") == ns_ + "-b"; },
                      std::chrono::seconds(30)));

  // The CRD deleted while running: its objects go, and the kind is unavailable again.
  Kubectl({"delete", "crd", "tickets.example.schedhost.io"});
  ASSERT_TRUE(WaitFor([&] { return kube_->Degraded().find("CustomResourceDefinition") !=
                                   std::string::npos; },
                      std::chrono::seconds(60)))
      << kube_->Degraded();
  EXPECT_TRUE(kube_->Healthy(&why)) << why;
  EXPECT_TRUE(host_->store().objects().Snapshot()->Find("tickets.example.schedhost.io")
                  ->items().empty());
  Create(TicketedPod("after-crd", "go"));
  ASSERT_TRUE(WaitFor([&] { return Message("after-crd").find("cannot read tickets") !=
                                   std::string::npos; }))
      << Message("after-crd");
  EXPECT_EQ(NodeOf("after-crd"), "");
}

// Reloads follow the declarations: a set that drops the kind's last plugin stops its watch and
// forgets it; one that brings the plugin back has the kind listed before it goes live.
TEST_F(KubeDeclaredKindsTest, ReloadsStartAndStopTheMirrorOfADeclaredKind) {
  Kubectl({"apply", "-f", "-"}, kTicketCrd);
  Create(Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRole"},
              {"metadata", {{"name", "schedhost-test-tickets"}}},
              {"rules", Json::array({{{"apiGroups", {"example.schedhost.io"}},
                                      {"resources", {"tickets"}},
                                      {"verbs", {"get", "list", "watch"}}}})}});
  Kubectl({"create", "clusterrolebinding", "schedhost-test-tickets",
           "--clusterrole=schedhost-test-tickets", "--user=" + cp_->user()});
  ASSERT_TRUE(WaitFor([&] {
    return cp_->Kubectl({"get", "tickets", "-n", ns_}).exit_code == 0;  // the CRD is served
  }));
  Create(Ticket("kept", Json::array({"n"})));
  const std::string with_gate = TicketConfig();
  StartHost(with_gate);
  const std::string key = "tickets.example.schedhost.io";
  EXPECT_THAT(kube_->DeclaredKinds(), ::testing::Contains(key));
  ASSERT_TRUE(WaitFor([&] { return kube_->Degraded().empty(); })) << kube_->Degraded();
  const auto mirrored = [&] {
    const store::KindObjects* t = host_->store().objects().Snapshot()->Find(key);
    return t == nullptr ? size_t{0} : t->items().size();
  };
  EXPECT_EQ(mirrored(), 1u);

  std::ofstream(dir_.path() / "schedhost.toml") << Config();  // without TicketGate
  api::ReloadResult r = host_->Reload();
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_THAT(kube_->DeclaredKinds(), ::testing::Not(::testing::Contains(key)));
  EXPECT_FALSE(host_->store().objects().FindKey(key));

  std::ofstream(dir_.path() / "schedhost.toml") << with_gate;
  r = host_->Reload();
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_THAT(kube_->DeclaredKinds(), ::testing::Contains(key));
  EXPECT_EQ(mirrored(), 1u) << "listed before the reload returned";
}

}  // namespace
}  // namespace schedhost::kube
