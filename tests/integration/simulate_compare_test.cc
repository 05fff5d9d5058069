// `schedctl simulate --compare` on scenarios/compare (two configs one Score weight apart, on a
// cluster where the weight flips the pods that prefer the ssd node): exactly those pods differ,
// pending and replayed, with the plugin named; a Filter one config drops is named, and the
// pending side says why it waits; identical configs differ nowhere; each config gets the
// objects of the kinds it declares; bad flags and configs are refused with a clear error. And
// `schedctl snapshot`'s trimming and its errors without a cluster (bad kubeconfig, no server,
// unwritable file: nothing written).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "host/cli/printers.h"
#include "host/cli/simulate.h"
#include "host/cli/snapshot.h"
#include "host/framework/testing/command.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "host/model/decode.h"

namespace schedhost::cli {
namespace {

using ::testing::HasSubstr;

std::string Scenario(const std::string& file) {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/tests/integration/scenarios/compare/" + file;
}

struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

Outcome Compare(const std::string& new_config, const std::string& old_config,
                const std::string& output = "json", bool explain = false) {
  SimulateOptions o;
  o.manifest_paths = {Scenario("cluster.yaml")};
  o.config_path = new_config;
  o.compare_path = old_config;
  o.output = output;
  o.explain = explain;
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  Outcome r;
  r.code = RunSimulate(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(SimulateCompareTest, NamesExactlyThePodsTheWeightFlipsAndThePlugin) {
  const Outcome r = Compare(Scenario("new.toml"), Scenario("old.toml"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> differing;
  std::set<std::string> all;
  for (const nlohmann::json& p : j["pods"]) {
    const std::string key = p["kind"].get<std::string>() + " " + p["name"].get<std::string>();
    all.insert(key);
    if (p["differs"].get<bool>()) {
      differing[key] = p;
    } else {
      EXPECT_EQ(p["old"]["node"], p["new"]["node"]) << key;
      EXPECT_TRUE(p["diff"].is_null()) << key;
    }
  }
  EXPECT_EQ(all, (std::set<std::string>{"pending prefers-ssd-1", "pending plain-1",
                                         "pending prefers-ssd-2", "pending plain-2",
                                         "replay filler", "replay runs-ssd", "replay runs-big"}));
  ASSERT_EQ(differing.size(), 3u) << r.out;
  for (const char* key : {"pending prefers-ssd-1", "pending prefers-ssd-2", "replay runs-ssd"}) {
    ASSERT_TRUE(differing.contains(key)) << key << "\n" << r.out;
    const nlohmann::json& p = differing[key];
    EXPECT_EQ(p["old"]["node"], "node-ssd") << key;
    EXPECT_EQ(p["new"]["node"], "node-big") << key;
    EXPECT_EQ(p["diff"]["point"], "Score") << key;
    EXPECT_EQ(p["diff"]["plugin"], "NodeResourcesFit") << key;
    EXPECT_FALSE(p["diff"]["sameBest"].get<bool>()) << key;
    EXPECT_THAT(p["diff"]["detail"].get<std::string>(), HasSubstr("(weight 10)")) << key;
  }
  EXPECT_EQ(differing["replay runs-ssd"]["runsOn"], "node-ssd");
  EXPECT_EQ(j["summary"]["differ"], 3);
  EXPECT_EQ(j["summary"]["pods"], 7);
}

TEST(SimulateCompareTest, TheTableHasARowPerPodAndSaysWhyEachDifferenceIs) {
  const Outcome r = Compare(Scenario("new.toml"), Scenario("old.toml"), "table");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NAMESPACE   NAME            KIND      RUNS-ON    OLD        NEW"
                               "        DIFFERS-BY\n"));
  EXPECT_THAT(r.out, HasSubstr("default     prefers-ssd-1   pending   <none>     node-ssd   "
                               "node-big   Score NodeResourcesFit\n"));
  EXPECT_THAT(r.out, HasSubstr("default     runs-ssd        replay    node-ssd   node-ssd   "
                               "node-big   Score NodeResourcesFit\n"));
  EXPECT_THAT(r.out, HasSubstr("default     plain-1         pending   <none>     node-big   "
                               "node-big   <none>\n"));
  EXPECT_THAT(r.out, HasSubstr("3 of 7 pods placed differently (2 of 4 pending, 1 of 3 replay)"));
  EXPECT_THAT(r.out, HasSubstr("default/runs-ssd (replay): NodeResourcesFit scores node-big"));
}

TEST(SimulateCompareTest, IdenticalConfigsDifferNowhere) {
  const Outcome r = Compare(Scenario("old.toml"), Scenario("old.toml"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["summary"]["differ"], 0);
  for (const nlohmann::json& p : j["pods"]) {
    EXPECT_FALSE(p["differs"].get<bool>()) << p.dump();
    EXPECT_FALSE(p["old"]["node"].is_null()) << p.dump();
  }
}

TEST(SimulateCompareTest, AFilterOneConfigDropsIsNamedAndThePendingSideSaysWhy) {
  framework::testing::TempDir dir;
  const std::string cluster = (dir.path() / "tainted.yaml").string();
  std::ofstream(cluster) << R"(apiVersion: v1
kind: Node
metadata: {name: tainted}
spec:
  taints: [{key: dedicated, value: batch, effect: NoSchedule}]
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: app}]
)";
  const std::string no_taints = (dir.path() / "no-taints.toml").string();
  std::ofstream(no_taints) << "[[profile]]\nname = \"default-scheduler\"\n"
                              "[profile.plugins.filter]\n"
                              "disabled = [{ name = \"TaintToleration\" }]\n";
  SimulateOptions o;
  o.manifest_paths = {cluster};
  o.config_path = no_taints;
  o.compare_path = Scenario("old.toml");
  o.output = "table";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("default     web    pending   <none>    Pending   tainted   "
                                   "Filter TaintToleration\n"));
  EXPECT_THAT(out.str(), HasSubstr("default/web (pending): old's Filter TaintToleration rejects "
                                   "tainted, where new placed the pod"));
  EXPECT_THAT(out.str(), HasSubstr("  old leaves it pending: 0/1 nodes are available: 1 node(s) "
                                   "had untolerated taint"));
}

TEST(SimulateCompareTest, IdenticalConfigsDifferNowhereWhereCyclesStopEarly) {
  // 120 alike nodes: each cycle stops after 100 feasible ones (percentageOfNodesToScore), where
  // threads racing through the nodes would keep different ones from run to run.
  framework::testing::TempDir dir;
  const std::string cluster = (dir.path() / "wide.yaml").string();
  {
    std::ofstream out(cluster);
    for (int i = 0; i < 120; ++i) {
      out << "---\napiVersion: v1\nkind: Node\nmetadata: {name: n-" << i
          << "}\nstatus:\n  allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n";
    }
    // 200 bound pods, then 40 pending ones.
    for (int i = 0; i < 240; ++i) {
      out << "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-" << i
          << ", namespace: default}\nspec:\n";
      if (i < 200) out << "  nodeName: n-" << i % 120 << "\n";
      out << "  containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]\n";
    }
  }
  SimulateOptions o;
  o.manifest_paths = {cluster};
  o.config_path = Scenario("old.toml");
  o.compare_path = Scenario("old.toml");
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream first;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, first, err), 0) << err.str();
  std::vector<std::string> differing;
  const nlohmann::json comparison = nlohmann::json::parse(first.str());
  for (const nlohmann::json& p : comparison["pods"]) {
    if (p["differs"].get<bool>()) differing.push_back(p["name"].get<std::string>());
  }
  EXPECT_THAT(differing, ::testing::IsEmpty());
  std::ostringstream second;
  ASSERT_EQ(RunSimulate(o, second, err), 0) << err.str();
  EXPECT_TRUE(first.str() == second.str()) << "two runs of one input gave two comparisons";
}

