// `schedctl simulate --explain` (ExplainEachPod): one cycle per pending pod in input order,
// earlier fitting pods placed at their first best node, a pod that fits nowhere reporting its
// preemption without carrying it out, the gated pods, and the JSON shape docs/conformance.md
// describes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "host/cli/simulate.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"

namespace schedhost::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

nlohmann::json Explain(const std::string& manifests) {
  config::HostConfig cfg = config::ParseConfig("", "(built-in defaults)", {});
  std::vector<model::GenericObject> generic;
  const std::vector<model::Object> objects =
      model::DecodeManifests(manifests, "test.yaml", {}, &generic);
  nlohmann::ordered_json doc = ExplainEachPod(cfg, objects, framework::testing::PluginDir(),
                                              /*seed=*/0, generic);
  return nlohmann::json::parse(doc.dump());
}

std::string Node(const std::string& name, const std::string& cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + "}}\nstatus:\n  allocatable: {cpu: \"" +
         cpu + "\", memory: 8Gi, pods: \"10\"}\n---\n";
}

std::string Pod(const std::string& name, const std::string& cpu, const std::string& extra = "",
                const std::string& spec_extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {app: " + name + "}" +
         extra + "}\nspec:\n" + spec_extra +
         "  containers:\n  - name: c\n    image: busybox\n    resources: {requests: {cpu: \"" +
         cpu + "\"}}\n---\n";
}

const nlohmann::json& Entry(const nlohmann::json& doc, const std::string& name) {
  for (const auto& p : doc["pods"]) {
    if (p["name"] == name) return p;
  }
  static const nlohmann::json kNone;
  ADD_FAILURE() << "no entry for pod " << name << " in " << doc.dump();
  return kNone;
}

