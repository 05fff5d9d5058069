// Typed readers over the YAML tree: scalars, maps, metadata, selectors and affinity.
#include "host/model/decode_util.h"

#include <algorithm>
#include <charconv>

namespace schedhost::model::internal {
namespace {

using Kind = YamlNode::Kind;

constexpr int kMaxMergeDepth = 8;

std::optional<int64_t> ParseInteger(std::string_view s, bool* overflow) {
  *overflow = false;
  std::string_view digits = s;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  if (digits.empty() || (digits[0] == '-' && s[0] == '+')) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (end != digits.data() + digits.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    *overflow = true;
    return std::nullopt;
  }
  if (ec != std::errc()) return std::nullopt;
  return value;
}

SelectorRequirement ReadRequirement(const YamlNode* node, const std::string& path,
                                    bool node_selector) {
  MapReader m(node, path);
  SelectorRequirement req;
  req.key = ReadString(m.Get("key"), m.Path("key"));
  if (IsAbsent(m.Get("operator"))) Fail(m.Path("operator"), "required");
  if (node_selector) {
    req.op = *ReadEnum<SelectorOp>(m.Get("operator"), m.Path("operator"), ParseSelectorOp,
                                   "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", "
                                   "\"Lt\"");
  } else {
    auto parse = [](std::string_view s) -> std::optional<SelectorOp> {
      auto op = ParseSelectorOp(s);
      if (op == SelectorOp::kGt || op == SelectorOp::kLt) return std::nullopt;
      return op;
    };
    req.op = *ReadEnum<SelectorOp>(m.Get("operator"), m.Path("operator"), parse,
                                   "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"");
  }
  req.values = ReadStringList(m.Get("values"), m.Path("values"));
  return req;
}

std::vector<SelectorRequirement> ReadRequirements(const YamlNode* node, const std::string& path,
                                                  bool node_selector) {
  std::vector<SelectorRequirement> out;
  ReadList(node, path, [&](const YamlNode* item, const std::string& item_path) {
    out.push_back(ReadRequirement(item, item_path, node_selector));
  });
  return out;
}

PodAffinityTerm ReadPodAffinityTerm(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  PodAffinityTerm term;
  term.label_selector = ReadLabelSelector(m.Get("labelSelector"), m.Path("labelSelector"));
  term.namespaces = ReadStringList(m.Get("namespaces"), m.Path("namespaces"));
  term.topology_key = ReadString(m.Get("topologyKey"), m.Path("topologyKey"));
  term.namespace_selector =
      ReadLabelSelector(m.Get("namespaceSelector"), m.Path("namespaceSelector"));
  term.match_label_keys = ReadStringList(m.Get("matchLabelKeys"), m.Path("matchLabelKeys"));
  term.mismatch_label_keys =
      ReadStringList(m.Get("mismatchLabelKeys"), m.Path("mismatchLabelKeys"));
  return term;
}

std::optional<PodAffinity> ReadPodAffinity(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return std::nullopt;
  MapReader m(node, path);
  PodAffinity out;
  const std::string required = "requiredDuringSchedulingIgnoredDuringExecution";
  ReadList(m.Get(required), m.Path(required), [&](const YamlNode* item, const std::string& p) {
    out.required.push_back(ReadPodAffinityTerm(item, p));
  });
  const std::string preferred = "preferredDuringSchedulingIgnoredDuringExecution";
  ReadList(m.Get(preferred), m.Path(preferred), [&](const YamlNode* item, const std::string& p) {
    MapReader w(item, p);
    WeightedPodAffinityTerm term;
    term.weight = ReadInt32(w.Get("weight"), w.Path("weight")).value_or(0);
    term.pod_affinity_term =
        ReadPodAffinityTerm(w.Get("podAffinityTerm"), w.Path("podAffinityTerm"));
    out.preferred.push_back(std::move(term));
  });
  return out;
}

}  // namespace

std::string Describe(const YamlNode* node) {
  if (IsAbsent(node)) return "null";
  switch (node->kind) {
    case Kind::kSequence:
      return "a list";
    case Kind::kMap:
      return "an object";
    default:
      return node->quoted ? "string " + Quote(node->scalar) : Quote(node->scalar);
  }
}

MapReader::MapReader(const YamlNode* node, std::string path) : path_(std::move(path)) {
  if (IsAbsent(node)) return;
  if (node->kind != Kind::kMap) Fail(path_, "expected an object, got " + Describe(node));
  Collect(node, false, 0);
  // Explicit keys come first and merged ones after, so keeping the first of equal keys lets
  // explicit keys override merged ones.
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  entries_.erase(std::unique(entries_.begin(), entries_.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 entries_.end());
}

void MapReader::Collect(const YamlNode* node, bool merged, int depth) {
  if (depth > kMaxMergeDepth) Fail(path_, "YAML merge keys nested too deeply");
  std::vector<const YamlNode*> merges;
  std::vector<std::string_view> keys;
  for (const auto& [key, value] : node->entries) {
    if (key->kind != Kind::kScalar) {
      Fail(path_, "object keys must be strings, got " + Describe(key));
    }
    if (key->scalar == "<<" && !key->quoted) {
      merges.push_back(value);
      continue;
    }
    keys.push_back(key->scalar);
    entries_.emplace_back(key->scalar, value);
  }
  std::sort(keys.begin(), keys.end());
  auto dup = std::adjacent_find(keys.begin(), keys.end());
  if (dup != keys.end())
    Fail(Child(path_, *dup), std::string("duplicate key") + (merged ? " in a merged object" : ""));
  for (const YamlNode* m : merges) {
    if (!IsAbsent(m) && m->kind == Kind::kMap) {
      Collect(m, true, depth + 1);
    } else if (!IsAbsent(m) && m->kind == Kind::kSequence) {
      for (const YamlNode* item : m->items) {
        if (IsAbsent(item) || item->kind != Kind::kMap) {
          Fail(Child(path_, "<<"), "a merge key needs objects, got " + Describe(item));
        }
        Collect(item, true, depth + 1);
      }
    } else {
      Fail(Child(path_, "<<"), "a merge key needs an object, got " + Describe(m));
    }
  }
}

const YamlNode* MapReader::Get(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  if (it == entries_.end() || it->first != key || IsAbsent(it->second)) return nullptr;
  return it->second;
}

std::string ReadString(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return "";
  if (node->kind != Kind::kScalar) Fail(path, "expected a string, got " + Describe(node));
  return node->scalar;
}

std::optional<int64_t> ReadInt(const YamlNode* node, const std::string& path, int64_t min,
                               int64_t max) {
  if (IsAbsent(node)) return std::nullopt;
  if (node->kind != Kind::kScalar || node->quoted) {
    Fail(path, "expected an integer, got " + Describe(node));
  }
  bool overflow = false;
  std::optional<int64_t> value = ParseInteger(node->scalar, &overflow);
  if (!value && !overflow) Fail(path, "expected an integer, got " + Describe(node));
  if (overflow || *value < min || *value > max) {
    Fail(path, "value " + node->scalar + " is out of range [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]");
  }
  return value;
}

std::optional<int32_t> ReadInt32(const YamlNode* node, const std::string& path) {
  auto v = ReadInt(node, path, INT32_MIN, INT32_MAX);
  if (!v) return std::nullopt;
  return static_cast<int32_t>(*v);
}

std::optional<bool> ReadBool(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return std::nullopt;
  if (node->kind == Kind::kScalar && !node->quoted) {
    const std::string& s = node->scalar;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  Fail(path, "expected a boolean (true or false), got " + Describe(node));
}

Quantity ReadQuantity(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return Quantity();
  if (node->kind != Kind::kScalar) {
    Fail(path, "expected a quantity (a string or a number), got " + Describe(node));
  }
  std::string why;
  std::optional<Quantity> q = Quantity::Parse(node->scalar, &why);
  if (!q) Fail(path, "invalid quantity " + Quote(node->scalar) + ": " + why);
  return *q;
}

ResourceList ReadResourceList(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  ResourceList out;
  for (const auto& [key, value] : m.entries()) {
    out.emplace(std::string(key), ReadQuantity(value, m.Path(key)));
  }
  return out;
}

std::vector<std::string> ReadStringList(const YamlNode* node, const std::string& path) {
  std::vector<std::string> out;
  ReadList(node, path, [&](const YamlNode* item, const std::string& item_path) {
    out.push_back(ReadString(item, item_path));
  });
  return out;
}

StringMap ReadStringMap(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  StringMap out;
  for (const auto& [key, value] : m.entries()) {
    out.emplace_hint(out.end(), std::string(key), ReadString(value, m.Path(key)));
  }
  return out;
}

ObjectMeta ReadMeta(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  ObjectMeta meta;
  meta.name = ReadString(m.Get("name"), m.Path("name"));
  meta.namespace_name = ReadString(m.Get("namespace"), m.Path("namespace"));
  meta.uid = ReadString(m.Get("uid"), m.Path("uid"));
  for (auto& [k, v] : ReadStringMap(m.Get("labels"), m.Path("labels"))) {
    meta.labels.emplace_back(k, std::move(v));
  }
  for (auto& [k, v] : ReadStringMap(m.Get("annotations"), m.Path("annotations"))) {
    meta.annotations.emplace_back(k, std::move(v));
  }
  ReadList(m.Get("ownerReferences"), m.Path("ownerReferences"),
           [&](const YamlNode* item, const std::string& item_path) {
             MapReader r(item, item_path);
             OwnerReference ref;
             ref.api_version = ReadString(r.Get("apiVersion"), r.Path("apiVersion"));
             ref.kind = ReadString(r.Get("kind"), r.Path("kind"));
             ref.name = ReadString(r.Get("name"), r.Path("name"));
             ref.uid = ReadString(r.Get("uid"), r.Path("uid"));
             ref.controller = ReadBool(r.Get("controller"), r.Path("controller")).value_or(false);
             meta.owner_references.push_back(std::move(ref));
           });
  if (const YamlNode* ts = m.Get("creationTimestamp")) {
    std::string text = ReadString(ts, m.Path("creationTimestamp"));
    std::optional<int64_t> ns = ParseRfc3339(text);
    if (!ns) {
      Fail(m.Path("creationTimestamp"),
           "invalid timestamp " + Quote(text) + ": want RFC 3339 like \"2024-01-02T15:04:05Z\"");
    }
    meta.creation_timestamp_ns = *ns;
  }
  if (const YamlNode* rv = m.Get("resourceVersion")) {
    std::string text = ReadString(rv, m.Path("resourceVersion"));
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      Fail(m.Path("resourceVersion"),
           "invalid value " + Quote(text) + ": must be a decimal unsigned 64-bit integer");
    }
    meta.resource_version = value;
  }
  return meta;
}

std::optional<LabelSelector> ReadLabelSelector(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return std::nullopt;
  MapReader m(node, path);
  LabelSelector selector;
  selector.match_labels = ReadStringMap(m.Get("matchLabels"), m.Path("matchLabels"));
  selector.match_expressions =
      ReadRequirements(m.Get("matchExpressions"), m.Path("matchExpressions"), false);
  return selector;
}

NodeSelectorTerm ReadNodeSelectorTerm(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  NodeSelectorTerm term;
  term.match_expressions =
      ReadRequirements(m.Get("matchExpressions"), m.Path("matchExpressions"), true);
  term.match_fields = ReadRequirements(m.Get("matchFields"), m.Path("matchFields"), true);
  return term;
}

std::optional<Affinity> ReadAffinity(const YamlNode* node, const std::string& path) {
  if (IsAbsent(node)) return std::nullopt;
  MapReader m(node, path);
  Affinity affinity;
  if (const YamlNode* na = m.Get("nodeAffinity")) {
    MapReader n(na, m.Path("nodeAffinity"));
    NodeAffinity out;
    const std::string required = "requiredDuringSchedulingIgnoredDuringExecution";
    if (const YamlNode* req = n.Get(required)) {
      MapReader r(req, n.Path(required));
      NodeSelector selector;
      ReadList(r.Get("nodeSelectorTerms"), r.Path("nodeSelectorTerms"),
               [&](const YamlNode* item, const std::string& p) {
                 selector.node_selector_terms.push_back(ReadNodeSelectorTerm(item, p));
               });
      out.required = std::move(selector);
    }
    const std::string preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    ReadList(n.Get(preferred), n.Path(preferred), [&](const YamlNode* item, const std::string& p) {
      MapReader w(item, p);
      PreferredSchedulingTerm term;
      term.weight = ReadInt32(w.Get("weight"), w.Path("weight")).value_or(0);
      term.preference = ReadNodeSelectorTerm(w.Get("preference"), w.Path("preference"));
      out.preferred.push_back(std::move(term));
    });
    affinity.node_affinity = std::move(out);
  }
  affinity.pod_affinity = ReadPodAffinity(m.Get("podAffinity"), m.Path("podAffinity"));
  affinity.pod_anti_affinity = ReadPodAffinity(m.Get("podAntiAffinity"), m.Path("podAntiAffinity"));
  return affinity;
}

}  // namespace schedhost::model::internal
