// Kubernetes mode end to end, one replica: schedhost binds the pods of a real control plane
// (tests/kube/kube_fixture.h), reports what does not fit, preempts, survives API server restarts
// and compacted history, and says so clearly when it may not bind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/kube/proto_codec.h"
#include "host/kube/writer.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/model/decode_api.h"
#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using kubetest::ControlPlane;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::Readyz;
using kubetest::WaitFor;
using ::testing::HasSubstr;

TEST_F(KubeModeTest, BindsPodsThatOptInAndLeavesOthersAlone) {
  AddNode(ns_ + "-a", "4", "8Gi");
  StartHost(Config());
  Create(Pod("mine", "500m"));
  Create(Pod("theirs", "500m", "default-scheduler"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("mine") == ns_ + "-a"; })) << Get("pod", "mine").dump();
  // The API server sets PodScheduled=True on binding; schedhost records the event.
  Json scheduled = Condition("mine", "PodScheduled");
  ASSERT_FALSE(scheduled.is_null());
  EXPECT_EQ(scheduled.value("status", ""), "True");
  ASSERT_TRUE(WaitFor([&] { return Events("mine", "Scheduled").size() == 1; }));
  const Json event = Events("mine", "Scheduled")[0];
  EXPECT_EQ(event.value("note", ""), "Successfully assigned " + ns_ + "/mine to " + ns_ + "-a");
  EXPECT_EQ(event.value("action", ""), "Binding");
  EXPECT_EQ(event.value("reportingController", ""), "schedhost");
  // No profile is named default-scheduler: that pod is someone else's.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(NodeOf("theirs"), "");
  EXPECT_TRUE(Condition("theirs", "PodScheduled").is_null());
  EXPECT_TRUE(Events("theirs", "FailedScheduling").empty());

  // The gRPC API reads the mirror and refuses to write the cluster.
  auto cluster = v1::Cluster::NewStub(grpc::CreateChannel(
      "unix://" + (dir_.path() / "s.sock").string(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext context;
    v1::GetRequest request;
    request.set_kind(v1::POD);
    request.set_namespace_(ns_);
    request.set_name("mine");
    v1::GetResponse got;
    ASSERT_TRUE(cluster->Get(&context, request, &got).ok());
    EXPECT_EQ(got.object().uid(), Get("pod", "mine")["metadata"].value("uid", ""));
  }
  {
    grpc::ClientContext context;
    v1::ApplyRequest request;
    request.set_manifest(Pod("via-grpc", "1").dump());
    v1::ApplyResponse out;
    const grpc::Status s = cluster->Apply(&context, request, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr(cp_->server()));
  }
  EXPECT_TRUE(Get("pod", "via-grpc").is_null());
}

TEST_F(KubeModeTest, UnschedulablePodIsReportedThenBoundWhenANodeFits) {
  AddNode(ns_ + "-small", "1", "4Gi");
  StartHost(Config());
  Create(Pod("big", "3"));
  ASSERT_TRUE(WaitFor([&] { return !Condition("big", "PodScheduled").is_null(); }));
  const Json c = Condition("big", "PodScheduled");
  EXPECT_EQ(c.value("status", ""), "False");
  EXPECT_EQ(c.value("reason", ""), "Unschedulable");
  // 3 cpu on a 1-cpu node: more than it has at all, which no preemption can fix.
  EXPECT_EQ(c.value("message", ""),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
            "1 Preemption is not helpful for scheduling.");
  ASSERT_TRUE(WaitFor([&] { return !Events("big", "FailedScheduling").empty(); }));
  EXPECT_EQ(Events("big", "FailedScheduling")[0].value("note", ""), c.value("message", ""));
  EXPECT_EQ(Events("big", "FailedScheduling")[0].value("type", ""), "Warning");

  AddNode(ns_ + "-large", "8", "16Gi");
  ASSERT_TRUE(WaitFor([&] { return NodeOf("big") == ns_ + "-large"; }))
      << Get("pod", "big").dump();
}

// The operator's case: a pod whose claim is bound to a local volume lands on the node the volume
// is on, not the roomier one; a pod whose claim does not exist waits with kube-scheduler's
// message; a pod with an in-tree disk no loaded plugin evaluates (vSphere: NodeVolumeLimits does
// not translate it) is not bound on a guess.
TEST_F(KubeModeTest, PodsWithClaimsLandWhereTheirVolumesAreOrWaitSayingWhy) {
  AddNode(ns_ + "-a", "8", "16Gi");
  AddNode(ns_ + "-b", "2", "4Gi");
  StartHost(Config());
  const std::string pv = ns_ + "-local";
  Create(Json{{"apiVersion", "v1"},
              {"kind", "PersistentVolume"},
              {"metadata", {{"name", pv}}},
              {"spec",
               {{"capacity", {{"storage", "1Gi"}}},
                {"accessModes", Json::array({"ReadWriteOnce"})},
                {"storageClassName", ""},
                {"local", {{"path", "/mnt/disk"}}},
                {"claimRef", {{"namespace", ns_}, {"name", "data"}}},
                {"nodeAffinity",
                 {{"required",
                   {{"nodeSelectorTerms",
                     Json::array({{{"matchExpressions",
                                    Json::array({{{"key", "kubernetes.io/hostname"},
                                                  {"operator", "In"},
                                                  {"values", Json::array({ns_ + "-b"})}}})}}})}}}}}}}});
  Create(Json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata",
               {{"name", "data"},
                {"namespace", ns_},
                {"annotations", {{"pv.kubernetes.io/bind-completed", "yes"}}}}},
              {"spec",
               {{"accessModes", Json::array({"ReadWriteOnce"})},
                {"storageClassName", ""},
                {"volumeName", pv},
                {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
  const auto with_volume = [&](const std::string& name, Json volume) {
    Json pod = Pod(name, "100m");
    pod["spec"]["volumes"] = Json::array({std::move(volume)});
    Create(pod);
  };
  with_volume("local", {{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}});
  with_volume("claimed", {{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "missing"}}}});
  with_volume("disk", {{"name", "d"}, {"vsphereVolume", {{"volumePath", "[ds] vol-1"}}}});
  ASSERT_TRUE(WaitFor([&] { return NodeOf("local") == ns_ + "-b"; })) << NodeOf("local");
  ASSERT_TRUE(WaitFor([&] { return !Condition("claimed", "PodScheduled").is_null(); }));
  EXPECT_EQ(Condition("claimed", "PodScheduled").value("message", ""),
            "0/2 nodes are available: persistentvolumeclaim \"missing\" not found. preemption: "
            "0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  ASSERT_TRUE(WaitFor([&] { return !Condition("disk", "PodScheduled").is_null(); }));
  EXPECT_THAT(Condition("disk", "PodScheduled").value("message", ""),
              ::testing::HasSubstr("pod's volume \"d\" at spec.volumes[0].vsphereVolume "
                                   "needs a plugin that evaluates spec.volumes.vsphereVolume"));
  EXPECT_EQ(NodeOf("claimed"), "");
  EXPECT_EQ(NodeOf("disk"), "");
}

TEST_F(KubeModeTest, PodsBoundByAnotherSchedulerCountAtOnce) {
  AddNode(ns_ + "-a", "2", "4Gi");
  AddNode(ns_ + "-b", "2", "4Gi", {{"pool", "b"}});
  StartHost(Config());
  // Placed by someone else on a: 1.5 of its 2 CPUs.
  Json other = Pod("placed-elsewhere", "1500m", "default-scheduler");
  other["spec"]["nodeName"] = ns_ + "-a";
  Create(other);
  // One CPU fits only on b now; ask for a as a preference so the count is what decides.
  Json mine = Pod("mine", "1");
  mine["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"preferredDuringSchedulingIgnoredDuringExecution",
         Json::array({{{"weight", 100},
                       {"preference",
                        {{"matchExpressions",
                          Json::array({{{"key", "kubernetes.io/hostname"},
                                        {"operator", "In"},
                                        {"values", Json::array({ns_ + "-a"})}}})}}}}})}}}};
  Create(mine);
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("mine").empty(); }));
  EXPECT_EQ(NodeOf("mine"), ns_ + "-b");
}

