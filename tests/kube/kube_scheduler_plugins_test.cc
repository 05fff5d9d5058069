// The contrib plugins on scheduler-plugins' own kinds, mirrored from the real API server: the
// CRDs of config/kubernetes/ installed as shipped, and the test's user granted the
// schedhost:scheduler-plugins ClusterRole of config/kubernetes/rbac.yaml. Coscheduling binds a
// gang of PodGroup members all or nothing and writes the PodGroup's status; a member of a
// PodGroup that does not exist yet, or does not decode, waits saying so. CapacityScheduling
// enforces an ElasticQuota, follows its changes without a reload, holds a namespace whose quota
// does not decode, and holds every pod while the ElasticQuota CRD is gone, until it is back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using ::testing::HasSubstr;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::WaitFor;

std::filesystem::path KubernetesDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::filesystem::path(dir ? dir : ".") / "config" / "kubernetes";
}

class KubeSchedulerPluginsTest : public KubeModeTest {
 protected:
  void SetUp() override {
    KubeModeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* crd : {"scheduling.x-k8s.io_podgroups.yaml",
                            "scheduling.x-k8s.io_elasticquotas.yaml"}) {
      Kubectl({"apply", "-f", (KubernetesDir() / crd).string()});
    }
    Kubectl({"apply", "-f", (KubernetesDir() / "rbac.yaml").string()});
    cp_->Kubectl({"create", "clusterrolebinding", "schedhost-test-scheduler-plugins",
                  "--clusterrole=schedhost:scheduler-plugins", "--user=" + cp_->user()});
    ASSERT_TRUE(WaitFor([&] {
      return cp_->Kubectl({"get", "podgroups,elasticquotas", "-n", ns_}).exit_code == 0;
    })) << "the CRDs are not served";
  }

  // ProfileWith is Config() with `plugins` of the test's profile ("schedhost").
  std::string ProfileWith(const std::string& plugins) {
    return Config("", "[[profile]]\nname = \"schedhost\"\n" + plugins);
  }

  Json PodGroup(const std::string& name, const Json& spec) {
    return Json{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", name}, {"namespace", ns_}}},
                {"spec", spec}};
  }
  Json Member(const std::string& name, const std::string& group, const std::string& cpu) {
    Json pod = Pod(name, cpu);
    pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group;
    return pod;
  }
  Json ElasticQuota(const Json& spec) {
    return Json{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                {"kind", "ElasticQuota"},
                {"metadata", {{"name", "quota"}, {"namespace", ns_}}},
                {"spec", spec}};
  }
  void ApplyObject(const Json& object) { Kubectl({"apply", "-f", "-"}, object.dump()); }

  std::string Message(const std::string& pod) {
    const Json c = Condition(pod, "PodScheduled");
    return c.is_object() ? c.value("message", "") : "";
  }
  bool Says(const std::string& pod, const std::string& text) {
    return Message(pod).find(text) != std::string::npos;
  }
  // HostSays is Says for a pod held before the queue (PreEnqueue): as upstream, that writes no
  // condition; the host's own diagnostics (`schedctl describe pod`) carry the message.
  bool HostSays(const std::string& pod, const std::string& text) {
    const Json p = Get("pod", pod);
    if (!p.is_object()) return false;
    const auto d = host_->scheduler()->Diagnostics(p["metadata"].value("uid", ""));
    return d && d->message.find(text) != std::string::npos;
  }
};

