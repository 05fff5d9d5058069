// Output in kubectl's shapes: tables (columns padded with three spaces, upper-case headers),
// ages as kubectl's HumanDuration ("45s", "3m20s", "5h", "12d"), objects as indented JSON or
// YAML (several wrapped in a `kind: List`), and `-o name` lines (`pod/web-1`).
//
//   Table t({"NAME", "STATUS"});
//   t.AddRow({"web-1", "Pending"});
//   t.Print(std::cout);
#pragma once

#include <cstdint>
#include <grpcpp/support/status.h>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "schedhost/v1/cluster.pb.h"

namespace schedhost::cli {

// Json keeps keys in the order the server wrote them (kubectl's order).
using Json = nlohmann::ordered_json;

// Table is a kubectl-style table: left-aligned columns, three spaces apart.
class Table {
 public:
  // Table starts with the header row.
  explicit Table(std::vector<std::string> header);
  // AddRow appends a row (missing cells print empty).
  void AddRow(std::vector<std::string> row);
  // Print writes the header and rows, trailing blanks trimmed.
  void Print(std::ostream& out) const;
  // empty is true when no row was added.
  bool empty() const { return rows_.size() <= 1; }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// HumanDuration renders a duration in seconds as kubectl's AGE column does.
std::string HumanDuration(int64_t seconds);

// Age is HumanDuration from metadata.creationTimestamp to now; "<unknown>" without one.
std::string Age(const Json& manifest);

// ParseManifest parses an object's JSON manifest; throws std::runtime_error naming the object.
Json ParseManifest(const v1::Object& object);

// TypeNameOf is kubectl's type prefix of `object`: "pod", or for an object of a declared kind
// its kind in lower case with its group ("ticket.example.schedhost.io").
std::string TypeNameOf(const v1::Object& object);

// IsUnknownResource is true for the server's refusal of a resource name no plugin declares.
bool IsUnknownResource(const grpc::Status& status);

// ReportUnknownResource writes kubectl's "doesn't have a resource type" error for `name`, with
// the server's list of declared kinds.
int ReportUnknownResource(std::string_view name, const grpc::Status& status, std::ostream& err);

// ToYaml renders `value` as block YAML the way kubectl prints it (strings quoted only where a
// plain scalar would read as something else).
std::string ToYaml(const Json& value);

// OrNone is `value`, or "<none>" when empty (kubectl's placeholder).
std::string OrNone(const std::string& value);

// PrintObjects writes `objects` as `format` ("json", "yaml" or "name"): one object alone when
// `single`, else a v1 List with items and metadata.resourceVersion `list_version` (the version
// to watch from; "" when unknown); returns false for an unknown format.
bool PrintObjects(const std::vector<v1::Object>& objects, bool single, const std::string& format,
                  const std::string& list_version, std::ostream& out);

}  // namespace schedhost::cli