TEST_F(KubeModeTest, PreemptionMarksDeletesAndThenBinds) {
  AddNode(ns_ + "-a", "2", "4Gi");
  Create({{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", ns_ + "-high"}}},
          {"value", 1000}});
  StartHost(Config());
  Create(Pod("low", "1500m"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("low") == ns_ + "-a"; }));
  const std::string low_uid = Get("pod", "low")["metadata"].value("uid", "");
  Json high = Pod("high", "1500m");
  high["spec"]["priorityClassName"] = ns_ + "-high";
  Create(high);
  // The victim is marked and deleted with the default grace period: without a kubelet it
  // stays, terminating, until the test finishes it as the kubelet would.
  ASSERT_TRUE(WaitFor([&] {
    Json low = Get("pod", "low");
    return !low.is_null() && low["metadata"].contains("deletionTimestamp");
  }));
  const Json disruption = Condition("low", "DisruptionTarget");
  ASSERT_FALSE(disruption.is_null());
  EXPECT_EQ(disruption.value("status", ""), "True");
  EXPECT_EQ(disruption.value("reason", ""), "PreemptionByScheduler");
  EXPECT_EQ(disruption.value("message", ""),
            "schedhost: preempting to accommodate a higher priority pod");
  ASSERT_TRUE(WaitFor([&] {
    Json h = Get("pod", "high");
    return h["status"].value("nominatedNodeName", "") == ns_ + "-a";
  })) << Get("pod", "high").dump();
  EXPECT_EQ(NodeOf("high"), "");  // the victim still holds the node
  ASSERT_TRUE(WaitFor([&] { return !Events("low", "Preempted").empty(); }));
  // While the victim terminates, the preemptor's retries wait for it instead of preempting
  // again (upstream's terminating-victim rule): one eviction, one event. A node with room but
  // a taint it does not tolerate makes it try again meanwhile.
  AddNode(ns_ + "-tainted", "8", "16Gi", Json::object(),
          {{"taints", Json::array({{{"key", "dedicated"}, {"value", "other"},
                                    {"effect", "NoSchedule"}}})}});
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(kube_->kube_writer()->stats().evictions, 1u);
  EXPECT_EQ(Events("low", "Preempted").size(), 1u);
  EXPECT_EQ(Events("low", "Preempted")[0].value("note", ""),
            "Preempted by pod " + Get("pod", "high")["metadata"].value("uid", "") +
                " on node " + ns_ + "-a");
  Kubectl({"delete", "pod", "low", "-n", ns_, "--grace-period=0", "--force"});
  ASSERT_TRUE(WaitFor([&] { return NodeOf("high") == ns_ + "-a"; })) << Get("pod", "high").dump();
  EXPECT_FALSE(low_uid.empty());
}

