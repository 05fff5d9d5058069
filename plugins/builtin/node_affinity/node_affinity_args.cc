// NodeAffinity's arguments: reading added_affinity from plugin_config.NodeAffinity with
// upstream's validation of node selector requirements (operators, value counts, label syntax),
// and the owned ABI form of the terms it yields.
#include <algorithm>
#include <charconv>
#include <schedhost/names.hpp>
#include <string>
#include <utility>

#include "node_affinity.h"

namespace schedhost::plugins {
namespace {

bool IsInteger(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

struct OperatorName {
  std::string_view name;
  int32_t op;
};
constexpr OperatorName kOperators[] = {
    {"In", SCHEDHOST_OP_IN},         {"NotIn", SCHEDHOST_OP_NOT_IN},
    {"Exists", SCHEDHOST_OP_EXISTS}, {"DoesNotExist", SCHEDHOST_OP_DOES_NOT_EXIST},
    {"Gt", SCHEDHOST_OP_GT},         {"Lt", SCHEDHOST_OP_LT},
};

// ReadRequirement reads { key, operator, values }; `field` selects matchFields' rules (only
// metadata.name, In/NotIn, exactly one value) over matchExpressions' (label key and values).
NodeSelectorTerms::OwnedRequirement ReadRequirement(const Host& host, ArgsReader& at, bool field) {
  const std::string key = at.RequiredString("key");
  const std::string op_name = at.RequiredString("operator");
  const std::vector<std::string> values = at.Strings(
      "values", field ? StringOptions{}
                      : StringOptions{.valid = names::IsLabelValue, .what = "a valid label value"});
  NodeSelectorTerms::OwnedRequirement req;
  const auto* found = std::find_if(std::begin(kOperators), std::end(kOperators),
                                   [&](const OperatorName& o) { return o.name == op_name; });
  const bool known = found != std::end(kOperators);
  if (field) {
    if (key != "metadata.name") {
      at.Fail("key", "\"" + key + "\": the only supported field is metadata.name");
    }
    if (!known || (found->op != SCHEDHOST_OP_IN && found->op != SCHEDHOST_OP_NOT_IN)) {
      at.Fail("operator", "\"" + op_name + "\" is not a valid field selector operator (In, NotIn)");
    }
    if (values.size() != 1) at.Fail("values", "must have one element");
    req.key = SCHEDHOST_ID_FIELD_METADATA_NAME;
  } else {
    if (!names::IsQualifiedName(key)) {
      at.Fail("key", "\"" + key +
                         "\" is not a valid label key (optional DNS subdomain prefix and '/', then "
                         "at most 63 alphanumerics, '-', '_' or '.', starting and ending "
                         "alphanumeric)");
    }
    if (!known) {
      at.Fail("operator", "\"" + op_name +
                              "\" is not a valid node selector operator (In, NotIn, Exists, "
                              "DoesNotExist, Gt, Lt)");
    }
    switch (found->op) {
      case SCHEDHOST_OP_IN:
      case SCHEDHOST_OP_NOT_IN:
        if (values.empty())
          at.Fail("values", "for 'In', 'NotIn' operators, values set can't be empty");
        break;
      case SCHEDHOST_OP_EXISTS:
      case SCHEDHOST_OP_DOES_NOT_EXIST:
        if (!values.empty())
          at.Fail("values", "values set must be empty for exists and does not exist");
        break;
      default:
        if (values.size() != 1)
          at.Fail("values", "for 'Gt', 'Lt' operators, exactly one value is required");
        if (!IsInteger(values[0]))
          at.Fail("values", "for 'Gt', 'Lt' operators, the value must be an integer");
        break;
    }
    req.key = host.Intern(key);
  }
  req.op = found->op;
  for (const auto& v : values) req.values.push_back(host.Intern(v));
  return req;
}

NodeSelectorTerms::OwnedTerm ReadTerm(const Host& host, ArgsReader& at) {
  NodeSelectorTerms::OwnedTerm term;
  at.Tables("match_expressions", [&](ArgsReader& req) {
    term.match_expressions.push_back(ReadRequirement(host, req, false));
  });
  at.Tables("match_fields", [&](ArgsReader& req) {
    term.match_fields.push_back(ReadRequirement(host, req, true));
  });
  return term;
}

// ReadAdded reads added_affinity: a required block of node selector terms and weighted
// preferred terms.
void ReadAdded(const Host& host, ArgsReader& added, NodeAffinityArgs& out) {
  out.has_required =
      added.Table("required_during_scheduling_ignored_during_execution", [&](ArgsReader& required) {
        std::vector<NodeSelectorTerms::OwnedTerm> terms;
        required.RequiredTables("node_selector_terms",
                                [&](ArgsReader& term) { terms.push_back(ReadTerm(host, term)); });
        out.required = NodeSelectorTerms(std::move(terms));
      });
  std::vector<NodeSelectorTerms::OwnedTerm> preferred;
  added.Tables("preferred_during_scheduling_ignored_during_execution", [&](ArgsReader& item) {
    const int64_t weight = item.RequiredInt("weight", {.min = 1, .max = 100});
    NodeSelectorTerms::OwnedTerm term;
    item.RequiredTable("preference",
                       [&](ArgsReader& preference) { term = ReadTerm(host, preference); });
    term.weight = static_cast<int32_t>(weight);
    preferred.push_back(std::move(term));
  });
  if (!preferred.empty()) out.preferred = NodeSelectorTerms(std::move(preferred));
}

std::vector<schedhost_requirement> AbiRequirements(
    const std::vector<NodeSelectorTerms::OwnedRequirement>& reqs) {
  std::vector<schedhost_requirement> out;
  out.reserve(reqs.size());
  for (const auto& r : reqs) out.push_back({r.key, r.op, r.values.data(), r.values.size()});
  return out;
}

}  // namespace

NodeSelectorTerms::NodeSelectorTerms(std::vector<OwnedTerm> terms) : owned_(std::move(terms)) {
  // Every pointer below goes into a heap buffer owned by this object; moving the object keeps
  // those buffers where they are.
  for (const auto& t : owned_) {
    abi_exprs_.push_back(AbiRequirements(t.match_expressions));
    abi_fields_.push_back(AbiRequirements(t.match_fields));
  }
  for (size_t i = 0; i < owned_.size(); ++i) {
    abi_terms_.push_back(
        {abi_exprs_[i].data(), abi_exprs_[i].size(), abi_fields_[i].data(), abi_fields_[i].size()});
    weights_.push_back(owned_[i].weight);
  }
}

NodeAffinityArgs ParseNodeAffinityArgs(const Host& host, const Args& args) {
  NodeAffinityArgs out;
  ArgsReader r(args, "NodeAffinity");
  r.Table("added_affinity", [&](ArgsReader& added) { ReadAdded(host, added, out); });
  r.Done();
  return out;
}

}  // namespace schedhost::plugins