TEST(SimulateCompareTest, EachConfigGetsTheKindsItReadsAndAKindNeitherReadsIsRefused) {
  framework::testing::TempDir dir;
  // Without its storage plugins the old config declares no storage kind.
  const std::string no_storage = (dir.path() / "no-storage.toml").string();
  std::ofstream(no_storage) << "[[profile]]\nname = \"default-scheduler\"\n"
                               "[profile.plugins.multi_point]\ndisabled = [{ name = "
                               "\"VolumeBinding\" }, { name = \"VolumeRestrictions\" }, "
                               "{ name = \"VolumeZone\" }, { name = \"NodeVolumeLimits\" }]\n";
  const std::string storage_class = (dir.path() / "class.yaml").string();
  std::ofstream(storage_class) << "apiVersion: storage.k8s.io/v1\nkind: StorageClass\n"
                                  "metadata: {name: fast}\nprovisioner: example.com/fast\n";
  const std::string widget = (dir.path() / "widget.yaml").string();
  std::ofstream(widget) << "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n";
  SimulateOptions o;
  o.manifest_paths = {Scenario("cluster.yaml"), storage_class};
  o.config_path = Scenario("new.toml");
  o.compare_path = no_storage;
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, out, err), 0) << err.str();
  EXPECT_EQ(nlohmann::json::parse(out.str())["summary"]["pods"], 7);

  o.manifest_paths = {Scenario("cluster.yaml"), widget};
  std::ostringstream refused_out;
  std::ostringstream refused_err;
  EXPECT_EQ(RunSimulate(o, refused_out, refused_err), 1);
  EXPECT_EQ(refused_out.str(), "");
  EXPECT_THAT(refused_err.str(), HasSubstr("(Widget w): kind: unsupported kind \"Widget\""));
}