TEST_F(KubeModeTest, SurvivesAnApiServerRestartAndACompactedHistory) {
  AddNode(ns_ + "-a", "64", "64Gi");
  // One replica, no election: an API server down for longer than the renew deadline would
  // (rightly) end a leader's term, and this host has no supervisor to start it again.
  StartHost(Config("[kubernetes.leader_election]\nenabled = false\n"));
  for (int i = 0; i < 5; ++i) Create(Pod("before-" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 5; ++i) {
      if (NodeOf("before-" + std::to_string(i)).empty()) return false;
    }
    return true;
  }));
  cp_->RestartApiServer();
  for (int i = 0; i < 5; ++i) Create(Pod("between-" + std::to_string(i), "100m"));
  // History compacted past every watch's position: resuming gets 410 and relists.
  for (int i = 0; i < 20; ++i) {
    Kubectl({"annotate", "namespace", ns_, "churn=" + std::to_string(i), "--overwrite"});
  }
  cp_->Compact();
  cp_->RestartApiServer();
  for (int i = 0; i < 5; ++i) Create(Pod("after-" + std::to_string(i), "100m"));
  for (const char* prefix : {"before-", "between-", "after-"}) {
    for (int i = 0; i < 5; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(WaitFor([&] { return !NodeOf(name).empty(); }, std::chrono::seconds(60)))
          << name;
    }
  }
  // Each pod was bound once: one Scheduled event each, and no binding conflict.
  for (const char* prefix : {"before-", "between-", "after-"}) {
    for (int i = 0; i < 5; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(WaitFor([&] { return !Events(name, "Scheduled").empty(); })) << name;
      EXPECT_EQ(Events(name, "Scheduled").size(), 1u) << name;
    }
  }
  EXPECT_EQ(kube_->kube_writer()->stats().binding_conflicts, 0u);
  uint64_t relists = 0;
  for (const auto& r : kube_->reflectors()) relists += r->stats().lists;
  EXPECT_GT(relists, kube_->reflectors().size());  // the restarts made them list again
}

