// `schedctl simulate` end to end: the demo cluster's JSON (every pod's node, status and
// message), determinism per seed, the table, and malformed or refused manifests (exit code 1,
// the document index and field path, nothing printed on stdout), the --html report, and
// --batch (many files through one process, each as its own run would go). Two tests run the
// real binary.
#include "host/cli/simulate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "host/framework/testing/command.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"

namespace schedhost::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string SourceDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return dir ? dir : ".";
}

std::string DemoCluster() { return SourceDir() + "/config/examples/demo-cluster.yaml"; }

struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

Outcome Simulate(const std::vector<std::string>& files, const std::string& output = "json",
                 uint64_t seed = 0) {
  SimulateOptions o;
  o.manifest_paths = files;
  o.output = output;
  o.seed = seed;
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  Outcome r;
  r.code = RunSimulate(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// TempFile writes `text` to a file in the test's temporary directory and returns its path.
std::string TempFile(const std::string& name, const std::string& text) {
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("schedhost_simulate_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

struct Expected {
  const char* ns;
  const char* name;
  std::optional<std::string> node;
  const char* status;
  const char* message;
};

TEST(SimulateTest, DemoClusterPlacesEveryPodAsUpstreamWould) {
  Outcome r = Simulate({DemoCluster()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 2u) << "exactly pods and evicted";
  EXPECT_EQ(j["evicted"], nlohmann::json::array());
  const std::vector<Expected> want = {
      {"data", "postgres-0", "zone-a-1", "Bound", ""},
      {"data", "redis-0", "zone-b-1", "Bound", ""},
      // Created first but low priority: api-critical took zone-a-2 before it was tried.
      {"default", "batch-report", std::nullopt, "Pending",
       "0/6 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) "
       "were unschedulable, 2 Insufficient cpu, 2 node(s) didn't match Pod's node "
       "affinity/selector. preemption: 0/6 nodes are available: 2 No preemption victims found "
       "for incoming pod, 4 Preemption is not helpful for scheduling."},
      {"default", "web-1", "zone-c-ssd", "Bound", ""},
      {"default", "web-2", "zone-b-1", "Bound", ""},
      // The web pods' zone spread: one per zone.
      {"default", "web-3", "zone-a-1", "Bound", ""},
      {"default", "api-critical", "zone-a-2", "Bound", ""},
      {"ml", "training", "zone-c-gpu", "Bound", ""},
      {"default", "ssd-cache", "zone-c-ssd", "Bound", ""},
      {"default", "zone-b-worker", "zone-b-1", "Bound", ""},
      {"data", "postgres-1", "zone-b-1", "Bound", ""},
      {"edge", "ingress-1", "zone-a-2", "Bound", ""},
      {"edge", "ingress-2", "zone-a-1", "Bound", ""},
      {"edge", "ingress-3", std::nullopt, "Pending",
       "0/6 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) "
       "were unschedulable, 2 node(s) didn't have free ports for the requested pod ports, 2 "
       "node(s) didn't match Pod's node affinity/selector. preemption: 0/6 nodes are available: "
       "2 No preemption victims found for incoming pod, 4 Preemption is not helpful for "
       "scheduling."},
      // Where its claim's local volume is, though the scores would prefer other nodes.
      {"data", "metrics-db-0", "zone-c-ssd", "Bound", ""},
      {"ml", "huge", std::nullopt, "Pending",
       "0/6 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were "
       "unschedulable, 4 Insufficient cpu, 4 Insufficient memory. preemption: 0/6 nodes are "
       "available: 6 Preemption is not helpful for scheduling."},
      {"default", "gated-job", std::nullopt, "Pending",
       "waiting for scheduling gates: [example.com/approval]"},
  };
  const nlohmann::json& pods = j["pods"];
  ASSERT_EQ(pods.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const nlohmann::json& p = pods[i];
    std::vector<std::string> keys;
    for (auto it = p.begin(); it != p.end(); ++it) keys.push_back(it.key());
    EXPECT_THAT(keys, ::testing::UnorderedElementsAre("namespace", "name", "node", "nominatedNode",
                                                      "status", "message"));
    EXPECT_EQ(p["namespace"], want[i].ns);
    EXPECT_EQ(p["name"], want[i].name);
    if (want[i].node) {
      EXPECT_EQ(p["node"], *want[i].node);
    } else {
      EXPECT_TRUE(p["node"].is_null());
    }
    EXPECT_TRUE(p["nominatedNode"].is_null());
    EXPECT_EQ(p["status"], want[i].status);
    EXPECT_EQ(p["message"], want[i].message);
  }
  // Keys come out in the documented order.
  EXPECT_THAT(r.out, HasSubstr("\"namespace\": \"data\",\n      \"name\": \"postgres-0\",\n"
                               "      \"node\": \"zone-a-1\",\n      \"nominatedNode\": null,\n"
                               "      \"status\": \"Bound\",\n      \"message\": \"\""));
}

TEST(SimulateTest, SameSeedSameAnswer) {
  const std::string first = Simulate({DemoCluster()}, "json", 42).out;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Simulate({DemoCluster()}, "json", 42).out, first);
}

TEST(SimulateTest, TableLooksLikeKubectl) {
  Outcome r = Simulate({DemoCluster()}, "table");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header, "NAMESPACE   NAME            STATUS    NODE         NOMINATED   MESSAGE");
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "data        postgres-0      Bound     zone-a-1     <none>");
  int rows = 1;
  bool saw_gate = false;
  while (std::getline(lines, line)) {
    ++rows;
    if (line.find("gated-job") != std::string::npos) {
      EXPECT_EQ(line,
                "default     gated-job       Pending   <none>       <none>      waiting for "
                "scheduling gates: [example.com/approval]");
      saw_gate = true;
    }
  }
  EXPECT_EQ(rows, 17);
  EXPECT_TRUE(saw_gate);
}

TEST(SimulateTest, MalformedManifestSchedulesNothing) {
  const std::string bad = TempFile("bad.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: lots}}
)");
  Outcome r = Simulate({bad});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "") << "nothing scheduled, nothing printed";
  EXPECT_EQ(r.err, "schedctl simulate: " + bad +
                       ": document 2 (Pod default/p): spec.containers[0].resources.requests.cpu: "
                       "invalid quantity \"lots\": unexpected character 'l' at offset 0\n");
}

TEST(SimulateTest, BadInputsAreRefusedWithTheReason) {
  struct Case {
    std::string name;
    std::vector<std::string> files;
    std::string output;
    std::string err_contains;
  };
  const std::string unknown_class = TempFile("class.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: nope
  containers: [{name: c, image: busybox}]
)");
  const std::string not_yaml = TempFile("syntax.yaml", "apiVersion: v1\nkind: [Pod\n");
  const std::string unknown_kind =
      TempFile("kind.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n");
  const std::vector<Case> cases = {
      {"missing file",
       {"/nonexistent/cluster.yaml"},
       "json",
       "/nonexistent/cluster.yaml: cannot read file"},
      {"bad output", {DemoCluster()}, "yaml", "-o must be json or table, not \"yaml\""},
      {"unknown priority class",
       {unknown_class},
       "json",
       "object 1 of the input (Pod default/p) was refused"},
      {"yaml syntax", {not_yaml}, "json", "syntax.yaml"},
      {"unknown kind", {unknown_kind}, "json", "Service"},
      {"no files", {}, "json", "no manifests"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Outcome r = Simulate(c.files, c.output);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("schedctl simulate: "));
    EXPECT_THAT(r.err, HasSubstr(c.err_contains));
  }
}

TEST(SimulateTest, SeveralFilesAreOneInputInOrder) {
  const std::string nodes = TempFile("nodes.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: only}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
)");
  const std::string pods = TempFile("pods.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: first}
spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: second, namespace: other}
spec:
  schedulerName: someone-else
  containers: [{name: c, image: busybox}]
)");
  // Pods before the node in the input: the node is still applied first.
  Outcome r = Simulate({pods, nodes});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pods"][0]["node"], "only");
  EXPECT_EQ(j["pods"][1]["status"], "Pending");
  EXPECT_EQ(j["pods"][1]["message"],
            "no profile is named \"someone-else\" (spec.schedulerName): this host does not "
            "schedule the pod");
}

