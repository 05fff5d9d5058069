// Name syntax checks and the shared metadata / selector / resource checks.
#include "host/model/validation.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

#include "host/model/validation_util.h"

namespace schedhost::model {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

constexpr std::string_view kLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr std::string_view kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kNamePartMessage =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// The name part of a qualified name and a non-empty label value share one syntax.
bool IsNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> CheckDnsLabel(std::string_view s) {
  if (s.size() > 63) return "must be no more than 63 characters";
  if (!IsDnsLabel(s)) return std::string(kLabelMessage);
  return std::nullopt;
}

std::optional<std::string> CheckDnsSubdomain(std::string_view s) {
  if (s.size() > 253) return "must be no more than 253 characters";
  if (s.empty()) return std::string(kSubdomainMessage);
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    // Each dot-separated part is a label, but the 63-character label limit does not apply.
    bool ok = !part.empty() && IsLowerAlnum(part.front()) && IsLowerAlnum(part.back());
    for (char c : part) ok = ok && (IsLowerAlnum(c) || c == '-');
    if (!ok) return std::string(kSubdomainMessage);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return std::nullopt;
}

std::optional<std::string> CheckQualifiedName(std::string_view s) {
  std::string_view name = s;
  size_t slash = s.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (auto why = CheckDnsSubdomain(prefix)) return "prefix part " + *why;
    if (name.find('/') != std::string_view::npos) {
      return "a qualified name must be a name with an optional DNS subdomain prefix and '/'";
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  if (!IsNamePart(name)) return "name part " + std::string(kNamePartMessage);
  return std::nullopt;
}

std::optional<std::string> CheckLabelValue(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.size() > 63) return "must be no more than 63 characters";
  if (!IsNamePart(s)) return "a valid label value " + std::string(kNamePartMessage);
  return std::nullopt;
}

namespace internal {

void Fail(const std::string& path, std::string reason) {
  throw ValidationFailure{FieldError{path, std::move(reason)}};
}

std::string Child(const std::string& path, std::string_view field) {
  return path.empty() ? std::string(field) : path + "." + std::string(field);
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string Quote(std::string_view s) {
  constexpr size_t kMaxShown = 80;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMaxShown) out += "...";
  return out + "\"";
}

void CheckListSize(const std::string& path, size_t n, size_t max) {
  if (n > max) {
    Fail(path,
         "too many items: " + std::to_string(n) + " (the limit is " + std::to_string(max) + ")");
  }
}

void CheckSubdomainField(const std::string& path, std::string_view value) {
  if (auto why = CheckDnsSubdomain(value))
    Fail(path, "invalid value " + Quote(value) + ": " + *why);
}

void CheckDnsLabelField(const std::string& path, std::string_view value) {
  if (auto why = CheckDnsLabel(value)) Fail(path, "invalid value " + Quote(value) + ": " + *why);
}

void CheckQualifiedField(const std::string& path, std::string_view value) {
  if (auto why = CheckQualifiedName(value)) {
    Fail(path, "invalid value " + Quote(value) + ": " + *why);
  }
}

void CheckLabelValueField(const std::string& path, std::string_view value) {
  if (auto why = CheckLabelValue(value)) Fail(path, "invalid value " + Quote(value) + ": " + *why);
}

namespace {

void CheckLabelPairs(const std::string& path, const Labels& labels) {
  CheckListSize(path, labels.size(), kMaxLabels);
  for (const auto& [key, value] : labels) {
    if (auto why = CheckQualifiedName(key)) {
      Fail(Child(path, key), "invalid label key " + Quote(key) + ": " + *why);
    }
    CheckLabelValueField(Child(path, key), value);
  }
}

void CheckRequirement(const std::string& path, const SelectorRequirement& req, bool node) {
  CheckQualifiedField(Child(path, "key"), req.key);
  CheckListSize(Child(path, "values"), req.values.size());
  const std::string op_path = Child(path, "operator");
  switch (req.op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (req.values.empty()) {
        Fail(Child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'");
      }
      if (!node) {
        for (size_t i = 0; i < req.values.size(); ++i) {
          CheckLabelValueField(Index(Child(path, "values"), i), req.values[i]);
        }
      }
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!req.values.empty()) {
        Fail(Child(path, "values"),
             "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      }
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      if (!node)
        Fail(op_path, "not a valid selector operator: \"" + std::string(ToString(req.op)) + "\"");
      if (req.values.size() != 1) {
        Fail(Child(path, "values"),
             "must be specified single value when `operator` is 'Lt' or 'Gt'");
      }
      const std::string& v = req.values[0];
      std::string_view digits = v;
      if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
      int64_t parsed = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
      if (digits.empty() || (digits[0] == '-' && v[0] == '+') || ec != std::errc() ||
          end != digits.data() + digits.size()) {
        Fail(Index(Child(path, "values"), 0),
             "invalid value " + Quote(v) + ": must be an integer when `operator` is 'Lt' or 'Gt'");
      }
      break;
    }
  }
}

}  // namespace

void CheckMeta(const ObjectMeta& meta, bool namespaced) {
  if (meta.name.empty()) Fail("metadata.name", "required");
  CheckSubdomainField("metadata.name", meta.name);
  if (namespaced) CheckDnsLabelField("metadata.namespace", meta.namespace_name);
  CheckLabelPairs("metadata.labels", meta.labels);
  size_t annotation_bytes = 0;
  CheckListSize("metadata.annotations", meta.annotations.size(), kMaxLabels);
  for (const auto& [key, value] : meta.annotations) {
    if (auto why = CheckQualifiedName(key)) {
      Fail(Child("metadata.annotations", key),
           "invalid annotation key " + Quote(key) + ": " + *why);
    }
    annotation_bytes += key.size() + value.size();
  }
  if (annotation_bytes > kMaxAnnotationBytes) {
    Fail("metadata.annotations", "may not be more than " + std::to_string(kMaxAnnotationBytes) +
                                     " bytes in total, got " + std::to_string(annotation_bytes));
  }
  CheckListSize("metadata.ownerReferences", meta.owner_references.size());
  for (size_t i = 0; i < meta.owner_references.size(); ++i) {
    const OwnerReference& ref = meta.owner_references[i];
    std::string path = Index("metadata.ownerReferences", i);
    if (ref.kind.empty()) Fail(Child(path, "kind"), "required");
    if (ref.name.empty()) Fail(Child(path, "name"), "required");
  }
}

void CheckLabelMap(const std::string& path, const StringMap& map) {
  CheckListSize(path, map.size(), kMaxLabels);
  for (const auto& [key, value] : map) {
    if (auto why = CheckQualifiedName(key)) {
      Fail(Child(path, key), "invalid label key " + Quote(key) + ": " + *why);
    }
    CheckLabelValueField(Child(path, key), value);
  }
}

void CheckLabelSelector(const std::string& path, const LabelSelector& selector) {
  CheckLabelMap(Child(path, "matchLabels"), selector.match_labels);
  const std::string exprs = Child(path, "matchExpressions");
  CheckListSize(exprs, selector.match_expressions.size());
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    CheckRequirement(Index(exprs, i), selector.match_expressions[i], /*node=*/false);
  }
}

void CheckNodeSelectorTerm(const std::string& path, const NodeSelectorTerm& term) {
  const std::string exprs = Child(path, "matchExpressions");
  CheckListSize(exprs, term.match_expressions.size());
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    CheckRequirement(Index(exprs, i), term.match_expressions[i], /*node=*/true);
  }
  const std::string fields = Child(path, "matchFields");
  CheckListSize(fields, term.match_fields.size());
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const SelectorRequirement& req = term.match_fields[i];
    const std::string item = Index(fields, i);
    if (req.key != "metadata.name") {
      Fail(Child(item, "key"), "not a valid field selector key: " + Quote(req.key) +
                                   " (only \"metadata.name\" is supported)");
    }
    if (req.op != SelectorOp::kIn && req.op != SelectorOp::kNotIn) {
      Fail(Child(item, "operator"), "not a valid field selector operator: \"" +
                                        std::string(ToString(req.op)) + "\" (want In or NotIn)");
    }
    if (req.values.size() != 1) {
      Fail(Child(item, "values"), "must have exactly one value for a field selector");
    }
  }
}

void CheckResourceList(const std::string& path, const ResourceList& list) {
  CheckListSize(path, list.size());
  for (const auto& [name, quantity] : list) {
    if (auto why = CheckQualifiedName(name)) {
      Fail(Child(path, name), "invalid resource name " + Quote(name) + ": " + *why);
    }
    if (quantity.Sign() < 0) {
      Fail(Child(path, name), "must be greater than or equal to 0, got " + quantity.ToString());
    }
  }
}

}  // namespace internal
}  // namespace schedhost::model
