// Tables, ages, JSON and YAML output.
#include "host/cli/printers.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <regex>
#include <stdexcept>

#include "host/cli/resources.h"
#include "host/model/meta.h"

namespace schedhost::cli {
namespace {

// LooksLikeOtherType is true when a plain scalar `s` would be read back by a YAML 1.1 or 1.2
// parser as a null, bool, number or timestamp rather than as this string.
bool LooksLikeOtherType(const std::string& s) {
  static const std::regex kSpecial(
      "~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|"
      "OFF|y|Y|n|N|"
      "[-+]?(\\.[0-9]+|[0-9][0-9_]*(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?|"
      "[-+]?0[xXoObB][0-9a-fA-F_]+|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)|"
      "[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*");
  return std::regex_match(s, kSpecial);
}

bool NeedsQuotes(const std::string& s) {
  if (s.empty() || LooksLikeOtherType(s)) return true;
  if (s.front() == ' ' || s.back() == ' ') return true;
  if (std::string_view("-?:,[]{}#&*!|>'\"%@`").find(s.front()) != std::string_view::npos) {
    return true;
  }
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos || s.back() == ':') {
    return true;
  }
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string Scalar(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    // A JSON string literal is a valid YAML double-quoted scalar.
    return NeedsQuotes(s) ? Json(s).dump() : s;
  }
  return v.dump();  // numbers, booleans, null
}

void WriteYaml(const Json& v, int indent, std::string& out);

// WriteEntries writes the members of an object; the first one continues the current line when
// `inline_first` (an object inside a sequence item).
void WriteEntries(const Json& obj, int indent, bool inline_first, std::string& out) {
  bool first = true;
  for (const auto& [key, value] : obj.items()) {
    if (!(first && inline_first)) out.append(static_cast<size_t>(indent), ' ');
    first = false;
    out += NeedsQuotes(key) ? Json(key).dump() : key;
    out += ':';
    if (value.is_object() && !value.empty()) {
      out += '\n';
      WriteYaml(value, indent + 2, out);
    } else if (value.is_array() && !value.empty()) {
      out += '\n';
      WriteYaml(value, indent, out);  // kubectl does not indent a sequence under its key
    } else {
      out += ' ';
      out += value.is_object() ? "{}" : value.is_array() ? "[]" : Scalar(value);
      out += '\n';
    }
  }
}

void WriteYaml(const Json& v, int indent, std::string& out) {
  if (v.is_object() && !v.empty()) {
    WriteEntries(v, indent, false, out);
    return;
  }
  if (v.is_array() && !v.empty()) {
    for (const Json& item : v) {
      out.append(static_cast<size_t>(indent), ' ');
      out += "- ";
      if (item.is_object() && !item.empty()) {
        WriteEntries(item, indent + 2, true, out);
      } else if (item.is_array() && !item.empty()) {
        out += '\n';
        WriteYaml(item, indent + 2, out);
      } else {
        out += item.is_object() ? "{}" : item.is_array() ? "[]" : Scalar(item);
        out += '\n';
      }
    }
    return;
  }
  out.append(static_cast<size_t>(indent), ' ');
  out += v.is_object() ? "{}" : v.is_array() ? "[]" : Scalar(v);
  out += '\n';
}

}  // namespace

Table::Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

void Table::AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

void Table::Print(std::ostream& out) const {
  std::vector<size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      line += cell;
      if (i + 1 < widths.size()) line.append(widths[i] - cell.size() + 3, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

std::string HumanDuration(int64_t seconds) {
  // A clock a second apart from the server's still reads as "now", as kubectl allows.
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return std::to_string(seconds) + "s";
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return std::to_string(minutes) + "m" + (s == 0 ? "" : std::to_string(s) + "s");
  }
  if (minutes < 180) return std::to_string(minutes) + "m";
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return std::to_string(hours) + "h" + (m == 0 ? "" : std::to_string(m) + "m");
  }
  if (hours < 48) return std::to_string(hours) + "h";
  const int64_t days = hours / 24;
  if (days < 8) {
    const int64_t h = hours % 24;
    return std::to_string(days) + "d" + (h == 0 ? "" : std::to_string(h) + "h");
  }
  if (days < 730) return std::to_string(days) + "d";
  const int64_t years = days / 365;
  if (years < 8) {
    const int64_t d = days % 365;
    return std::to_string(years) + "y" + (d == 0 ? "" : std::to_string(d) + "d");
  }
  return std::to_string(years) + "y";
}

std::string Age(const Json& manifest) {
  const Json& meta = manifest.contains("metadata") ? manifest["metadata"] : Json::object();
  if (!meta.contains("creationTimestamp") || !meta["creationTimestamp"].is_string()) {
    return "<unknown>";
  }
  std::optional<int64_t> created =
      model::ParseRfc3339(meta["creationTimestamp"].get_ref<const std::string&>());
  if (!created) return "<unknown>";
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  return HumanDuration((now_ns - *created) / 1'000'000'000);
}

Json ParseManifest(const v1::Object& object) {
  Json j = Json::parse(object.manifest(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw std::runtime_error("the server sent a manifest for " + object.name() +
                             " that is not a JSON object");
  }
  return j;
}

std::string ToYaml(const Json& value) {
  std::string out;
  WriteYaml(value, 0, out);
  return out;
}

std::string OrNone(const std::string& value) { return value.empty() ? "<none>" : value; }

bool PrintObjects(const std::vector<v1::Object>& objects, bool single, const std::string& format,
                  const std::string& list_version, std::ostream& out) {
  if (format == "name") {
    for (const v1::Object& o : objects)
      out << TypeNameOf(o) << "/" << o.name() << "\n";
    return true;
  }
  if (format != "json" && format != "yaml") return false;
  Json doc;
  if (single && objects.size() == 1) {
    doc = ParseManifest(objects.front());
  } else {
    Json items = Json::array();
    for (const v1::Object& o : objects) items.push_back(ParseManifest(o));
    doc = Json{{"apiVersion", "v1"},
               {"items", std::move(items)},
               {"kind", "List"},
               {"metadata", Json{{"resourceVersion", list_version}}}};
  }
  if (format == "json") {
    out << doc.dump(4) << "\n";
  } else {
    out << ToYaml(doc);
  }
  return true;
}

std::string TypeNameOf(const v1::Object& object) {
  if (object.kind() != v1::DECLARED) return TypeName(ResourceOf(object.kind()));
  std::string kind;
  std::string api_version;
  try {
    const Json manifest = ParseManifest(object);
    kind = manifest.value("kind", std::string());
    api_version = manifest.value("apiVersion", std::string());
  } catch (const std::exception&) {
    return object.resource();
  }
  return KindTypeName(kind, api_version);
}

bool IsUnknownResource(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
         (status.error_message().rfind("resource: ", 0) == 0 ||
          status.error_message().rfind("resources[", 0) == 0);
}

int ReportUnknownResource(std::string_view name, const grpc::Status& status, std::ostream& err) {
  std::string detail = status.error_message();
  if (const size_t at = detail.find("declared: "); at != std::string::npos) {
    detail = "declared: " + detail.substr(at + 10);
  }
  err << "error: the server doesn't have a resource type \"" << name << "\" (schedhost serves "
      << KnownResources() << "; " << detail << ")\n";
  return 1;
}

}  // namespace schedhost::cli
