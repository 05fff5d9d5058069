#include <schedhost/names.hpp>
#include <set>
#include <string>

#include "capacity_scheduling.h"

namespace schedhost::contrib {
namespace {

constexpr std::string_view kPrefix = "plugin_config.CapacityScheduling";

[[noreturn]] void Fail(const Args& at, const std::string& field, const std::string& msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) +
                  (field.empty() ? "" : "." + field) + ": " + msg);
}

// Amounts reads a table of resource name -> quantity (string, or an integer).
std::map<std::string, int64_t, std::less<>> Amounts(const Args& at, const std::string& field) {
  std::map<std::string, int64_t, std::less<>> out;
  if (!at.present()) return out;
  if (at.kind() != SCHEDHOST_CONFIG_TABLE) {
    Fail(at, field,
         "expected a table of resource = quantity (e.g. { cpu = \"2\", memory = "
         "\"4Gi\" })");
  }
  for (size_t i = 0; i < at.size(); ++i) {
    std::string_view name;
    Args v = at.At(i, &name);
    const std::string where = field + "." + std::string(name);
    if (!names::IsQualifiedName(name)) Fail(v, where, "not a valid resource name");
    std::string text;
    if (v.kind() == SCHEDHOST_CONFIG_STRING) {
      text = v.String("");
    } else if (v.kind() == SCHEDHOST_CONFIG_INT) {
      text = std::to_string(v.Int(0));
    } else {
      Fail(v, where, "expected a quantity such as \"2\", \"500m\" or \"4Gi\"");
    }
    std::string error;
    std::optional<int64_t> q = capacity::ParseQuantity(name, text, &error);
    if (!q) Fail(v, where, error);
    out.emplace(std::string(name), *q);
  }
  return out;
}

capacity::QuotaSpec Quota(const Args& at, const std::string& field) {
  if (at.kind() != SCHEDHOST_CONFIG_TABLE) {
    Fail(at, field, "expected a table { namespace = \"...\", min = {...}, max = {...} }");
  }
  for (size_t i = 0; i < at.size(); ++i) {
    std::string_view key;
    Args child = at.At(i, &key);
    if (key != "namespace" && key != "min" && key != "max") {
      Fail(child, field + "." + std::string(key), "unknown key (known keys: namespace, min, max)");
    }
  }
  capacity::QuotaSpec q;
  const Args ns = at["namespace"];
  if (!ns.present()) Fail(at, field + ".namespace", "missing (the namespace the quota is for)");
  if (ns.kind() != SCHEDHOST_CONFIG_STRING) Fail(ns, field + ".namespace", "expected a string");
  q.namespace_name = ns.String("");
  if (!names::IsDnsSubdomain(q.namespace_name)) {
    Fail(ns, field + ".namespace", "\"" + q.namespace_name + "\" is not a valid namespace name");
  }
  q.min = Amounts(at["min"], field + ".min");
  q.max = Amounts(at["max"], field + ".max");
  for (const auto& [name, min] : q.min) {
    auto it = q.max.find(name);
    if (it != q.max.end() && min > it->second) {
      Fail(at["min"][name], field + ".min." + name,
           capacity::FormatQuantity(name, min) + " is more than max." + name + " " +
               capacity::FormatQuantity(name, it->second));
    }
  }
  return q;
}

}  // namespace

CapacitySchedulingArgs ParseCapacitySchedulingArgs(const Args& args) {
  CapacitySchedulingArgs out;
  if (!args.present()) return out;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) Fail(args, "", "expected a table");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    Args child = args.At(i, &key);
    if (key == "quota_file") {
      // A watched file needs a TOML reader inside the plugin; the SDK offers none yet.
      Fail(child, "quota_file",
           "quota_file is not implemented; give the quotas inline under `quotas`");
    }
    if (key != "quotas") Fail(child, std::string(key), "unknown key (known keys: quotas)");
  }
  const Args quotas = args["quotas"];
  if (!quotas.present()) return out;
  if (quotas.kind() != SCHEDHOST_CONFIG_ARRAY) {
    Fail(quotas, "quotas", "expected an array of tables (quotas = [ { namespace = ... } ])");
  }
  std::set<std::string, std::less<>> namespaces;
  for (size_t i = 0; i < quotas.size(); ++i) {
    const std::string field = "quotas[" + std::to_string(i) + "]";
    capacity::QuotaSpec q = Quota(quotas.At(i), field);
    if (!namespaces.insert(q.namespace_name).second) {
      Fail(quotas.At(i)["namespace"], field + ".namespace",
           "namespace \"" + q.namespace_name + "\" already has a quota");
    }
    out.quotas.push_back(std::move(q));
  }
  return out;
}

}  // namespace schedhost::contrib
