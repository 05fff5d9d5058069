// `schedctl explain pod NAME`: Admin.Explain as two tables over the same nodes — each Filter
// plugin's verdict (`ok`, `x <reason>`), then, for the feasible nodes, each plugin's weighted
// score and the node's total — after the pod's node, nomination and last failure message.
#include <algorithm>
#include <iostream>

#include "host/cli/commands.h"
#include "host/cli/printers.h"
#include "host/cli/resources.h"

namespace schedhost::cli {
namespace {

std::string Verdict(const v1::PluginVerdict& v) {
  const std::string& code = v.filter_code();
  if (code == "Success") return "ok";
  if (code == "Skip") return "skip";
  return "x " + (v.filter_reason().empty() ? code : v.filter_reason());
}

// Columns returns the plugins in first-seen order that satisfy `keep`.
template <class Keep>
std::vector<std::string> Columns(const v1::ExplainResponse& r, Keep keep) {
  std::vector<std::string> names;
  for (const v1::NodeExplanation& node : r.nodes()) {
    for (const v1::PluginVerdict& v : node.plugins()) {
      if (keep(v) && std::find(names.begin(), names.end(), v.plugin()) == names.end()) {
        names.push_back(v.plugin());
      }
    }
  }
  return names;
}

const v1::PluginVerdict* Find(const v1::NodeExplanation& node, const std::string& plugin) {
  for (const v1::PluginVerdict& v : node.plugins()) {
    if (v.plugin() == plugin) return &v;
  }
  return nullptr;
}

}  // namespace

int RunExplain(Client& client, const std::string& resource, const std::string& name,
               const ScopeOptions& scope, std::ostream& out, std::ostream& err) {
  const Resource* r = FindResourceOrReport(resource, err);
  if (r == nullptr) return 1;
  if (r->kind != v1::POD) {
    err << "error: schedctl explains pods only (the scheduler places pods)\n";
    return 1;
  }
  if (scope.all_namespaces) {
    err << "error: a resource cannot be retrieved by name across all namespaces\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  v1::ExplainRequest request;
  request.set_namespace_(NamespaceOf(scope));
  request.set_name(name);
  v1::ExplainResponse e;
  grpc::Status status = client.admin().Explain(client.Context().get(), request, &e);
  if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/Explain");

  Table head({"Pod:", NamespaceOf(scope) + "/" + name});
  head.AddRow({"Profile:", OrNone(e.profile())});
  head.AddRow({"Attempts:", std::to_string(e.attempts())});
  head.AddRow({"Node:", OrNone(e.node())});
  head.AddRow({"Nominated Node:", OrNone(e.nominated_node())});
  head.AddRow({"Message:", OrNone(e.message())});
  head.Print(out);
  if (e.nodes().empty()) {
    out << "\nNo per-node results: no scheduling cycle has run for the pod yet, or its record was "
           "dropped (the host keeps the most recent ones only).\n";
    return 0;
  }

  const std::vector<std::string> filters =
      Columns(e, [](const v1::PluginVerdict& v) { return !v.filter_code().empty(); });
  // A plugin without a Filter verdict is there for its score; one that scored anything too.
  const std::vector<std::string> scorers = Columns(e, [](const v1::PluginVerdict& v) {
    return v.filter_code().empty() || v.score() != 0 || v.normalized_score() != 0 ||
           v.weighted_score() != 0;
  });

  out << "\nFilter:\n";
  std::vector<std::string> header = {"NODE"};
  header.insert(header.end(), filters.begin(), filters.end());
  header.emplace_back("FEASIBLE");
  Table filter_table(header);
  for (const v1::NodeExplanation& node : e.nodes()) {
    std::vector<std::string> row = {node.node()};
    for (const std::string& plugin : filters) {
      const v1::PluginVerdict* v = Find(node, plugin);
      row.push_back(v == nullptr || v->filter_code().empty() ? "-" : Verdict(*v));
    }
    if (node.feasible()) {
      row.emplace_back("yes");
    } else {
      row.push_back(node.reason().empty() ? "no" : "no (" + node.reason() + ")");
    }
    filter_table.AddRow(std::move(row));
  }
  filter_table.Print(out);
  if (e.nodes_not_evaluated() > 0) {
    out << e.nodes_not_evaluated()
        << " more node(s) not evaluated (enough feasible nodes were found first, or the "
           "nominated node was taken).\n";
  }

  out << "\nScore (weighted):\n";
  header = {"NODE"};
  header.insert(header.end(), scorers.begin(), scorers.end());
  header.emplace_back("TOTAL");
  Table score_table(header);
  for (const v1::NodeExplanation& node : e.nodes()) {
    if (!node.feasible()) continue;
    std::vector<std::string> row = {node.node()};
    for (const std::string& plugin : scorers) {
      const v1::PluginVerdict* v = Find(node, plugin);
      row.push_back(v == nullptr ? "-" : std::to_string(v->weighted_score()));
    }
    row.push_back(std::to_string(node.total_score()));
    score_table.AddRow(std::move(row));
  }
  if (score_table.empty()) {
    out << "No feasible node.\n";
  } else {
    score_table.Print(out);
  }
  return 0;
}

}  // namespace schedhost::cli