TEST(SimulateTest, TheBinaryExitsNonZeroOnBadManifests) {
  const std::filesystem::path schedctl = framework::testing::BinDir() / "schedctl";
  if (!std::filesystem::exists(schedctl)) GTEST_SKIP() << "schedctl not built at " << schedctl;
  const std::string bad = TempFile("bin_bad.yaml",
                                   "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                   "spec: {priority: high}\n");
  const auto refused =
      framework::testing::RunCommand(schedctl.string() + " simulate -f " + bad + " 2>&1");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.output, HasSubstr("document 1 (Pod default/p): spec.priority"));
  const auto ok =
      framework::testing::RunCommand(schedctl.string() + " simulate -o json -f " + DemoCluster());
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(nlohmann::json::parse(ok.output)["pods"].size(), 17u);
}

// ExplainAlone is `simulate --explain -o json -f path` on its own: the document, or
// {"error": what it printed on stderr}.
nlohmann::json ExplainAlone(const std::string& path) {
  SimulateOptions o;
  o.manifest_paths = {path};
  o.output = "json";
  o.explain = true;
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  if (RunSimulate(o, out, err) != 0) {
    std::string message = err.str();
    if (!message.empty() && message.back() == '\n') message.pop_back();
    return {{"error", message}};
  }
  return nlohmann::json::parse(out.str());
}