TEST_F(KubeModeTest, APodBoundBehindItsBackIsForgottenNotRetried) {
  AddNode(ns_ + "-a", "4", "8Gi");
  AddNode(ns_ + "-b", "4", "8Gi");
  // A PreBind plugin that holds the binding cycle until the test has bound the pod itself.
  // Shared with the plugin, which may still run after a failed assertion ends the test body.
  auto held = std::make_shared<std::atomic<bool>>(false);
  auto release = std::make_shared<std::atomic<bool>>(false);
  framework::testing::FakePlugin& hold = plugin_;
  hold.name = "HoldBinding";
  hold.pre_bind = [held, release](std::string_view, framework::testing::Reasons&) {
    held->store(true);
    WaitFor([&] { return release->load(); });
    return SCHEDHOST_SUCCESS;
  };
  StartHost(Config("", "[[profile]]\nname = \"schedhost\"\n[profile.plugins.pre_bind]\n"
                       "enabled = [{ name = \"HoldBinding\" }]\n"),
            {hold.descriptor()});
  Create(Pod("contested", "1"));
  ASSERT_TRUE(WaitFor([&] { return held->load(); }));
  const Json pod = Get("pod", "contested");
  const std::string uid = pod["metadata"].value("uid", "");
  // Someone else binds it meanwhile (to b; were b schedhost's choice too, its binding would
  // still conflict: the pod is bound already).
  const std::string theirs = ns_ + "-b";
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "contested"}, {"namespace", ns_}, {"uid", uid}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", theirs}}}};
  Kubectl({"create", "--raw", "/api/v1/namespaces/" + ns_ + "/pods/contested/binding", "-f", "-"},
          binding.dump());
  release->store(true);
  ASSERT_TRUE(WaitFor([&] { return kube_->kube_writer()->stats().binding_conflicts == 1; }));
  EXPECT_EQ(NodeOf("contested"), theirs);
  // Not retried: no second attempt, no FailedScheduling, and the scheduler's cache holds the
  // pod once, on the node it was really bound to.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(kube_->kube_writer()->stats().binding_conflicts, 1u);
  EXPECT_EQ(kube_->kube_writer()->stats().bindings, 0u);
  EXPECT_TRUE(Events("contested", "FailedScheduling").empty());
  EXPECT_TRUE(Events("contested", "Scheduled").empty());
}

TEST_F(KubeModeTest, BadConfigurationIsASpecificError) {
  // No kubeconfig file.
  {
    config::KubernetesConfig k;
    k.kubeconfig = (dir_.path() / "missing.kubeconfig").string();
    try {
      KubeMode mode(k);
      FAIL() << "a missing kubeconfig was accepted";
    } catch (const KubeconfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("missing.kubeconfig"));
    }
  }
  // A context the kubeconfig does not have.
  {
    config::KubernetesConfig k;
    k.kubeconfig = cp_->user_kubeconfig();
    k.context = "nope";
    try {
      KubeMode mode(k);
      FAIL() << "an unknown context was accepted";
    } catch (const KubeconfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("\"nope\""));
    }
  }
  // A CA that did not sign the server's certificate: the start fails naming TLS.
  {
    std::ifstream in(cp_->user_kubeconfig());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string key = "certificate-authority-data: ";
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t end = text.find('\n', at);
    // Another CA: the client certificate's own bytes are not a CA for the server.
    const std::string other = dir_.path() / "other.kubeconfig";
    const size_t cert_at = text.find("client-certificate-data: ");
    ASSERT_NE(cert_at, std::string::npos);
    const size_t cert_end = text.find('\n', cert_at);
    const std::string cert = text.substr(cert_at + 25, cert_end - cert_at - 25);
    std::ofstream(other) << text.substr(0, at) << key << cert << text.substr(end);
    const std::filesystem::path file = dir_.path() / "wrong-ca.toml";
    std::string config = Config();
    config.replace(config.find(cp_->user_kubeconfig()), cp_->user_kubeconfig().size(), other);
    std::ofstream(file) << config;
    config::HostConfig parsed = config::LoadConfigFile(file);
    parsed.kubernetes->sync_timeout = std::chrono::seconds(3);
    api::ServiceHost host(parsed, framework::testing::PluginDir(), file);
    host.SetClusterSource(std::make_unique<KubeMode>(*parsed.kubernetes));
    try {
      host.Start();
      FAIL() << "a wrong CA was accepted";
    } catch (const api::ServiceHostError& e) {
      EXPECT_THAT(e.what(), HasSubstr("certificate verify failed"));
    }
  }
}

