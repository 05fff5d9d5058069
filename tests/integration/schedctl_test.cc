// schedctl as a client of schedhostd, both binaries run as subprocesses: schedhostd on a
// temporary Unix socket, schedctl applying the demo cluster, waiting for the bindings, reading
// them back as tables, JSON and YAML, describing and deleting a pod, re-applying, refusing a
// bad manifest before sending anything (schedctl_connection_test.cc: the server address, no
// server, TLS), and the Admin commands (plugins, profiles, stats, explain, reload) on the
// running host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <schedhost/plugin.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "schedctl_fixture.h"

namespace schedhost::testing {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// Pods of the demo cluster that bind whatever order the live scheduler sees them in. ingress-2
// is not one: when batch-report and api-critical's nomination fill zone-a-2 first, no zone-a
// node has room for it once api-critical has preempted batch-report.
const std::set<std::string> kBindable = {
    "postgres-0", "redis-0",    "web-1",     "web-2",        "web-3",       "training",
    "ssd-cache",  "zone-b-worker", "postgres-1", "ingress-1", "metrics-db-0"};

TEST_F(SchedctlTest, AppliesTheDemoClusterAndReadsItBack) {
  Result apply = Ctl({"apply", "-f", DemoCluster().string()});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  const std::vector<std::string> lines = Lines(apply.out);
  // A StorageClass, a PersistentVolume and a claim (the kinds plugins declare come first), then
  // 2 PriorityClasses, 6 nodes and 17 pods.
  ASSERT_EQ(lines.size(), 28u) << apply.out;
  EXPECT_EQ(lines[0], "storageclass.storage.k8s.io/local-ssd created");
  EXPECT_EQ(lines[1], "persistentvolume/ssd-disk-1 created");
  EXPECT_EQ(lines[2], "persistentvolumeclaim/metrics-db (namespace data) created");
  EXPECT_EQ(lines[3], "priorityclass.scheduling.k8s.io/high created");
  EXPECT_EQ(lines[5], "node/zone-a-1 created");
  EXPECT_EQ(lines[11], "pod/postgres-0 (namespace data) created");
  EXPECT_EQ(lines[14], "pod/web-1 created");
  EXPECT_EQ(lines[27], "pod/gated-job created");
  for (const std::string& line : lines) EXPECT_THAT(line, ContainsRegex(" created$"));

  const std::map<std::string, std::string> nodes = WaitForNodes(kBindable);
  EXPECT_EQ(nodes.at("training"), "zone-c-gpu");
  EXPECT_EQ(nodes.at("ssd-cache"), "zone-c-ssd");
  EXPECT_EQ(nodes.at("zone-b-worker"), "zone-b-1");
  EXPECT_EQ(nodes.at("metrics-db-0"), "zone-c-ssd");  // where its claim's volume is
  for (const char* never : {"huge", "gated-job", "ingress-3"}) EXPECT_EQ(nodes.count(never), 0u);

  Result get_nodes = Ctl({"get", "nodes"});
  ASSERT_EQ(get_nodes.exit_code, 0) << get_nodes.err;
  std::vector<std::string> node_lines = Lines(get_nodes.out);
  ASSERT_EQ(node_lines.size(), 7u) << get_nodes.out;
  EXPECT_THAT(node_lines[0], ContainsRegex("^NAME +STATUS +AGE$"));
  EXPECT_THAT(get_nodes.out, ContainsRegex("\nzone-a-1 +Ready +[0-9]+s\n"));
  EXPECT_THAT(get_nodes.out, ContainsRegex("\nzone-b-2 +Ready,SchedulingDisabled +[0-9]+s\n"));

  Result wide_nodes = Ctl({"get", "nodes", "-o", "wide"});
  EXPECT_THAT(wide_nodes.out, ContainsRegex("\nzone-c-gpu +Ready +[0-9]+s +8 +32Gi +110 +"
                                            "dedicated=gpu:NoSchedule\n"));

  // Default namespace only: the web pods, api-critical, batch-report, ssd-cache, ...
  Result wide = Ctl({"get", "pods", "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_THAT(Lines(wide.out)[0],
              ContainsRegex("^NAME +STATUS +NODE +NOMINATED NODE +AGE +PRIORITY +SCHEDULER$"));
  EXPECT_THAT(wide.out, ContainsRegex("\nssd-cache +Scheduled +zone-c-ssd +<none> +[0-9]+s +0 +"
                                      "default-scheduler\n"));
  EXPECT_THAT(wide.out, ContainsRegex("\ngated-job +SchedulingGated +<none> +<none> "));
  EXPECT_THAT(wide.out, Not(HasSubstr("postgres-0")));  // namespace data

  Result web = Ctl({"get", "pods", "-l", "app=web"});
  ASSERT_EQ(web.exit_code, 0) << web.err;
  std::vector<std::string> web_lines = Lines(web.out);
  ASSERT_EQ(web_lines.size(), 4u) << web.out;
  for (int i = 1; i <= 3; ++i) {
    EXPECT_THAT(web_lines[i], ContainsRegex("^web-" + std::to_string(i) + " +Scheduled +zone-"));
  }

  Result all = Ctl({"get", "pods", "-A", "-l", "app notin (web,api)", "-o", "name"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("pod/postgres-0\n"));
  EXPECT_THAT(all.out, Not(HasSubstr("pod/web-1\n")));

  Result data = Ctl({"get", "pods", "-n", "data"});
  EXPECT_THAT(data.out, ContainsRegex("^NAME +STATUS +NODE +NOMINATED NODE +AGE\nmetrics-db-0 +"
                                      "Scheduled +zone-c-ssd +<none> +[0-9]+s\npostgres-0 +"
                                      "Scheduled +zone-a-1 "));

  Result yaml = Ctl({"get", "pod", "web-1", "-o", "yaml"});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_THAT(yaml.out, AllOf(HasSubstr("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n"),
                              HasSubstr("  nodeName: " + nodes.at("web-1") + "\n"),
                              HasSubstr("        cpu: 500m\n")));

  Result one = Ctl({"get", "priorityclass", "high", "-o", "json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto pc = nlohmann::json::parse(one.out);
  EXPECT_EQ(pc["kind"], "PriorityClass");
  EXPECT_EQ(pc["value"], 100000);
  Result pcs = Ctl({"get", "priorityclasses"});
  EXPECT_THAT(pcs.out, ContainsRegex("\nhigh +100000 +false +[0-9]+s\n"));
  EXPECT_THAT(pcs.out, ContainsRegex("\nlow +-100 +false +[0-9]+s\n"));

  Result no_pdbs = Ctl({"get", "pdbs"});
  EXPECT_EQ(no_pdbs.exit_code, 0);
  EXPECT_EQ(no_pdbs.out, "");
  EXPECT_EQ(no_pdbs.err, "No resources found in default namespace.\n");

  // describe: the object part joined with the last attempt Admin.Explain reports.
  Result describe = Ctl({"describe", "pod", "web-1"});
  ASSERT_EQ(describe.exit_code, 0) << describe.err;
  EXPECT_THAT(describe.out,
              AllOf(ContainsRegex("^Name: +web-1\nNamespace: +default\nPriority: +0\n"),
                    ContainsRegex("\nNode: +" + nodes.at("web-1") + "\n"),
                    ContainsRegex("\nLabels: +app=web\n"), ContainsRegex("\nStatus: +Scheduled\n"),
                    ContainsRegex("\nAttempts: +[1-9][0-9]*\n"),
                    ContainsRegex("Normal +Scheduled +default-scheduler +Successfully assigned "
                                  "default/web-1 to " +
                                  nodes.at("web-1") + "\n"),
                    HasSubstr("      cpu:     500m\n")));
  Result describe_ns = Ctl({"describe", "pod", "training", "-n", "ml"});
  EXPECT_THAT(describe_ns.out, ContainsRegex("\nTolerations: +dedicated=gpu:NoSchedule\n"));
  Result describe_missing = Ctl({"describe", "pod", "nope"});
  EXPECT_EQ(describe_missing.exit_code, 1);
  EXPECT_EQ(describe_missing.err, "Error from server (NotFound): pods \"nope\" not found\n");

  // delete, then the pod is gone.
  Result del = Ctl({"delete", "pod", "web-1"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(del.out, "pod \"web-1\" deleted\n");
  Result gone = Ctl({"get", "pod", "web-1"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(gone.err, "Error from server (NotFound): pods \"web-1\" not found\n");
  Result del_again = Ctl({"delete", "pod", "web-1"});
  EXPECT_EQ(del_again.exit_code, 1);
  EXPECT_EQ(del_again.err, "Error from server (NotFound): pods \"web-1\" not found\n");
  Result del_pc = Ctl({"delete", "pc", "low"});
  EXPECT_EQ(del_pc.out, "priorityclass.scheduling.k8s.io \"low\" deleted\n");

  // Re-apply: the deleted objects come back, the rest is unchanged (the scheduler's nodeName and
  // nominations are the server's, so they do not count as a change).
  Result again = Ctl({"apply", "-f", DemoCluster().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::vector<std::string> again_lines = Lines(again.out);
  ASSERT_EQ(again_lines.size(), 28u);
  EXPECT_EQ(again_lines[2], "persistentvolumeclaim/metrics-db (namespace data) unchanged");
  EXPECT_EQ(again_lines[4], "priorityclass.scheduling.k8s.io/low created");
  EXPECT_EQ(again_lines[5], "node/zone-a-1 unchanged");
  EXPECT_EQ(again_lines[11], "pod/postgres-0 (namespace data) unchanged");
  EXPECT_EQ(again_lines[14], "pod/web-1 created");
  EXPECT_EQ(again_lines[24], "pod/ingress-3 (namespace edge) unchanged");

  // A changed label is `configured`; the manifest comes on stdin.
  const fs::path relabel = dir_.path() / "relabel.yaml";
  std::ofstream(relabel) << "apiVersion: v1\nkind: Node\nmetadata:\n  name: zone-c-ssd\n"
                            "  labels: {disk: nvme}\nstatus:\n"
                            "  allocatable: {cpu: \"2\", memory: 4Gi, pods: \"110\"}\n";
  Result configured = RunSchedctl(dir_, {"apply", "-f", "-"}, server_, relabel.string());
  EXPECT_EQ(configured.exit_code, 0) << configured.err;
  EXPECT_EQ(configured.out, "node/zone-c-ssd configured\n");
  Result ssd = Ctl({"get", "nodes", "-l", "disk=nvme", "-o", "name"});
  EXPECT_EQ(ssd.out, "node/zone-c-ssd\n");
}

TEST_F(SchedctlTest, WatchPrintsEventsUntilCountOrTimeout) {
  ASSERT_EQ(Ctl({"apply", "-f", DemoCluster().string()}).exit_code, 0);
  WaitForNodes({"training"});
  Result watch = Ctl({"watch", "pods", "-n", "ml", "--count", "2"});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  const std::vector<std::string> lines = Lines(watch.out);
  ASSERT_EQ(lines.size(), 2u) << watch.out;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, ContainsRegex("^(ADDED|MODIFIED) pod/(training|huge) namespace=ml rv=[0-9]+ "
                                    "node=[a-z0-9-]* nominated=[a-z0-9-]*$"));
  }

  // List, then watch from the list's version: only later changes; --timeout ends the stream
  // with exit 0.
  WaitForNodes(kBindable);
  Result list = Ctl({"get", "pods", "-n", "edge", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const std::string list_rv =
      nlohmann::json::parse(list.out)["metadata"]["resourceVersion"].get<std::string>();
  ASSERT_FALSE(list_rv.empty());
  Result del = Ctl({"delete", "pod", "ingress-3", "-n", "edge"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  Result tail = Ctl({"watch", "pods", "-A", "--resource-version", list_rv, "--timeout", "1"});
  EXPECT_EQ(tail.exit_code, 0) << tail.err;
  EXPECT_LT(tail.seconds, 10);
  const std::vector<std::string> events = Lines(tail.out);
  ASSERT_FALSE(events.empty());
  bool deleted = false;
  for (const std::string& line : events) {
    deleted = deleted || line.rfind("DELETED pod/ingress-3 namespace=edge rv=", 0) == 0;
    const std::string rv = line.substr(line.find(" rv=") + 4);
    EXPECT_GT(std::stoull(rv.substr(0, rv.find(' '))), std::stoull(list_rv)) << line;
  }
  EXPECT_TRUE(deleted) << tail.out;
}

// An embedded cluster binds claims as kube-controller-manager would: VolumeBinding matches the
// WaitForFirstConsumer claim to the local volume of the one node it fits and writes its
// claimRef; the host's PV controller completes the binding; then the pod is bound there.
TEST_F(SchedctlTest, AnEmbeddedClusterBindsAWaitForFirstConsumerClaimThenThePod) {
  const fs::path manifest = dir_.path() / "storage.yaml";
  std::ofstream(manifest) << R"(apiVersion: v1
kind: Node
metadata: {name: big, labels: {kubernetes.io/hostname: big}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: small, labels: {kubernetes.io/hostname: small}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk-small}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [small]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {requests: {storage: 5Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: db, image: postgres, resources: {requests: {cpu: 100m}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
)";
  Result apply = Ctl({"apply", "-f", manifest.string()});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_EQ(WaitForNodes({"db"}).at("db"), "small");
  Result claim = Ctl({"get", "persistentvolumeclaims", "data", "-o", "yaml"});
  EXPECT_THAT(claim.out, HasSubstr("volumeName: disk-small"));
  EXPECT_THAT(claim.out, HasSubstr("pv.kubernetes.io/bind-completed: \"yes\""));
  Result volume = Ctl({"get", "persistentvolumes", "disk-small", "-o", "yaml"});
  EXPECT_THAT(volume.out, HasSubstr("phase: Bound"));
}

TEST_F(SchedctlTest, InvalidManifestNamesTheFieldAndCreatesNothing) {
  const fs::path bad = dir_.path() / "bad.yaml";
  std::ofstream(bad) << "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                        "  - name: c\n    resources: {requests: {cpu: abc}}\n";
  Result r = Ctl({"apply", "-f", bad.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, AllOf(HasSubstr(bad.string() + ": document 2 (Pod default/p): "
                                                    "spec.containers[0].resources.requests.cpu"),
                           HasSubstr("invalid quantity")));
  Result nodes = Ctl({"get", "nodes"});
  EXPECT_EQ(nodes.exit_code, 0);
  EXPECT_EQ(nodes.err, "No resources found.\n");

  // A server-side refusal (a bound pod's node is immutable) is reported per object, and the
  // other objects of the file are still applied, as kubectl does.
  const fs::path first = dir_.path() / "first.yaml";
  std::ofstream(first) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: a\n"
                          "  containers: [{name: c}]\n";
  ASSERT_EQ(Ctl({"apply", "-f", first.string()}).exit_code, 0);
  const fs::path second = dir_.path() / "second.yaml";
  std::ofstream(second) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: b\n"
                           "  containers: [{name: c}]\n---\n"
                           "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n";
  Result partial = Ctl({"apply", "-f", second.string()});
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_THAT(partial.err, ContainsRegex("^Error from server \\(InvalidArgument\\): error when "
                                         "applying pod/p from \"[^\"]*second.yaml\": .*nodeName"));
  EXPECT_EQ(partial.out, "node/n2 created\n");

  // Two pods of one name in two namespaces: each line says which.
  const fs::path twins = dir_.path() / "twins.yaml";
  std::ofstream(twins) << "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0}\n"
                          "spec: {containers: [{name: c}]}\n---\n"
                          "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: team}\n"
                          "spec: {containers: [{name: c}]}\n";
  Result both = Ctl({"apply", "-f", twins.string()});
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.out, "pod/web-0 created\npod/web-0 (namespace team) created\n");

  Result unknown = Ctl({"get", "deployments"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("the server doesn't have a resource type \"deployments\""));
  Result bad_selector = Ctl({"get", "pods", "-l", "app in (web"});
  EXPECT_EQ(bad_selector.exit_code, 1);
  EXPECT_THAT(bad_selector.err, HasSubstr("Error from server (InvalidArgument): label_selector:"));
  Result bad_output = Ctl({"get", "pods", "-o", "table"});
  EXPECT_EQ(bad_output.exit_code, 1);
  EXPECT_THAT(bad_output.err, HasSubstr("allowed formats are: json, name, wide, yaml"));
}

// The Admin commands against the real server once the demo cluster has been scheduled.
TEST_F(SchedctlTest, AdminCommandsReadTheRunningHost) {
  ASSERT_EQ(Ctl({"apply", "-f", DemoCluster().string()}).exit_code, 0);
  const std::map<std::string, std::string> nodes = WaitForNodes(kBindable);

  Result plugins = Ctl({"plugins"});
  ASSERT_EQ(plugins.exit_code, 0) << plugins.err;
  const std::string kAbi = "1\\." + std::to_string(SCHEDHOST_ABI_MINOR);
  EXPECT_THAT(plugins.out, ContainsRegex("\nDefaultBinder +[^ ]+ +" + kAbi +
                                         " +Bind +default-scheduler +"
                                         "[^ ]*default_binder\\.so +[0-9a-f]{12}\n"));
  EXPECT_THAT(plugins.out, ContainsRegex("\nNodeResourcesFit +[^ ]+ +" + kAbi + " +"));

  Result profiles = Ctl({"profiles"});
  ASSERT_EQ(profiles.exit_code, 0) << profiles.err;
  EXPECT_THAT(profiles.out, HasSubstr("TaintToleration(3), NodeAffinity(2), NodeResourcesFit(1)"));

  // Eight of the bindable pods are bound by the scheduler (postgres-0 and redis-0 come bound);
  // the counter moves just after the store shows the binding, so poll briefly.
  Result stats;
  int bound_pods = -1;
  for (int i = 0; i < 50 && bound_pods < 8; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stats = Ctl({"stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    const size_t at = stats.out.find("bound_pods: ");
    ASSERT_NE(at, std::string::npos) << stats.out;
    bound_pods = std::stoi(stats.out.substr(at + 12));
  }
  EXPECT_GE(bound_pods, 8) << stats.out;
  EXPECT_THAT(stats.out, ContainsRegex("gated_pods: 1\n"));  // gated-job

  // huge fits nowhere: every node says why, in the plugin that refused it.
  Result huge = Ctl({"explain", "pod", "huge", "-n", "ml"});
  ASSERT_EQ(huge.exit_code, 0) << huge.err;
  EXPECT_THAT(huge.out, HasSubstr("Node:             <none>\n"));
  EXPECT_THAT(huge.out, HasSubstr("x Insufficient cpu"));
  EXPECT_THAT(huge.out, HasSubstr("x node(s) had untolerated taint(s)"));
  EXPECT_THAT(huge.out, ContainsRegex("\nzone-b-2 +.*x node\\(s\\) were unschedulable"));
  EXPECT_THAT(huge.out, HasSubstr("No feasible node.\n"));

  // web-1 is bound: its node is the one the store shows, with a score row per feasible node.
  Result web = Ctl({"explain", "pod", "web-1"});
  ASSERT_EQ(web.exit_code, 0) << web.err;
  EXPECT_THAT(web.out, HasSubstr("Node:             " + nodes.at("web-1") + "\n"));
  EXPECT_THAT(web.out, ContainsRegex("Score \\(weighted\\):\nNODE +.*TOTAL\n"));

  Result missing = Ctl({"explain", "pod", "nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("Error from server (NotFound): "));

  Result reload = Ctl({"reload"});
  EXPECT_EQ(reload.exit_code, 0) << reload.err;
  EXPECT_THAT(reload.out, HasSubstr("generation 2 is live"));
}

}  // namespace
}  // namespace schedhost::testing