struct BatchOutcome {
  int code = 0;
  std::vector<std::string> lines;
  std::string err;
};

BatchOutcome Batch(const std::vector<std::string>& paths, SimulateOptions o = {}) {
  o.output = "json";
  o.explain = true;
  o.plugin_dir = framework::testing::PluginDir();
  std::string input;
  for (const std::string& p : paths) input += p + "\n";
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  BatchOutcome r;
  r.code = RunSimulateBatch(o, in, out, err);
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) r.lines.push_back(line);
  r.err = err.str();
  return r;
}

// One process explains every input on a host of its own: each conformance case, the demo
// cluster and two clusters with the same node and pod names but different capacities, each
// after a different predecessor (the list, then the list backwards), give exactly the
// documents of separate runs; refused inputs get their error line and the batch goes on.
TEST(SimulateTest, ABatchGivesEachFileTheDocumentOfItsOwnRun) {
  std::vector<std::string> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(SourceDir() + "/tests/conformance/cases")) {
    if (std::filesystem::exists(entry.path() / "cluster.yaml")) {
      paths.push_back((entry.path() / "cluster.yaml").string());
    }
  }
  ASSERT_GE(paths.size(), 3u);
  std::sort(paths.begin(), paths.end());
  paths.push_back(DemoCluster());
  const std::string pods =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: first}\nspec:\n  containers:\n"
      "  - {name: c, image: x, resources: {requests: {cpu: \"2\"}}}\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: second}\nspec:\n  containers:\n"
      "  - {name: c, image: x, resources: {requests: {cpu: \"2\"}}}\n";
  auto node = [](const char* cpu) {
    return std::string("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n") +
           "  allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"10\"}\n---\n";
  };
  const size_t small = paths.size();
  paths.push_back(TempFile("batch_small.yaml", node("3") + pods));
  paths.push_back(TempFile("batch_big.yaml", node("8") + pods));
  paths.push_back(TempFile("batch_bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                             "spec: {priority: high}\n"));
  paths.push_back("/nonexistent/cluster.yaml");
  paths.push_back("");
  for (size_t i = paths.size(); i-- > 0;) paths.push_back(paths[i]);

  const BatchOutcome r = Batch(paths);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.lines.size(), paths.size()) << r.err;
  for (size_t i = 0; i < paths.size(); ++i) {
    const nlohmann::json got = nlohmann::json::parse(r.lines[i]);
    if (paths[i].empty()) {
      EXPECT_EQ(got, nlohmann::json({{"error", "schedctl simulate: an empty line names no "
                                               "manifest file"}}));
      continue;
    }
    EXPECT_EQ(got, ExplainAlone(paths[i])) << "line " << i + 1 << ": " << paths[i];
  }
  // The two clusters that share names: a fresh host each, whatever came before.
  const nlohmann::json small_doc = nlohmann::json::parse(r.lines[small]);
  EXPECT_EQ(small_doc["pods"][0]["placed"], "n1");
  EXPECT_FALSE(small_doc["pods"][1].contains("placed")) << small_doc.dump();
  const nlohmann::json big_doc = nlohmann::json::parse(r.lines[small + 1]);
  EXPECT_EQ(big_doc["pods"][1]["placed"], "n1") << big_doc.dump();
  EXPECT_THAT(r.lines[small + 2], HasSubstr("spec.priority"));
}