TEST_F(KubeModeTest, ForbiddenBindingIsReportedAndTheHostNotReady) {
  AddNode(ns_ + "-a", "4", "8Gi");
  // Take kube-scheduler's role away; give back only what reading the cluster needs.
  const ControlPlane::Result roles = cp_->Kubectl({"get", "clusterrolebindings", "-o", "json"});
  ASSERT_EQ(roles.exit_code, 0);
  std::vector<std::string> removed;
  const Json bindings = Json::parse(roles.out);
  for (const Json& b : bindings["items"]) {
    for (const Json& s : b.value("subjects", Json::array())) {
      if (s.value("name", "") == cp_->user() &&
          b["roleRef"].value("name", "") == "system:kube-scheduler") {
        removed.push_back(b.dump());
        Kubectl({"delete", "clusterrolebinding", b["metadata"].value("name", "")});
      }
    }
  }
  ASSERT_FALSE(removed.empty());
  Kubectl({"create", "clusterrole", ns_ + "-read", "--verb=get,list,watch",
           "--resource=pods,nodes,namespaces,poddisruptionbudgets.policy,"
           "priorityclasses.scheduling.k8s.io"});
  Kubectl({"create", "clusterrolebinding", ns_ + "-read", "--clusterrole=" + ns_ + "-read",
           "--user=" + cp_->user()});
  auto restore = [&] {
    cp_->Kubectl({"delete", "clusterrolebinding", ns_ + "-read"});
    cp_->Kubectl({"delete", "clusterrole", ns_ + "-read"});
    for (const std::string& b : removed) {
      Json binding = Json::parse(b);
      binding["metadata"] = {{"name", binding["metadata"]["name"]}};
      cp_->Kubectl({"create", "-f", "-"}, binding.dump());
    }
  };
  // RBAC changes take effect at once on the API server, no sleep needed.
  StartHost(Config());
  Create(Pod("denied", "1"));
  ASSERT_TRUE(WaitFor([&] { return kube_->kube_writer()->stats().binding_errors > 0; }));
  std::string why;
  EXPECT_FALSE(kube_->Healthy(&why));
  EXPECT_THAT(why, HasSubstr("403"));
  EXPECT_EQ(Readyz(host_->metrics_port()), 503);
  EXPECT_EQ(NodeOf("denied"), "");
  // Retried with backoff, not in a hot loop: at most a few attempts a second.
  const uint64_t before = kube_->kube_writer()->stats().binding_errors;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_LE(kube_->kube_writer()->stats().binding_errors - before, 6u);
  restore();
  ASSERT_TRUE(WaitFor([&] { return NodeOf("denied") == ns_ + "-a"; }, std::chrono::seconds(30)));
  EXPECT_TRUE(kube_->Healthy(&why)) << why;
  EXPECT_EQ(Readyz(host_->metrics_port()), 200);
}

