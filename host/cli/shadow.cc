// `schedctl shadow status|start|stop|promote`: the shadow profiles of schedhostd.
#include <google/protobuf/util/json_util.h>

#include <iomanip>
#include <iostream>
#include <sstream>

#include "host/cli/commands.h"
#include "host/cli/printers.h"

namespace schedhost::cli {
namespace {

// Share renders `part` of `whole` as "N (P%)".
std::string Share(uint64_t part, uint64_t whole) {
  std::ostringstream out;
  out << part;
  if (whole != 0) {
    out << " (" << std::fixed << std::setprecision(1)
        << 100.0 * static_cast<double>(part) / static_cast<double>(whole) << "%)";
  }
  return out.str();
}

std::string Micros(double seconds, uint64_t calls) {
  if (calls == 0) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(seconds < 1e-4 ? 2 : 0) << seconds * 1e6 << "us ("
      << calls << ")";
  return out.str();
}

std::string Seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  if (s < 1) {
    out << s * 1e3 << "ms";
  } else {
    out << s << "s";
  }
  return out.str();
}

void PrintSummary(const v1::ShadowResponse& r, std::ostream& out) {
  Table table({"SHADOW", "OF", "STATE", "COMPARED", "SKIPPED", "ERRORS", "SAME NODE",
               "SAME FEASIBLE", "SAME BEST", "SAME POSTFILTER", "CPU"});
  for (const v1::ShadowStatus& s : r.shadows()) {
    table.AddRow({s.profile(), s.shadow_of(), s.state(), std::to_string(s.compared()),
                  std::to_string(s.skipped()), std::to_string(s.errors()),
                  Share(s.agree_node(), s.compared()), Share(s.agree_feasibility(), s.compared()),
                  Share(s.agree_best(), s.compared()), Share(s.agree_postfilter(), s.compared()),
                  Seconds(s.cpu_seconds())});
  }
  table.Print(out);
  for (const v1::ShadowStatus& s : r.shadows()) {
    if (!s.reason().empty()) out << s.profile() << ": " << s.reason() << "\n";
  }
}

void PrintDetails(const v1::ShadowStatus& s, std::ostream& out) {
  out << "\nShadow " << s.profile() << " (of " << s.shadow_of() << ", generation "
      << s.generation() << "): " << s.disagreements() << " disagreement"
      << (s.disagreements() == 1 ? "" : "s") << " in " << s.compared() << " compared pods\n";
  if (s.recent_size() > 0) {
    out << "\nDisagreements (newest first):\n";
    Table table({"NAMESPACE", "POD", "LIVE", "SHADOW", "POINT", "PLUGIN", "WHY"});
    for (const v1::ShadowDisagreement& d : s.recent()) {
      std::string shadow = OrNone(d.shadow_node());
      if (d.shadow_best_size() > 1) shadow += " (best of " + std::to_string(d.shadow_best_size()) + ")";
      std::string live = OrNone(d.live_node());
      if (d.point() == "PostFilter") {
        live = "nominated " + OrNone(d.live_nominated());
        shadow = "nominated " + OrNone(d.shadow_nominated());
      }
      table.AddRow({d.namespace_(), d.name(), live, shadow, d.point(), OrNone(d.plugin()),
                    d.detail()});
    }
    table.Print(out);
  }
  if (s.latency_size() > 0) {
    out << "\nPlugin latency (mean per call, calls):\n";
    Table table({"EXTENSION POINT", "PLUGIN", "SHADOW", "LIVE"});
    for (const v1::ShadowLatency& l : s.latency()) {
      table.AddRow({l.extension_point(), l.plugin(),
                    Micros(l.shadow_mean_seconds(), l.shadow_calls()),
                    Micros(l.live_mean_seconds(), l.live_calls())});
    }
    table.Print(out);
  }
}

}  // namespace

int RunShadow(Client& client, const ShadowOptions& options, std::ostream& out, std::ostream& err) {
  if (options.output != "" && options.output != "json") {
    err << "error: shadow status -o takes json\n";
    return 1;
  }
  if (options.action == "promote" && options.profile.empty()) {
    err << "error: shadow promote needs the shadow profile's name\n";
    return 1;
  }
  if (!client.Connect(err)) return 1;
  v1::ShadowRequest request;
  request.set_profile(options.profile);
  if (options.action == "promote") {
    v1::ReloadResponse response;
    grpc::Status status =
        client.admin().PromoteShadow(client.Context().get(), request, &response);
    if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/PromoteShadow");
    if (!response.ok()) {
      err << "error: " << response.message() << "\n";
      return 1;
    }
    out << response.message() << "\n";
    return 0;
  }
  v1::ShadowResponse response;
  grpc::Status status;
  std::string method;
  if (options.action == "start") {
    status = client.admin().StartShadow(client.Context().get(), request, &response);
    method = "StartShadow";
  } else if (options.action == "stop") {
    status = client.admin().StopShadow(client.Context().get(), request, &response);
    method = "StopShadow";
  } else {
    status = client.admin().GetShadows(client.Context().get(), request, &response);
    method = "GetShadows";
  }
  if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/" + method);
  if (options.output == "json") {
    std::string json;
    google::protobuf::util::JsonPrintOptions print;
    print.add_whitespace = true;
    print.always_print_primitive_fields = true;
    print.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(response, &json, print).ok()) {
      err << "error: cannot render the answer as JSON\n";
      return 1;
    }
    out << json;
    return 0;
  }
  if (!response.message().empty()) out << response.message() << "\n";
  if (response.shadows_size() == 0) {
    err << "No shadow profiles: add a [[profile]] with shadow_of to the config and reload.\n";
    return 0;
  }
  if (options.action != "status") return 0;
  PrintSummary(response, out);
  if (!options.profile.empty()) {
    for (const v1::ShadowStatus& s : response.shadows()) PrintDetails(s, out);
  }
  return 0;
}

}  // namespace schedhost::cli
