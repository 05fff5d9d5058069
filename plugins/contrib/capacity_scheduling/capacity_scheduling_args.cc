// CapacityScheduling's inputs: no arguments in the profile, and ElasticQuota objects decoded
// with the SDK's ArgsReader, so every error names the object and the field.
#include <map>
#include <schedhost/names.hpp>
#include <string>
#include <utility>

#include "capacity_scheduling.h"

namespace schedhost::contrib {
namespace {

using ResourceAmounts = std::map<std::string, int64_t, std::less<>>;

// Amounts reads a resource list (resource name -> quantity: cpu in millicores, others in
// units); a `min` list is checked against the quota's `max`, read before it.
ResourceAmounts Amounts(ArgsReader& t, const ResourceAmounts* max) {
  ResourceAmounts out;
  for (const std::string& name : t.Keys()) {
    if (!names::IsQualifiedName(name)) t.Fail(name, "not a valid resource name");
    const QuantityUnit unit = name == "cpu" ? QuantityUnit::kMilli : QuantityUnit::kUnits;
    const int64_t amount = t.Quantity(name, {.unit = unit, .min = 0});
    if (max != nullptr) {
      auto it = max->find(name);
      if (it != max->end() && amount > it->second) {
        t.Fail(name, capacity::FormatQuantity(name, amount) + " is more than max." + name + " " +
                         capacity::FormatQuantity(name, it->second));
      }
    }
    out.emplace(name, amount);
  }
  return out;
}

}  // namespace

void ParseCapacitySchedulingArgs(const Args& args) {
  ArgsReader r(args, "CapacityScheduling");
  for (const std::string& key : r.Keys()) {
    if (key == "quotas" || key == "quota_file" || key == "quota_file_poll_ms") {
      r.Fail(key, "CapacityScheduling reads its quotas from ElasticQuota objects "
                   "(scheduling.x-k8s.io/v1alpha1, one per namespace: spec.min, spec.max); "
                   "apply them instead (plugins/contrib/capacity_scheduling/README.md)");
    }
  }
  r.Done();
}

capacity::QuotaSpec DecodeElasticQuota(const Args& object, std::string_view namespace_name) {
  capacity::QuotaSpec q;
  q.namespace_name = namespace_name;
  ArgsReader spec = ArgsReader::Object(object["spec"], "spec");
  spec.Table("max", [&](ArgsReader& t) { q.max = Amounts(t, nullptr); });
  spec.Table("min", [&](ArgsReader& t) { q.min = Amounts(t, &q.max); });
  return q;
}

}  // namespace schedhost::contrib