TEST(SimulateTest, ABatchWantsExplainJsonAndNoFiles) {
  SimulateOptions o;
  o.manifest_paths = {DemoCluster()};
  BatchOutcome r = Batch({DemoCluster()}, o);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.lines.empty());
  EXPECT_THAT(r.err, HasSubstr("--batch reads the manifest files from stdin"));
  o = {};
  o.config_path = "/nonexistent/config.yaml";
  r = Batch({DemoCluster()}, o);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.lines.empty());
  EXPECT_THAT(r.err, StartsWith("schedctl simulate: "));
}

// The binary under --batch: one line per input on stdout, nothing else there, exit 0 at the
// end of stdin.
TEST(SimulateTest, TheBinaryAnswersABatchALineEach) {
  const std::filesystem::path schedctl = framework::testing::BinDir() / "schedctl";
  if (!std::filesystem::exists(schedctl)) GTEST_SKIP() << "schedctl not built at " << schedctl;
  const auto r = framework::testing::RunCommand(
      "printf '%s\\n%s\\n%s\\n' " + DemoCluster() + " /nonexistent.yaml " + DemoCluster() +
      " | " + schedctl.string() + " simulate --explain -o json --batch");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::vector<nlohmann::json> docs;
  for (std::string line; std::getline(lines, line);) docs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(docs.size(), 3u) << r.output;
  EXPECT_EQ(docs[0], ExplainAlone(DemoCluster()));
  EXPECT_THAT(docs[1].value("error", ""), HasSubstr("/nonexistent.yaml"));
  EXPECT_EQ(docs[2], docs[0]);
}

// ReportData is the JSON `--html` inlined as globalThis.SCHEDHOST_REPORT.
nlohmann::json ReportData(const std::string& html) {
  const std::string start = "globalThis.SCHEDHOST_REPORT = ";
  const size_t at = html.find(start);
  if (at == std::string::npos) return nullptr;
  const size_t end = html.find(";</script>", at);
  return nlohmann::json::parse(html.substr(at + start.size(), end - at - start.size()));
}