TEST(SimulateCompareTest, BadInputIsRefusedWithAClearError) {
  framework::testing::TempDir dir;
  const std::string bad = (dir.path() / "bad.toml").string();
  std::ofstream(bad) << "[[profile]\nname = \"x\"\n";

  Outcome missing = Compare(Scenario("new.toml"), (dir.path() / "nope.toml").string());
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_THAT(missing.err, HasSubstr("schedctl simulate: --compare: "));
  EXPECT_THAT(missing.err, HasSubstr("nope.toml"));

  Outcome malformed = Compare(Scenario("new.toml"), bad);
  EXPECT_EQ(malformed.code, 1);
  EXPECT_EQ(malformed.out, "");
  EXPECT_THAT(malformed.err, HasSubstr("--compare: "));
  EXPECT_THAT(malformed.err, HasSubstr("bad.toml"));

  Outcome explain = Compare(Scenario("new.toml"), Scenario("old.toml"), "json", true);
  EXPECT_EQ(explain.code, 1);
  EXPECT_EQ(explain.out, "");
  EXPECT_THAT(explain.err, HasSubstr("--compare prints where two configs place each pod; "
                                     "--explain is a document of its own"));

  SimulateOptions batch;
  batch.explain = true;
  batch.output = "json";
  batch.compare_path = Scenario("old.toml");
  batch.plugin_dir = framework::testing::PluginDir();
  std::istringstream in(Scenario("cluster.yaml") + "\n");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunSimulateBatch(batch, in, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(), HasSubstr("--batch explains each file under one config; --compare"));
}

