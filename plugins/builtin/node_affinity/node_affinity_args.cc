// NodeAffinity's arguments: reading added_affinity from plugin_config.NodeAffinity with
// upstream's validation of node selector requirements (operators, value counts, label syntax),
// and the owned ABI form of the terms it yields.
#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <string>
#include <utility>

#include <schedhost/names.hpp>

#include "node_affinity.h"

namespace schedhost::plugins {
namespace {

constexpr std::string_view kPrefix = "plugin_config.NodeAffinity.";

[[noreturn]] void Fail(const Args& at, const std::string& path, std::string_view msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) + path + ": " +
                  std::string(msg));
}

using names::IsLabelValue;

// IsLabelKey: label keys are qualified names.
bool IsLabelKey(std::string_view s) { return names::IsQualifiedName(s); }

bool IsInteger(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

void CheckKeys(const Args& table, const std::string& path,
               std::initializer_list<std::string_view> known) {
  for (size_t i = 0; i < table.size(); ++i) {
    std::string_view key;
    Args child = table.At(i, &key);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      Fail(child, path + "." + std::string(key), "unknown key (known keys: " + list + ")");
    }
  }
}

void ExpectKind(const Args& at, const std::string& path, int32_t kind, std::string_view what) {
  if (at.kind() != kind) Fail(at, path, "expected " + std::string(what));
}

std::string ReadString(const Args& at, const std::string& path) {
  ExpectKind(at, path, SCHEDHOST_CONFIG_STRING, "a string");
  return at.String("");
}

std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

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
NodeSelectorTerms::OwnedRequirement ReadRequirement(const Host& host, const Args& at,
                                                    const std::string& path, bool field) {
  ExpectKind(at, path, SCHEDHOST_CONFIG_TABLE, "a { key, operator, values } table");
  CheckKeys(at, path, {"key", "operator", "values"});
  if (!at["key"].present()) Fail(at, path + ".key", "is required");
  if (!at["operator"].present()) Fail(at, path + ".operator", "is required");
  const std::string key = ReadString(at["key"], path + ".key");
  const std::string op_name = ReadString(at["operator"], path + ".operator");
  std::vector<std::string> values;
  const Args vals = at["values"];
  if (vals.present()) {
    ExpectKind(vals, path + ".values", SCHEDHOST_CONFIG_ARRAY, "an array of strings");
    for (size_t i = 0; i < vals.size(); ++i)
      values.push_back(ReadString(vals.At(i), Idx(path + ".values", i)));
  }
  NodeSelectorTerms::OwnedRequirement req;
  const auto* found = std::find_if(std::begin(kOperators), std::end(kOperators),
                                   [&](const OperatorName& o) { return o.name == op_name; });
  const bool known = found != std::end(kOperators);
  if (field) {
    if (key != "metadata.name") {
      Fail(at["key"], path + ".key", "\"" + key + "\": the only supported field is metadata.name");
    }
    if (!known || (found->op != SCHEDHOST_OP_IN && found->op != SCHEDHOST_OP_NOT_IN)) {
      Fail(at["operator"], path + ".operator",
           "\"" + op_name + "\" is not a valid field selector operator (In, NotIn)");
    }
    if (values.size() != 1) Fail(at, path + ".values", "must have one element");
    req.key = SCHEDHOST_ID_FIELD_METADATA_NAME;
  } else {
    if (!IsLabelKey(key)) {
      Fail(at["key"], path + ".key",
           "\"" + key +
               "\" is not a valid label key (optional DNS subdomain prefix and '/', then "
               "at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric)");
    }
    if (!known) {
      Fail(at["operator"], path + ".operator",
           "\"" + op_name +
               "\" is not a valid node selector operator (In, NotIn, Exists, "
               "DoesNotExist, Gt, Lt)");
    }
    switch (found->op) {
      case SCHEDHOST_OP_IN:
      case SCHEDHOST_OP_NOT_IN:
        if (values.empty())
          Fail(at, path + ".values", "for 'In', 'NotIn' operators, values set can't be empty");
        break;
      case SCHEDHOST_OP_EXISTS:
      case SCHEDHOST_OP_DOES_NOT_EXIST:
        if (!values.empty())
          Fail(at["values"], path + ".values",
               "values set must be empty for exists and does not exist");
        break;
      default:
        if (values.size() != 1)
          Fail(at, path + ".values", "for 'Gt', 'Lt' operators, exactly one value is required");
        if (!IsInteger(values[0])) {
          Fail(at["values"], path + ".values",
               "for 'Gt', 'Lt' operators, the value must be an integer");
        }
        break;
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (!IsLabelValue(values[i])) {
        Fail(vals.At(i), Idx(path + ".values", i),
             "\"" + values[i] + "\" is not a valid label value");
      }
    }
    req.key = host.Intern(key);
  }
  req.op = found->op;
  for (const auto& v : values) req.values.push_back(host.Intern(v));
  return req;
}

