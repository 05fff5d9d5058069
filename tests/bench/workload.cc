#include "tests/bench/workload.h"

#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace schedhost::bench {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw WorkloadError(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Placeholder returns the value of one `{{...}}` placeholder's inner text for `index`.
size_t Placeholder(std::string_view inner, size_t index) {
  inner = Trim(inner);
  if (inner == "index") return index;
  constexpr std::string_view kMod = "index %";
  if (inner.starts_with(kMod)) {
    std::string_view n = Trim(inner.substr(kMod.size()));
    size_t modulus = 0;
    for (char c : n) {
      if (c < '0' || c > '9') {
        modulus = 0;
        break;
      }
      modulus = modulus * 10 + static_cast<size_t>(c - '0');
    }
    if (modulus > 0) return index % modulus;
  }
  throw WorkloadError("unknown template placeholder {{" + std::string(inner) +
                      "}}: only {{index}} and {{index % N}} (N > 0) are supported");
}

}  // namespace

std::string RenderTemplate(std::string_view text, size_t index) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) throw WorkloadError("template has an unclosed {{");
    out.append(text.substr(pos, open - pos));
    out += std::to_string(Placeholder(text.substr(open + 2, close - open - 2), index));
    pos = close + 2;
  }
  out.append(text.substr(pos));
  return out;
}

model::Object DecodeOne(const Op& op, size_t index) {
  std::vector<model::Object> objects =
      model::DecodeManifests(RenderTemplate(op.template_text, index), op.template_name);
  if (objects.size() != 1) {
    throw WorkloadError(op.template_name + ": a template holds exactly one object, not " +
                        std::to_string(objects.size()));
  }
  return objects.front();
}

std::variant<model::Object, model::GenericObject> DecodeAny(const Op& op, size_t index) {
  std::vector<model::GenericObject> generic;
  std::vector<model::Object> objects = model::DecodeManifests(
      RenderTemplate(op.template_text, index), op.template_name, model::DecodeLimits{}, &generic);
  if (objects.size() + generic.size() != 1) {
    throw WorkloadError(op.template_name + ": a template holds exactly one object, not " +
                        std::to_string(objects.size() + generic.size()));
  }
  if (!generic.empty()) return std::move(generic.front());
  return objects.front();
}

Workload LoadWorkload(const std::filesystem::path& path, double scale) {
  if (!(scale > 0)) throw WorkloadError("--scale must be > 0");
  const std::string where = path.string();
  toml::table doc;
  try {
    doc = toml::parse(ReadFile(path), where);
  } catch (const toml::parse_error& e) {
    throw WorkloadError(where + ": " + std::string(e.description()));
  }
  Workload w;
  w.path = path;
  w.name = doc["name"].value_or(path.stem().string());
  w.description = doc["description"].value_or(std::string());
  const toml::array* ops = doc["ops"].as_array();
  if (ops == nullptr || ops->empty()) throw WorkloadError(where + ": ops: at least one [[ops]]");
  for (size_t i = 0; i < ops->size(); ++i) {
    const std::string field = where + ": ops[" + std::to_string(i) + "]";
    const toml::table* t = ops->get(i)->as_table();
    if (t == nullptr) throw WorkloadError(field + ": must be a table");
    Op op;
    const std::string kind = (*t)["op"].value_or(std::string());
    if (kind == "createNodes") {
      op.kind = OpKind::kCreateNodes;
    } else if (kind == "createPods") {
      op.kind = OpKind::kCreatePods;
    } else if (kind == "createObjects") {
      op.kind = OpKind::kCreateObjects;
    } else if (kind == "barrier") {
      op.kind = OpKind::kBarrier;
    } else {
      throw WorkloadError(field +
                          ".op: must be createNodes, createPods, createObjects or barrier, not \"" +
                          kind + "\"");
    }
    if (op.kind != OpKind::kBarrier) {
      const bool scaled = op.kind != OpKind::kCreateObjects;
      const int64_t count = (*t)["count"].value_or(int64_t{scaled ? -1 : 1});
      if (count < 1) throw WorkloadError(field + ".count: must be an integer >= 1");
      op.count = scaled
                     ? std::max<size_t>(
                           1, static_cast<size_t>(std::llround(static_cast<double>(count) * scale)))
                     : static_cast<size_t>(count);
      op.template_name = (*t)["template"].value_or(std::string());
      if (op.template_name.empty()) throw WorkloadError(field + ".template: missing");
      op.template_text = ReadFile(path.parent_path() / op.template_name);
      op.measured = (*t)["measured"].value_or(false);
      if (op.measured && op.kind != OpKind::kCreatePods) {
        throw WorkloadError(field + ".measured: only createPods operations are measured");
      }
      model::Object sample;
      try {
        if (op.kind == OpKind::kCreateObjects) {
          DecodeAny(op, 0);  // any kind; whether a plugin declares it is for the run to say
        } else {
          sample = DecodeOne(op, 0);
        }
      } catch (const std::exception& e) {
        throw WorkloadError(field + ".template: " + e.what());
      }
      const bool is_node = std::holds_alternative<std::shared_ptr<const model::Node>>(sample);
      const bool is_pod = std::holds_alternative<std::shared_ptr<const model::Pod>>(sample);
      if ((op.kind == OpKind::kCreateNodes && !is_node) ||
          (op.kind == OpKind::kCreatePods && !is_pod)) {
        throw WorkloadError(field + ".template: " + op.template_name + " must hold a " +
                            (op.kind == OpKind::kCreateNodes ? "Node" : "Pod"));
      }
    }
    w.ops.push_back(std::move(op));
  }
  return w;
}

}  // namespace schedhost::bench