TEST(SimulateCompareTest, TheHtmlReportCarriesTheDiffWithBothExplanations) {
  framework::testing::TempDir temp;
  const std::filesystem::path pages = temp.path() / "pages";
  std::filesystem::create_directories(pages);
  std::ofstream(pages / "index.html")
      << "<html><head><title>schedhost</title><link rel=\"stylesheet\" href=\"app.css\">"
         "</head><body><script type=\"module\" src=\"app.js\"></script></body></html>\n";
  std::ofstream(pages / "app.css") << "\n";
  std::ofstream(pages / "app.js") << "\n";
  SimulateOptions o;
  o.manifest_paths = {Scenario("cluster.yaml")};
  o.config_path = Scenario("new.toml");
  o.compare_path = Scenario("old.toml");
  o.plugin_dir = framework::testing::PluginDir();
  o.ui_dir = pages;
  o.html = temp.path() / "report.html";
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("3 of 7 pods placed differently"));
  std::ifstream in(o.html);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string start = "globalThis.SCHEDHOST_REPORT = ";
  const size_t at = html.find(start);
  ASSERT_NE(at, std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(
      html.substr(at + start.size(), html.find(";</script>", at) - at - start.size()));
  EXPECT_EQ(report.value("title", ""), "schedctl simulate --compare: cluster.yaml");
  // The rest of the report is the new config's run, as `simulate --html` writes it.
  EXPECT_EQ(report["nodes"].size(), 2u);
  const nlohmann::json& compare = report["compare"];
  EXPECT_THAT(compare.value("old_config", ""), HasSubstr("old.toml"));
  ASSERT_EQ(compare["pods"].size(), 7u);
  size_t differ = 0;
  for (const nlohmann::json& p : compare["pods"]) {
    if (!p["differs"].get<bool>()) {
      EXPECT_TRUE(p["old"]["explanation"].is_null()) << p.dump();
      continue;
    }
    ++differ;
    EXPECT_EQ(p["plugin"], "NodeResourcesFit");
    // Each side's explanation has both nodes, and the node it chose.
    EXPECT_EQ(p["old"]["explanation"]["node"], "node-ssd") << p.dump();
    EXPECT_EQ(p["new"]["explanation"]["node"], "node-big") << p.dump();
    EXPECT_EQ(p["new"]["explanation"]["nodes"].size(), 2u) << p.dump();
  }
  EXPECT_EQ(differ, 3u);
}

TEST(SimulateCompareTest, TheBinaryComparesAndExitsOneOnABadConfig) {
  const std::string schedctl = (framework::testing::BinDir() / "schedctl").string();
  const auto good = framework::testing::RunCommand(
      schedctl + " simulate -f " + Scenario("cluster.yaml") + " --config " + Scenario("new.toml") +
      " --compare " + Scenario("old.toml") + " 2>&1");
  ASSERT_EQ(good.exit_code, 0) << good.output;
  EXPECT_THAT(good.output, HasSubstr("3 of 7 pods placed differently"));
  const auto bad = framework::testing::RunCommand(
      schedctl + " simulate -f " + Scenario("cluster.yaml") + " --compare " +
      Scenario("cluster.yaml") + " 2>&1");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("schedctl simulate: --compare: "));
}

// --- schedctl snapshot ---

kube::Reflector::Spec PodSpec() { return kube::Reflector::Pods(); }