// config/kubernetes/: the API server accepts the manifests as shipped, the service account they
// create may do what scheduling needs, and the ConfigMap's config is one schedhost reads.
TEST_F(KubeModeTest, ShippedManifestsGiveTheServiceAccountWhatSchedulingNeeds) {
  const std::filesystem::path dir =
      std::filesystem::path(std::getenv("SCHEDHOST_SOURCE_DIR")) / "config" / "kubernetes";
  Kubectl({"apply", "-f", (dir / "rbac.yaml").string()});
  Kubectl({"apply", "--dry-run=server", "-f", (dir / "deployment.yaml").string()});
  const std::string as = "--as=system:serviceaccount:kube-system:schedhost";
  for (const std::vector<std::string>& what :
       {std::vector<std::string>{"create", "pods", "--subresource=binding"},
        {"patch", "pods", "--subresource=status"},
        {"delete", "pods"},
        {"watch", "nodes"},
        {"list", "poddisruptionbudgets.policy"},
        {"create", "events.events.k8s.io"},
        {"update", "leases.coordination.k8s.io/schedhost", "-n", "kube-system"}}) {
    std::vector<std::string> args = {"auth", "can-i", as};
    args.insert(args.end(), what.begin(), what.end());
    const ControlPlane::Result r = cp_->Kubectl(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(what) << ": " << r.out << r.err;
  }
  // The config inside the ConfigMap parses and asks for in-cluster credentials.
  // kubectl prints one JSON object per document.
  std::istringstream objects(Kubectl(
      {"create", "--dry-run=client", "-o", "json", "-f", (dir / "deployment.yaml").string()}));
  std::string toml;
  for (Json item; objects >> std::ws && !objects.eof() && (objects >> item);) {
    if (item.value("kind", "") == "ConfigMap") toml = item["data"].value("schedhost.toml", "");
  }
  ASSERT_FALSE(toml.empty());
  const config::HostConfig parsed = config::ParseConfig(toml, "deployment.yaml", "/");
  ASSERT_TRUE(parsed.kubernetes.has_value());
  EXPECT_TRUE(parsed.kubernetes->in_cluster);
  ASSERT_EQ(parsed.profiles.size(), 1u);
  EXPECT_EQ(parsed.profiles[0].name, "schedhost");
}

// Normalized drops what JSON's omitempty leaves out and protobuf writes (zero scalars, empty
// objects and arrays, nulls) and the managed fields, so both encodings of one object compare.
Json Normalized(const Json& j) {
  if (j.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : j.items()) {
      if (k == "managedFields") continue;
      Json n = Normalized(v);
      const bool empty = n.is_null() || (n.is_string() && n.get<std::string>().empty()) ||
                         (n.is_number() && n == 0) || (n.is_boolean() && !n.get<bool>()) ||
                         (n.is_object() && n.empty()) || (n.is_array() && n.empty());
      if (!empty) out[k] = std::move(n);
    }
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& v : j) out.push_back(Normalized(v));
    return out;
  }
  return j;
}

TEST_F(KubeModeTest, ProtobufFromTheApiServerReadsAsItsJson) {
  // Objects of every built-in kind the host reads, with the fields the JSON mapping treats apart:
  // inline structs (volume sources, probe handlers, a PV's source), quantities, times,
  // int-or-strings, maps, negative and 64-bit integers, base64 bytes.
  const std::string manifests = R"(
apiVersion: v1
kind: Pod
metadata: {name: rich, labels: {app: web}, annotations: {note: "x"}}
spec:
  priority: 0
  terminationGracePeriodSeconds: 7
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: 250m, memory: 1Gi}, limits: {cpu: "2"}}
    ports: [{containerPort: 8080, name: http}]
    readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 5}
    livenessProbe: {exec: {command: ["true"]}}
    env: [{name: A, valueFrom: {configMapKeyRef: {name: cm, key: k}}}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: claim}}
  - {name: cache, emptyDir: {sizeLimit: 1Gi}}
  - {name: cfg, configMap: {name: cm, defaultMode: 420}}
  - name: eph
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim}
spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 5Gi}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {k: v}
binaryData: {b: AAECAw==}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb}
spec: {maxUnavailable: "30%", selector: {matchLabels: {app: web}}}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: lease}
spec: {holderIdentity: me, leaseDurationSeconds: 15, renewTime: "2026-12-05T10:00:00.123456Z"}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap}
storageClassName: fast
capacity: 100Gi
maximumVolumeSize: 10Gi
nodeTopology: {matchLabels: {zone: a}}
)";
  Kubectl({"create", "-n", ns_, "-f", "-"}, manifests);
  const std::string cluster = R"(