TEST(SimulateExplainTest, ScoresEveryFeasibleNodeAndPlacesOnTheFirstBest) {
  const nlohmann::json doc = Explain(Node("small", "2") + Node("big", "4") + Pod("a", "1"));
  const nlohmann::json& a = Entry(doc, "a");
  ASSERT_EQ(a["nodes"].size(), 2u);
  EXPECT_EQ(a["nodes"][0]["name"], "big");  // by name
  EXPECT_EQ(a["nodes"][0]["feasible"], true);
  EXPECT_FALSE(a["nodes"][0].contains("plugin"));
  ASSERT_EQ(a["scores"].size(), 2u);
  for (const auto& node : a["scores"]) {
    std::vector<std::string> plugins;
    int64_t total = 0;
    for (const auto& p : node["plugins"]) {
      plugins.push_back(p["plugin"]);
      total += p["weighted"].get<int64_t>();
      EXPECT_EQ(p["weighted"].get<int64_t>() % std::max<int64_t>(1, p["normalized"].get<int64_t>()),
                0);
    }
    EXPECT_THAT(plugins, ElementsAre("ImageLocality", "InterPodAffinity", "NodeAffinity",
                                     "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                                     "PodTopologySpread", "TaintToleration", "VolumeBinding"));
    EXPECT_EQ(node["total"].get<int64_t>(), total);
  }
  // LeastAllocated: the emptier node wins.
  EXPECT_THAT(a["best"], ElementsAre("big"));
  EXPECT_EQ(a["placed"], "big");
  EXPECT_FALSE(a.contains("message"));
  EXPECT_FALSE(a.contains("postFilter"));
}

TEST(SimulateExplainTest, AnEarlierPodThatFittedIsThereForTheNext) {
  const std::string anti =
      "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {matchLabels: {app: a}}\n        topologyKey: "
      "kubernetes.io/hostname\n";
  const nlohmann::json doc =
      Explain(Node("small", "2") + Node("big", "4") + Pod("a", "1") + Pod("b", "1", "", anti));
  const nlohmann::json& b = Entry(doc, "b");
  ASSERT_EQ(b["nodes"].size(), 2u);
  EXPECT_EQ(b["nodes"][0]["name"], "big");
  EXPECT_EQ(b["nodes"][0]["feasible"], false);
  EXPECT_EQ(b["nodes"][0]["plugin"], "InterPodAffinity");
  EXPECT_EQ(b["nodes"][0]["code"], "Unschedulable");
  EXPECT_THAT(b["nodes"][0]["reasons"],
              ElementsAre("node(s) didn't match pod anti-affinity rules"));
  // One feasible node: upstream takes it without scoring.
  EXPECT_FALSE(b.contains("scores"));
  EXPECT_THAT(b["best"], ElementsAre("small"));
}

TEST(SimulateExplainTest, AGatedPodGetsNoCycle) {
  const nlohmann::json doc = Explain(
      Node("n1", "2") + Pod("held", "1", "", "  schedulingGates: [{name: example.com/wait}]\n"));
  const nlohmann::json& held = Entry(doc, "held");
  EXPECT_EQ(held["gated"]["plugin"], "SchedulingGates");
  EXPECT_EQ(held["gated"]["code"], "UnschedulableAndUnresolvable");
  EXPECT_THAT(held["gated"]["reasons"], ElementsAre(HasSubstr("example.com/wait")));
  EXPECT_FALSE(held.contains("nodes"));
  EXPECT_FALSE(held.contains("best"));
}

TEST(SimulateExplainTest, PreemptionIsReportedNotCarriedOut) {
  const std::string classes =
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
      "value: 1000\n---\n"
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\n"
      "value: 10\n---\n";
  const nlohmann::json doc =
      Explain(classes + Node("n1", "1") +
              Pod("victim", "1", "", "  nodeName: n1\n  priorityClassName: low\n") +
              Pod("urgent", "1", "", "  priorityClassName: high\n") + Pod("later", "1"));
  const nlohmann::json& urgent = Entry(doc, "urgent");
  EXPECT_FALSE(urgent.contains("best"));
  EXPECT_FALSE(urgent.contains("placed"));
  EXPECT_THAT(urgent["message"].get<std::string>(),
              StartsWith("0/1 nodes are available: 1 Insufficient cpu."));
  EXPECT_EQ(urgent["postFilter"]["nominatedNode"], "n1");
  EXPECT_THAT(urgent["postFilter"]["victims"], ElementsAre("default/victim"));
  // The victim is still there for the next pod, and the preemptor holds no nomination.
  const nlohmann::json& later = Entry(doc, "later");
  EXPECT_EQ(later["nodes"][0]["plugin"], "NodeResourcesFit");
  EXPECT_EQ(later["postFilter"]["nominatedNode"], "");
  EXPECT_THAT(later["postFilter"]["victims"], ::testing::IsEmpty());
  // Only pending pods have entries.
  EXPECT_EQ(doc["pods"].size(), 2u);
}

TEST(SimulateExplainTest, PreFilterRejectionIsReportedOnceAndOnEveryNode) {
  // Two metadata.name requirements of one term that no node can meet together: NodeAffinity's
  // PreFilter rejects the pod before any Filter runs.
  const std::string conflict =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n        - matchFields:\n"
      "          - {key: metadata.name, operator: In, values: [n1]}\n"
      "          - {key: metadata.name, operator: In, values: [n2]}\n";
  const nlohmann::json doc =
      Explain(Node("n1", "2") + Node("n2", "2") + Pod("p", "1", "", conflict));
  const nlohmann::json& p = Entry(doc, "p");
  ASSERT_TRUE(p.contains("preFilter")) << p.dump();
  EXPECT_EQ(p["preFilter"]["plugin"], "NodeAffinity");
  EXPECT_EQ(p["preFilter"]["code"], "UnschedulableAndUnresolvable");
  ASSERT_EQ(p["nodes"].size(), 2u);
  for (const auto& node : p["nodes"]) {
    EXPECT_EQ(node["plugin"], p["preFilter"]["plugin"]);
    EXPECT_EQ(node["reasons"], p["preFilter"]["reasons"]);
  }
}

TEST(SimulateExplainTest, TheCommandWantsJson) {
  SimulateOptions o;
  o.manifest_paths = {"unused.yaml"};
  o.explain = true;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunSimulate(o, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("add -o json"));
  EXPECT_EQ(out.str(), "");
}

// --pod: the document keeps that pending pod's entry only (the pods before it still placed);
// a pod not in the input, or bound there, is refused naming it.
TEST(SimulateExplainTest, PodRestrictsTheDocumentToOnePendingPod) {
  framework::testing::TempDir temp;
  const std::filesystem::path file = temp.path() / "cluster.yaml";
  std::ofstream(file) << Node("n1", "2") + Pod("a", "1500m") + Pod("b", "1") +
                             Pod("bound", "100m", "", "  nodeName: n1\n");
  SimulateOptions o;
  o.manifest_paths = {file.string()};
  o.explain = true;
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  const auto run = [&o](const std::string& pod, std::string* err_text) {
    o.pod = pod;
    std::ostringstream out;
    std::ostringstream err;
    const int rc = RunSimulate(o, out, err);
    *err_text = err.str();
    return rc == 0 ? nlohmann::json::parse(out.str()) : nlohmann::json();
  };
  std::string err;
  const nlohmann::json b = run("b", &err);
  ASSERT_EQ(b["pods"].size(), 1u) << err;
  EXPECT_EQ(b["pods"][0]["name"], "b");
  // a (1.5 of n1's 2 cpu, less the bound pod's 0.1) was placed first: b fits nowhere.
  EXPECT_FALSE(b["pods"][0].contains("placed"));
  EXPECT_EQ(run("default/a", &err)["pods"][0]["placed"], "n1");

  EXPECT_TRUE(run("default/nope", &err).is_null());
  EXPECT_THAT(err, HasSubstr("--pod default/nope: no pod default/nope in the manifests"));
  EXPECT_TRUE(run("bound", &err).is_null());
  EXPECT_THAT(err, HasSubstr("pod default/bound is bound in the manifests (to n1)"));
  o.explain = false;
  EXPECT_TRUE(run("b", &err).is_null());
  EXPECT_THAT(err, HasSubstr("--pod picks the pod --explain explains"));
}

// --plugin-dir in place of the builtin directory: a profile that names a builtin plugin fails,
// and the error says the directory was replaced and how to add a library instead.
TEST(SimulateExplainTest, AReplacedBuiltinDirectoryIsNamedWhenABuiltinIsMissing) {
  framework::testing::TempDir temp;
  const std::filesystem::path file = temp.path() / "cluster.yaml";
  std::ofstream(file) << Node("n1", "2") + Pod("a", "1");
  const std::filesystem::path authors = temp.path() / "plugins";
  std::filesystem::create_directory(authors);
  SimulateOptions o;
  o.manifest_paths = {file.string()};
  o.plugin_dir = authors;
  o.replaced_plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunSimulate(o, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("is not known"));
  EXPECT_THAT(err.str(), HasSubstr("--plugin-dir " + authors.string() +
                                   " replaced the builtin plugin directory " +
                                   framework::testing::PluginDir()));
  EXPECT_THAT(err.str(), HasSubstr("[host] libraries"));
  // Without --plugin-dir there is nothing to add.
  EXPECT_EQ(PluginDirReplacedNote(authors, "", "plugin \"X\" is not known"), "");
  EXPECT_EQ(PluginDirReplacedNote(authors, "/usr/lib/schedhost/plugins", "other error"), "");
}

// A local volume with room for one claim, a claim bound to a volume on n2, a claim that does
// not exist: the volume plugins see the claims, volumes and classes given, as given (no PV
// controller), and a cycle's Reserve is not carried into the next: both pods whose claims
// could take the one free volume are explained as placed on its node.
TEST(SimulateExplainTest, ClaimsVolumesAndClassesAreSeenAsGiven) {
  const std::string local_class =
      "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
      "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n---\n";
  auto volume = [](const std::string& name, const std::string& node, const std::string& claim) {
    return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
           "}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n"
           "  storageClassName: local\n  local: {path: /mnt/" + name + "}\n" +
           (claim.empty() ? "" : "  claimRef: {namespace: default, name: " + claim + "}\n") +
           "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
           "        - {key: kubernetes.io/hostname, operator: In, values: [" + node + "]}\n"
           "status: {phase: " + (claim.empty() ? "Available" : "Bound") + "}\n---\n";
  };
  auto claim = [](const std::string& name, const std::string& volume_name) {
    // A claim the PV controller has bound carries bind-completed; without it, a claim naming
    // a volume counts as an unbound immediate one, as upstream counts it.
    return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
           ", namespace: default" +
           (volume_name.empty() ? "" : ", annotations: {pv.kubernetes.io/bind-completed: \"yes\"}") +
           "}\nspec:\n  accessModes: [ReadWriteOnce]\n"
           "  storageClassName: local\n  resources: {requests: {storage: 1Gi}}\n" +
           (volume_name.empty() ? "" : "  volumeName: " + volume_name + "\n") +
           (volume_name.empty() ? "" : "status: {phase: Bound}\n") + "---\n";
  };
  auto uses = [](const std::string& claim_name) {
    return "  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: " + claim_name +
           "}\n";
  };
  const nlohmann::json doc = Explain(
      Node("n1", "4") + Node("n2", "4") + Node("n3", "4") + local_class +
      volume("pv-n2", "n2", "bound") + volume("pv-n3", "n3", "") + claim("bound", "pv-n2") +
      claim("wffc-a", "") + claim("wffc-b", "") + Pod("uses-bound", "1", "", uses("bound")) +
      Pod("first", "1", "", uses("wffc-a")) + Pod("second", "1", "", uses("wffc-b")) +
      Pod("no-claim", "1", "", uses("missing")));

  const nlohmann::json& bound = Entry(doc, "uses-bound");
  EXPECT_EQ(bound["best"], nlohmann::json::array({"n2"}));
  EXPECT_EQ(bound["nodes"][0]["reasons"],
            nlohmann::json::array({"node(s) didn't match PersistentVolume's node affinity"}));
  EXPECT_EQ(bound["nodes"][0]["plugin"], "VolumeBinding");
  EXPECT_EQ(Entry(doc, "first")["placed"], "n3");
  EXPECT_EQ(Entry(doc, "second")["placed"], "n3");
  const nlohmann::json& none = Entry(doc, "no-claim");
  EXPECT_EQ(none["preFilter"]["reasons"],
            nlohmann::json::array({"persistentvolumeclaim \"missing\" not found"}));
  EXPECT_EQ(none["preFilter"]["code"], "UnschedulableAndUnresolvable");
}

}  // namespace
}  // namespace schedhost::cli