TEST_F(KubeSchedulerPluginsTest, CoschedulingBindsPodGroupsWholeAndWritesTheirStatus) {
  AddNode(ns_ + "-a", "4", "8Gi");
  AddNode(ns_ + "-b", "4", "8Gi");
  StartHost(ProfileWith("[profile.plugins.multi_point]\nenabled = [{ name = \"Coscheduling\" }]\n"
                        "[profile.plugins.queue_sort]\nenabled = [{ name = \"Coscheduling\" }]\n"
                        "disabled = [{ name = \"*\" }]\n"
                        "[profile.plugin_config.Coscheduling]\n"
                        "permit_waiting_time_seconds = 10\nassembly_grace_seconds = 5\n"));
  std::string why;
  ASSERT_TRUE(WaitFor([&] { return kube_->Degraded().empty(); })) << kube_->Degraded();

  // A gang that fits binds whole, and its PodGroup's status says so.
  Create(PodGroup("gang", {{"minMember", 3}}));
  for (const char* m : {"gang-1", "gang-2", "gang-3"}) Create(Member(m, "gang", "1"));
  ASSERT_TRUE(WaitFor([&] {
    return !NodeOf("gang-1").empty() && !NodeOf("gang-2").empty() && !NodeOf("gang-3").empty();
  }, std::chrono::seconds(60))) << Message("gang-1");
  ASSERT_TRUE(WaitFor([&] {
    const Json g = Get("podgroup", "gang");
    return g.is_object() && g.contains("status") && g["status"].value("phase", "") == "Scheduled";
  })) << Get("podgroup", "gang").dump();
  const Json status = Get("podgroup", "gang")["status"];
  EXPECT_EQ(status.value("scheduled", 0), 3);
  EXPECT_FALSE(status.value("scheduleStartTime", "").empty());

  // A gang that cannot fit (3 members of 3 cpus, 5 cpus free) binds nothing.
  Create(PodGroup("big", {{"minMember", 3}}));
  for (const char* m : {"big-1", "big-2", "big-3"}) Create(Member(m, "big", "3"));
  ASSERT_TRUE(WaitFor([&] { return Says("big-1", "pod group " + ns_ + "/big") &&
                                   Says("big-2", "pod group " + ns_ + "/big") &&
                                   Says("big-3", "pod group " + ns_ + "/big"); },
                      std::chrono::seconds(60)))
      << Message("big-1") << " | " << Message("big-2") << " | " << Message("big-3");
  for (const char* m : {"big-1", "big-2", "big-3"}) EXPECT_EQ(NodeOf(m), "") << m;

  // A member whose PodGroup does not exist waits, and binds once it is created.
  Create(Member("late-1", "late", "100m"));
  ASSERT_TRUE(WaitFor([&] { return HostSays("late-1", "PodGroup " + ns_ + "/late not found"); }));
  EXPECT_EQ(NodeOf("late-1"), "");
  Create(PodGroup("late", {{"minMember", 1}}));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("late-1").empty(); }, std::chrono::seconds(60)))
      << Message("late-1");

  // A PodGroup the API server takes but the plugin cannot use: the member waits naming the
  // field; the watch goes on.
  Create(PodGroup("odd", {{"minMember", 1}, {"scheduleTimeoutSeconds", -5}}));
  Create(Member("odd-1", "odd", "100m"));
  ASSERT_TRUE(WaitFor([&] {
    return HostSays("odd-1", "PodGroup " + ns_ + "/odd: spec.scheduleTimeoutSeconds");
  }));
  EXPECT_EQ(NodeOf("odd-1"), "");
  ApplyObject(PodGroup("odd", {{"minMember", 1}, {"scheduleTimeoutSeconds", 5}}));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("odd-1").empty(); }, std::chrono::seconds(60)))
      << Message("odd-1");
  EXPECT_TRUE(kube_->Healthy(&why)) << why;
}

TEST_F(KubeSchedulerPluginsTest, CapacitySchedulingFollowsElasticQuotasAndTheirCrd) {
  AddNode(ns_ + "-a", "8", "16Gi");
  StartHost(ProfileWith(
      "[profile.plugins.multi_point]\nenabled = [{ name = \"CapacityScheduling\" }]\n"
      "[profile.plugins.post_filter]\nenabled = [{ name = \"CapacityScheduling\" }]\n"
      "disabled = [{ name = \"*\" }]\n"));
  ASSERT_TRUE(WaitFor([&] { return kube_->Degraded().empty(); })) << kube_->Degraded();

  // max 1 cpu: the second 600m pod is refused, naming the quota.
  Create(ElasticQuota({{"max", {{"cpu", "1"}}}}));
  Create(Pod("p1", "600m"));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("p1").empty(); }, std::chrono::seconds(60)));
  Create(Pod("p2", "600m"));
  ASSERT_TRUE(WaitFor([&] {
    return Says("p2", "exceeded quota: namespace " + ns_ + " would use cpu 1200m, more than "
                      "its max 1");
  })) << Message("p2");

  // Raised while running: the update wakes p2, no reload.
  ApplyObject(ElasticQuota({{"max", {{"cpu", "2"}}}}));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("p2").empty(); }, std::chrono::seconds(60)))
      << Message("p2");

  // A quota the API server takes but the plugin cannot use (min above max) holds the
  // namespace, saying why; fixed, it lets the pod in.
  ApplyObject(ElasticQuota({{"min", {{"cpu", "3"}}}, {"max", {{"cpu", "2"}}}}));
  Create(Pod("p3", "100m"));
  ASSERT_TRUE(WaitFor([&] {
    return Says("p3", "ElasticQuota " + ns_ + "/quota: spec.min.cpu: 3 is more than max.cpu 2");
  })) << Message("p3");
  EXPECT_EQ(NodeOf("p3"), "");
  ApplyObject(ElasticQuota({{"min", {{"cpu", "3"}}}, {"max", {{"cpu", "4"}}}}));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("p3").empty(); }, std::chrono::seconds(60)))
      << Message("p3");

  // The CRD deleted while running: every pod waits, since any namespace may have a quota the
  // host cannot see; installed again with a quota, the pod binds.
  Kubectl({"delete", "crd", "elasticquotas.scheduling.x-k8s.io"});
  ASSERT_TRUE(WaitFor([&] { return !kube_->Degraded().empty(); }, std::chrono::seconds(60)));
  Create(Pod("p4", "100m"));
  ASSERT_TRUE(WaitFor([&] { return Says("p4", "cannot read ElasticQuotas"); })) << Message("p4");
  EXPECT_EQ(NodeOf("p4"), "");
  Kubectl({"apply", "-f", (KubernetesDir() / "scheduling.x-k8s.io_elasticquotas.yaml").string()});
  ASSERT_TRUE(WaitFor([&] {
    return cp_->Kubectl({"get", "elasticquotas", "-n", ns_}).exit_code == 0;
  }, std::chrono::seconds(60)));
  Create(ElasticQuota({{"max", {{"cpu", "4"}}}}));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("p4").empty(); }, std::chrono::seconds(60)))
      << Message("p4") << " | " << kube_->Degraded();
}

}  // namespace
}  // namespace schedhost::kube