apiVersion: v1
kind: PersistentVolume
metadata: {name: PVNAME}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: SCNAME}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [a, b]}]}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: PCNAME}
value: -20
)";
  std::string objects = cluster;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"PVNAME", ns_ + "-pv"},
                                 {"SCNAME", ns_ + "-sc"},
                                 {"PCNAME", ns_ + "-pc"}}) {
    objects.replace(objects.find(from), from.size(), to);
  }
  Kubectl({"create", "-f", "-"}, objects);
  AddNode(ns_ + "-n1", "4", "8Gi");

  ClientOptions options;
  options.qps = 0;
  ApiClient client(LoadKubeconfig(cp_->admin_kubeconfig(), ""), options);
  const std::string ns = "/namespaces/" + ns_;
  int compared = 0;
  for (const std::string& path :
       {"/api/v1" + ns + "/pods", "/api/v1" + ns + "/persistentvolumeclaims",
        "/api/v1" + ns + "/configmaps", "/apis/policy/v1" + ns + "/poddisruptionbudgets",
        "/apis/coordination.k8s.io/v1" + ns + "/leases",
        "/apis/storage.k8s.io/v1" + ns + "/csistoragecapacities", std::string("/api/v1/nodes"),
        std::string("/api/v1/persistentvolumes"), std::string("/apis/storage.k8s.io/v1/storageclasses"),
        std::string("/apis/scheduling.k8s.io/v1/priorityclasses"), std::string("/api/v1/namespaces")}) {
    const Response json = client.Call("GET", path);
    const Response pb = client.Call("GET", path, {}, "application/json", {}, proto::kAccept);
    ASSERT_EQ(json.status, 200) << path << json.body;
    ASSERT_EQ(pb.status, 200) << path;
    ASSERT_TRUE(proto::IsProtobuf(pb.content_type)) << path << ": " << pb.content_type;
    Json from_json = Json::parse(json.body);
    Json from_pb = proto::DecodeObject(pb.body);
    // The two GETs may straddle a change (a node's heartbeat): compare the objects both saw at
    // the same resourceVersion.
    from_json["metadata"].erase("resourceVersion");
    from_pb["metadata"].erase("resourceVersion");
    ASSERT_FALSE(from_json["items"].empty()) << path;
    if (Normalized(from_json) != Normalized(from_pb)) {
      // Name the first item that differs.
      for (size_t i = 0; i < from_json["items"].size(); ++i) {
        EXPECT_EQ(Normalized(from_json["items"][i]).dump(1), Normalized(from_pb["items"][i]).dump(1))
            << path << " item " << i;
      }
      ADD_FAILURE() << path;
    }
    compared += static_cast<int>(from_json["items"].size());
  }
  EXPECT_GE(compared, 12);

  // A watch in protobuf: the event's object reads as the object's JSON.
  const Response list = client.Call("GET", "/api/v1" + ns + "/pods");
  const std::string rv = Json::parse(list.body)["metadata"].value("resourceVersion", "");
  std::thread create([&] { Create(Pod("watched", "100m")); });
  std::string content_type;
  proto::WatchStream stream;
  Json added;
  std::string error_body;
  const int status = client.Watch(
      "/api/v1" + ns + "/pods?watch=1&resourceVersion=" + rv,
      [&](std::string_view bytes) {
        stream.Feed(bytes);
        Json event;
        while (stream.Next(&event)) {
          if (event["type"] == "ADDED" && event["object"]["metadata"]["name"] == "watched") {
            added = event["object"];
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(30), &error_body, proto::kAccept, &content_type);
  create.join();
  ASSERT_EQ(status, 200) << error_body;
  EXPECT_TRUE(proto::IsProtobuf(content_type)) << content_type;
  ASSERT_TRUE(added.is_object());
  Json pod = Get("pod", "watched");
  pod.erase("apiVersion");
  pod.erase("kind");
  added.erase("apiVersion");
  added.erase("kind");
  EXPECT_EQ(Normalized(pod["spec"]).dump(1), Normalized(added["spec"]).dump(1));
  EXPECT_EQ(Normalized(pod["metadata"]["uid"]), Normalized(added["metadata"]["uid"]));
}

// The writer on its own, as the `schedhost` user, with the series times shortened.
class EventWriterTest : public KubeModeTest {
 protected:
  std::unique_ptr<ApiClient> Client() {
    ClientOptions options;
    options.qps = 0;
    return std::make_unique<ApiClient>(LoadKubeconfig(cp_->user_kubeconfig(), ""), options);
  }
  // FakePod is a pod the events are about; it need not exist.
  std::shared_ptr<const model::Pod> FakePod(const std::string& name) {
    const Json pod = {{"metadata", {{"name", name}, {"namespace", ns_}, {"uid", "uid-" + name}}},
                      {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
    return model::Pod::Make(
        std::get<model::PodData>(model::DecodeApiObject(pod, model::ApiKind::kPod)));
  }
};

TEST_F(EventWriterTest, AlikeEventsBecomeOneSeriesWhoseCountIsWrittenWhenItEnds) {
  auto client = Client();
  WriterOptions options;
  options.instance = "test";
  options.series_finish = std::chrono::seconds(2);
  Writer writer(*client, options);
  writer.Start();
  const auto pod = FakePod("p");
  writer.ReportUnschedulable(*pod, "Unschedulable", "0/3 nodes are available: first.");
  // The second is alike (the note is not part of the likeness): the same object gets a series
  // of 2, patched as soon as the create is done, never before.
  writer.ReportUnschedulable(*pod, "Unschedulable", "0/3 nodes are available: second.");
  // one_event_counting says whether p's FailedScheduling events are one object of `count`.
  auto one_event_counting = [&](int count) {
    const auto events = Events("p", "FailedScheduling");
    return events.size() == 1 && SeriesCount(events[0]) == count;
  };
  ASSERT_TRUE(WaitFor([&] { return one_event_counting(2); }))
      << Kubectl({"get", "events.v1.events.k8s.io", "-n", ns_, "-o", "json"});
  // Another reason, and the same reason about another pod, are events of their own.
  writer.ReportScheduled(*pod, "n1");
  writer.ReportUnschedulable(*FakePod("q"), "Unschedulable", "0/3 nodes are available: q.");
  // The third and fourth are counted, not written, until the series ends (2 s without one).
  writer.ReportUnschedulable(*pod, "Unschedulable", "third");
  writer.ReportUnschedulable(*pod, "Unschedulable", "fourth");
  ASSERT_TRUE(WaitFor([&] { return one_event_counting(4); }))
      << Kubectl({"get", "events.v1.events.k8s.io", "-n", ns_, "-o", "json"});
  const Json event = Events("p", "FailedScheduling")[0];
  EXPECT_EQ(event.value("note", ""), "0/3 nodes are available: first.");
  EXPECT_EQ(event.value("reportingInstance", ""), "default-scheduler-test");
  EXPECT_FALSE(event["series"].value("lastObservedTime", "").empty());
  EXPECT_EQ(Events("p", "Scheduled").size(), 1u);
  EXPECT_EQ(Events("q", "FailedScheduling").size(), 1u);
  // Once ended, the next alike event starts afresh: a new object.
  writer.ReportUnschedulable(*pod, "Unschedulable", "fifth");
  ASSERT_TRUE(WaitFor([&] { return Events("p", "FailedScheduling").size() == 2; }));
  const WriterStats stats = writer.stats();
  EXPECT_EQ(stats.events, 6u);  // p: create, 2, 4, create; Scheduled; q
  EXPECT_EQ(stats.events_aggregated, 2u);
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.event_errors, 0u);
}

TEST_F(EventWriterTest, ABurstAsLargeAsTheQueueIsWrittenInFullByConcurrentSenders) {
  auto client = Client();
  WriterOptions options;
  options.instance = "test";
  options.max_events = 600;
  Writer writer(*client, options);
  writer.Start();
  const uint64_t requests_before = client->requests();
  const std::string prefix = "b";
  for (int i = 0; i < 600; ++i) writer.ReportScheduled(*FakePod(prefix + std::to_string(i)), "n1");
  ASSERT_TRUE(WaitFor([&] { return writer.stats().events == 600; }, std::chrono::seconds(60)))
      << writer.stats().events;
  EXPECT_EQ(writer.stats().events_dropped, 0u);
  EXPECT_EQ(client->requests() - requests_before, 600u);
  EXPECT_EQ(ScheduledEvents().size(), 600u);
}

TEST_F(EventWriterTest, EventsBeyondTheQueueAreDroppedAndCountedWhenTheServerFallsBehind) {
  auto client = Client();
  WriterOptions options;
  options.instance = "test";
  options.max_events = 10;
  options.event_senders = 2;
  options.events_per_second = 0.5;  // the API server "falls behind": two writes, then one per 2 s
  options.event_burst = 2;
  Writer writer(*client, options);
  writer.Start();
  const std::string prefix = "d";
  for (int i = 0; i < 50; ++i) writer.ReportScheduled(*FakePod(prefix + std::to_string(i)), "n1");
  // At most the queue and what the senders hold got in; the rest were dropped and counted.
  const WriterStats stats = writer.stats();
  EXPECT_GE(stats.events_dropped, 50u - 10u - 2u - 2u);
  EXPECT_LE(stats.events_dropped, 50u - 10u);
  // The metric counts them too (process-wide: other writers of the process add theirs).
  const std::string text = metrics::DefaultRegistry().Render();
  const std::string line = "schedhost_kube_events_total{result=\"dropped\"} ";
  const size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stoull(text.substr(at + line.size())), stats.events_dropped);
}

}  // namespace
}  // namespace schedhost::kube