NodeSelectorTerms::OwnedTerm ReadTerm(const Host& host, const Args& at, const std::string& path) {
  ExpectKind(at, path, SCHEDHOST_CONFIG_TABLE, "a { match_expressions, match_fields } table");
  CheckKeys(at, path, {"match_expressions", "match_fields"});
  NodeSelectorTerms::OwnedTerm term;
  for (bool field : {false, true}) {
    const std::string key = field ? "match_fields" : "match_expressions";
    const Args list = at[key];
    if (!list.present()) continue;
    std::string list_path = path;
    list_path.append(".").append(key);
    ExpectKind(list, list_path, SCHEDHOST_CONFIG_ARRAY, "an array of requirements");
    auto& out = field ? term.match_fields : term.match_expressions;
    for (size_t i = 0; i < list.size(); ++i) {
      out.push_back(ReadRequirement(host, list.At(i), Idx(list_path, i), field));
    }
  }
  return term;
}

NodeSelectorTerms ReadRequired(const Host& host, const Args& at, const std::string& path) {
  ExpectKind(at, path, SCHEDHOST_CONFIG_TABLE, "a table with node_selector_terms");
  CheckKeys(at, path, {"node_selector_terms"});
  const Args list = at["node_selector_terms"];
  const std::string p = path + ".node_selector_terms";
  if (!list.present()) Fail(at, p, "is required");
  ExpectKind(list, p, SCHEDHOST_CONFIG_ARRAY, "an array of node selector terms");
  std::vector<NodeSelectorTerms::OwnedTerm> terms;
  for (size_t i = 0; i < list.size(); ++i) terms.push_back(ReadTerm(host, list.At(i), Idx(p, i)));
  return NodeSelectorTerms(std::move(terms));
}

NodeSelectorTerms ReadPreferred(const Host& host, const Args& list, const std::string& path) {
  ExpectKind(list, path, SCHEDHOST_CONFIG_ARRAY, "an array of { weight, preference } tables");
  std::vector<NodeSelectorTerms::OwnedTerm> terms;
  for (size_t i = 0; i < list.size(); ++i) {
    const Args item = list.At(i);
    const std::string p = Idx(path, i);
    ExpectKind(item, p, SCHEDHOST_CONFIG_TABLE, "a { weight, preference } table");
    CheckKeys(item, p, {"weight", "preference"});
    if (!item["weight"].present()) Fail(item, p + ".weight", "is required");
    if (!item["preference"].present()) Fail(item, p + ".preference", "is required");
    ExpectKind(item["weight"], p + ".weight", SCHEDHOST_CONFIG_INT, "an integer");
    const int64_t weight = item["weight"].Int(0);
    if (weight < 1 || weight > 100) {
      Fail(item["weight"], p + ".weight", std::to_string(weight) + " not in valid range [1, 100]");
    }
    NodeSelectorTerms::OwnedTerm term = ReadTerm(host, item["preference"], p + ".preference");
    term.weight = static_cast<int32_t>(weight);
    terms.push_back(std::move(term));
  }
  return NodeSelectorTerms(std::move(terms));
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
  if (!args.present()) return out;
  ExpectKind(args, "", SCHEDHOST_CONFIG_TABLE, "a table");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    Args child = args.At(i, &key);
    if (key != "added_affinity")
      Fail(child, std::string(key), "unknown key (known keys: added_affinity)");
  }
  const Args added = args["added_affinity"];
  if (!added.present()) return out;
  const std::string p = "added_affinity";
  ExpectKind(added, p, SCHEDHOST_CONFIG_TABLE, "a node affinity table");
  constexpr std::string_view kRequired = "required_during_scheduling_ignored_during_execution";
  constexpr std::string_view kPreferred = "preferred_during_scheduling_ignored_during_execution";
  CheckKeys(added, p, {kRequired, kPreferred});
  if (added[kRequired].present()) {
    out.has_required = true;
    out.required = ReadRequired(host, added[kRequired], p + "." + std::string(kRequired));
  }
  if (added[kPreferred].present()) {
    out.preferred = ReadPreferred(host, added[kPreferred], p + "." + std::string(kPreferred));
  }
  return out;
}

}  // namespace schedhost::plugins