TEST(SnapshotTest, TrimKeepsWhatSchedulingReadsAndTheManifestDecodes) {
  const nlohmann::json pod = nlohmann::json::parse(R"({
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
      "generation": 3, "managedFields": [{"manager": "kubectl"}],
      "labels": {"app": "web"},
      "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                           "uid": "rs-1", "controller": true}],
      "creationTimestamp": "2026-01-02T03:04:05Z"},
    "spec": {"nodeName": "node-1", "schedulerName": "default-scheduler",
      "containers": [{"name": "c", "image": "web:1", "env": [{"name": "PASSWORD", "value": "x"}],
        "command": ["run"], "resources": {"requests": {"cpu": "100m"}},
        "livenessProbe": {"httpGet": {"path": "/", "port": 80}}}],
      "ephemeralContainers": [{"name": "debug", "image": "busybox"}]},
    "status": {"phase": "Running", "podIP": "10.0.0.1", "nominatedNodeName": "node-2",
      "containerStatuses": [{"name": "c", "ready": true}]}
  })");
  const nlohmann::json t = TrimObject(pod, PodSpec());
  EXPECT_EQ(t["apiVersion"], "v1");
  EXPECT_EQ(t["kind"], "Pod");
  EXPECT_EQ(t["metadata"], nlohmann::json::parse(R"({"name": "web-1", "namespace": "shop",
      "uid": "u-1", "labels": {"app": "web"}, "creationTimestamp": "2026-01-02T03:04:05Z",
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                           "uid": "rs-1", "controller": true}]})"));
  EXPECT_EQ(t["spec"]["containers"], nlohmann::json::parse(R"([{"name": "c", "image": "web:1",
      "resources": {"requests": {"cpu": "100m"}}}])"));
  EXPECT_FALSE(t["spec"].contains("ephemeralContainers"));
  EXPECT_EQ(t["status"], nlohmann::json::parse(R"({"nominatedNodeName": "node-2"})"));

  const nlohmann::json node = nlohmann::json::parse(R"({
    "metadata": {"name": "node-1", "ownerReferences": [{"kind": "X", "name": "y"}],
                 "finalizers": ["f"]},
    "spec": {"podCIDR": "10.0.0.0/24", "providerID": "p", "unschedulable": true,
             "taints": [{"key": "k", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "4"}, "capacity": {"cpu": "4"},
      "addresses": [{"type": "InternalIP", "address": "10.1.1.1"}],
      "nodeInfo": {"kubeletVersion": "v1.37.2"}, "daemonEndpoints": {},
      "images": [{"names": ["web:1"], "sizeBytes": 1000}],
      "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "x",
                      "message": "kubelet is posting ready status"}]}
  })");
  const nlohmann::json n = TrimObject(node, kube::Reflector::Nodes());
  EXPECT_EQ(n["metadata"], nlohmann::json::parse(R"({"name": "node-1"})"));
  EXPECT_EQ(n["spec"], nlohmann::json::parse(R"({"unschedulable": true,
      "taints": [{"key": "k", "effect": "NoSchedule"}]})"));
  EXPECT_EQ(n["status"], nlohmann::json::parse(R"({"allocatable": {"cpu": "4"},
      "capacity": {"cpu": "4"}, "images": [{"names": ["web:1"], "sizeBytes": 1000}],
      "conditions": [{"type": "Ready", "status": "True"}]})"));

  // The trimmed objects, as the snapshot writes them, are a manifest simulate takes.
  const std::string manifest = "---\n" + ToYaml(n) + "---\n" + ToYaml(t);
  const std::vector<model::Object> objects = model::DecodeManifests(manifest, "snapshot");
  ASSERT_EQ(objects.size(), 2u);
  const auto& decoded = std::get<std::shared_ptr<const model::Pod>>(objects[1]);
  EXPECT_EQ(decoded->node_name(), "node-1");
  EXPECT_EQ(decoded->nominated_node_name(), "node-2");
}

struct SnapshotOutcome {
  int code = 0;
  std::string out;
  std::string err;
};

SnapshotOutcome Snapshot(const std::string& kubeconfig, const std::string& output) {
  SnapshotOptions o;
  o.kubeconfig = kubeconfig;
  o.output = output;
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  SnapshotOutcome r;
  r.code = RunSnapshot(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(SnapshotTest, ErrorsSayWhatIsWrongAndWriteNothing) {
  framework::testing::TempDir dir;
  const std::string output = (dir.path() / "cluster.yaml").string();
  // Nothing listens on port 1: connection refused at once.
  const std::string kubeconfig = (dir.path() / "kubeconfig").string();
  std::ofstream(kubeconfig) << R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: abc}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
)";

  SnapshotOutcome missing = Snapshot((dir.path() / "no-such-kubeconfig").string(), output);
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("schedctl snapshot: "));
  EXPECT_THAT(missing.err, HasSubstr("no-such-kubeconfig"));
  EXPECT_FALSE(std::filesystem::exists(output));

  SnapshotOutcome unreachable = Snapshot(kubeconfig, output);
  EXPECT_EQ(unreachable.code, 1);
  EXPECT_THAT(unreachable.err,
              HasSubstr("schedctl snapshot: cannot reach the API server https://127.0.0.1:1"));
  EXPECT_FALSE(std::filesystem::exists(output));

  SnapshotOutcome unwritable =
      Snapshot(kubeconfig, (dir.path() / "no-such-dir" / "cluster.yaml").string());
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_THAT(unwritable.err, HasSubstr("cannot write "));
  EXPECT_THAT(unwritable.err, HasSubstr("nothing was read from the cluster"));

  // A file that was there is left as it was; no temporary file stays behind.
  std::ofstream(output) << "before\n";
  EXPECT_EQ(Snapshot(kubeconfig, output).code, 1);
  std::ifstream in(output);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "before\n");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  EXPECT_EQ(files, 2u) << "kubeconfig and cluster.yaml only";
}

}  // namespace
}  // namespace schedhost::cli