TEST(SimulateTest, HtmlReportInlinesThePagesAndCarriesEveryView) {
  framework::testing::TempDir temp;
  const std::filesystem::path pages = temp.path() / "pages";
  std::filesystem::create_directories(pages);
  std::ofstream(pages / "index.html")
      << "<!doctype html><html><head><title>schedhost</title>"
         "<link rel=\"stylesheet\" href=\"app.css\"></head>"
         "<body><div id=\"app\"></div><script type=\"module\" src=\"app.js\"></script></body>"
         "</html>\n";
  std::ofstream(pages / "app.css") << "body { color: black; }\n";
  // A script that quotes its own closing tag must not end the element it is inlined in.
  std::ofstream(pages / "app.js") << "const s = \"</script>\"; render(globalThis.SCHEDHOST_REPORT);\n";
  SimulateOptions o;
  o.manifest_paths = {DemoCluster()};
  o.plugin_dir = framework::testing::PluginDir();
  o.ui_dir = pages;
  o.html = temp.path() / "report.html";
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("NAMESPACE"));  // the table is still printed
  std::ifstream in(o.html);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(html, HasSubstr("<title>schedctl simulate: demo-cluster.yaml</title>"));
  EXPECT_THAT(html, HasSubstr("<style>body { color: black; }\n</style>"));
  EXPECT_THAT(html, HasSubstr("const s = \"<\\/script>\"; render("));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("src=\"app.js\"")));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("href=\"app.css\"")));

  const nlohmann::json report = ReportData(html);
  ASSERT_TRUE(report.is_object()) << html.substr(0, 2000);
  EXPECT_EQ(report.value("title", ""), "schedctl simulate: demo-cluster.yaml");
  EXPECT_GT(report.value("generated_unix_seconds", int64_t{0}), 1'700'000'000);
  EXPECT_EQ(report["nodes"].size(), 6u);
  // The same outcome as -o json: its Bound pods are Scheduled, its Pending ones wait in the
  // queue; the two pods bound in the input were not bound by the run.
  const nlohmann::json placements = nlohmann::json::parse(Simulate({DemoCluster()}).out);
  int bound = 0;
  int waiting = 0;
  for (const auto& p : placements["pods"]) (p.value("status", "") == "Bound" ? bound : waiting)++;
  ASSERT_GT(waiting, 0);
  EXPECT_EQ(report["phases"],
            nlohmann::json({{"Scheduled", bound}, {"Pending", waiting}, {"Terminating", 0}}));
  EXPECT_EQ(report["pods"].size(), placements["pods"].size());
  EXPECT_EQ(report["queue"].size(), static_cast<size_t>(waiting));
  EXPECT_EQ(report["stats"].value("bound_pods", ""), std::to_string(bound - 2));
  EXPECT_EQ(report["profiles"]["profiles"][0].value("scheduler_name", ""), "default-scheduler");
  EXPECT_FALSE(report["plugins"]["plugins"].empty());
  // Every pending pod has its explanation; those that were tried have every node in it and the
  // queue's message.
  for (const auto& pending : report["queue"]) {
    const std::string key = pending.value("namespace", "") + "/" + pending.value("name", "");
    ASSERT_TRUE(report["explanations"].contains(key)) << key;
    if (pending.value("where", "") == "gated") continue;
    const auto& e = report["explanations"][key];
    EXPECT_EQ(e["nodes"].size(), 6u) << key;
    EXPECT_EQ(e.value("message", ""), pending.value("message", "")) << key;
    EXPECT_THAT(e.value("message", ""), StartsWith("0/6 nodes are available")) << key;
  }
}

TEST(SimulateTest, HtmlWithoutPagesOrWithExplainChangesNothing) {
  framework::testing::TempDir temp;
  SimulateOptions o;
  o.manifest_paths = {DemoCluster()};
  o.plugin_dir = framework::testing::PluginDir();
  o.ui_dir = temp.path() / "none";
  o.html = temp.path() / "report.html";
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunSimulate(o, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr((temp.path() / "none" / "index.html").string()));
  EXPECT_THAT(err.str(), HasSubstr("--ui-dir"));
  EXPECT_FALSE(std::filesystem::exists(o.html));
  // Pages, but a place the report cannot be written: the reason is given.
  o.ui_dir = temp.path() / "pages";
  std::filesystem::create_directories(o.ui_dir);
  std::ofstream(o.ui_dir / "index.html")
      << "<link href=\"app.css\"><script src=\"app.js\"></script>\n";
  std::ofstream(o.ui_dir / "app.css") << "\n";
  std::ofstream(o.ui_dir / "app.js") << "\n";
  o.html = temp.path() / "no-such-dir" / "report.html";
  err.str("");
  EXPECT_EQ(RunSimulate(o, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("cannot write " + o.html.string() + ": No such file"));
  o.explain = true;
  o.output = "json";
  err.str("");
  EXPECT_EQ(RunSimulate(o, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("--html writes the report of a simulation"));
}

}  // namespace
}  // namespace schedhost::cli
