// CapacityScheduling's arguments: quotas inline in plugin_config or in a quota file (TOML, read
// here with toml++ into an ArgsTree), both validated by the same ArgsReader code.
#include <sys/stat.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <schedhost/args_tree.hpp>
#include <schedhost/names.hpp>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "capacity_scheduling.h"

namespace schedhost::contrib {
namespace {

constexpr int64_t kMaxPollMs = 3'600'000;
// A quota file is a handful of lines; the limit keeps a wrong path (a log, a disk image) from
// being read into memory whole.
constexpr std::uintmax_t kMaxFileBytes = 1u << 20;

using ResourceAmounts = std::map<std::string, int64_t, std::less<>>;

// Amounts reads a table of resource name -> quantity (cpu in millicores, others in units); a
// `min` table is checked against the quota's `max`, read before it.
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

// Quotas reads `quotas` (an array of quota tables, possibly absent) of plugin_config or of a
// quota file: the one validation both go through.
std::vector<capacity::QuotaSpec> Quotas(ArgsReader& r) {
  std::vector<capacity::QuotaSpec> out;
  std::set<std::string, std::less<>> namespaces;
  r.Tables("quotas", [&](ArgsReader& item) {
    capacity::QuotaSpec q;
    q.namespace_name = item.RequiredString(
        "namespace", {.valid = names::IsDnsSubdomain, .what = "a valid namespace name"});
    if (!namespaces.insert(q.namespace_name).second) {
      item.Fail("namespace", "namespace \"" + q.namespace_name + "\" already has a quota");
    }
    item.Table("max", [&](ArgsReader& t) { q.max = Amounts(t, nullptr); });
    item.Table("min", [&](ArgsReader& t) { q.min = Amounts(t, &q.max); });
    out.push_back(std::move(q));
  });
  return out;
}

// ConfigDir returns the directory of the config file a node was read from, when its location
// ("file:line:col") names a file that exists; nullopt otherwise (a config given as text).
std::optional<std::filesystem::path> ConfigDir(const Args& at) {
  const std::string loc = at.location();
  const size_t col = loc.rfind(':');
  if (col == std::string::npos || col == 0) return std::nullopt;
  const size_t line = loc.rfind(':', col - 1);
  if (line == std::string::npos || line == 0) return std::nullopt;
  const std::filesystem::path file = loc.substr(0, line);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  std::filesystem::path abs = std::filesystem::absolute(file, ec);
  if (ec) return std::nullopt;
  return abs.parent_path();
}

// QuotaFilePath resolves `quota_file` to an absolute path (relative: against the directory of
// the config file naming it), so later checks do not depend on the working directory.
std::string QuotaFilePath(ArgsReader& r) {
  const std::string text = r.RequiredString("quota_file");
  if (text.empty() || text.find('\0') != std::string::npos) {
    r.Fail("quota_file", "expected a non-empty path");
  }
  std::filesystem::path p(text);
  if (p.is_relative()) {
    std::optional<std::filesystem::path> dir = ConfigDir(r.Get("quota_file"));
    if (!dir) {
      r.Fail("quota_file",
             "relative path \"" + text +
                 "\" but the config was not read from a file whose directory it could be relative "
                 "to; give an absolute path");
    }
    p = *dir / p;
  }
  return p.lexically_normal().string();
}

std::string Location(const std::string& path, const toml::source_position& at) {
  return path + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

// ToArgsNode converts a TOML value, tables keeping their entries in file order (toml++ keeps
// them sorted by key) so that messages and the quota order follow the file.
ArgsNode ToArgsNode(const std::string& path, const toml::node& node) {
  ArgsNode out;
  out.location = Location(path, node.source().begin);
  switch (node.type()) {
    case toml::node_type::table: {
      out.kind = SCHEDHOST_CONFIG_TABLE;
      std::vector<std::pair<const toml::key*, const toml::node*>> entries;
      for (auto&& [k, v] : *node.as_table()) entries.emplace_back(&k, &v);
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const toml::source_position& pa = a.first->source().begin;
        const toml::source_position& pb = b.first->source().begin;
        return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
      });
      for (const auto& [k, v] : entries) {
        out.children.push_back(ToArgsNode(path, *v));
        out.children.back().key = std::string(k->str());
        out.children.back().key_location = Location(path, k->source().begin);
      }
      break;
    }
    case toml::node_type::array:
      out.kind = SCHEDHOST_CONFIG_ARRAY;
      for (const toml::node& child : *node.as_array())
        out.children.push_back(ToArgsNode(path, child));
      break;
    case toml::node_type::string:
      out.kind = SCHEDHOST_CONFIG_STRING;
      out.string_value = node.as_string()->get();
      break;
    case toml::node_type::integer:
      out.kind = SCHEDHOST_CONFIG_INT;
      out.int_value = node.as_integer()->get();
      break;
    case toml::node_type::floating_point:
      out.kind = SCHEDHOST_CONFIG_FLOAT;
      out.float_value = node.as_floating_point()->get();
      break;
    case toml::node_type::boolean:
      out.kind = SCHEDHOST_CONFIG_BOOL;
      out.bool_value = node.as_boolean()->get();
      break;
    default:
      throw ArgsError(out.location +
                      ": dates and times have no meaning here; write the value as a string");
  }
  return out;
}

}  // namespace

ArgsTree ReadTomlFile(const std::string& path) {
  const auto fail = [&](const std::string& message) { return ArgsError(path + ": " + message); };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fail("cannot open: " + std::error_code(errno, std::generic_category()).message());
  // One byte past the limit tells a file at the limit from a larger one.
  std::vector<char> buf(kMaxFileBytes + 1);
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (in.bad()) throw fail("cannot read");
  const auto n = static_cast<size_t>(in.gcount());
  if (n > kMaxFileBytes) {
    throw fail("larger than " + std::to_string(kMaxFileBytes) + " bytes; not a quota file?");
  }
  try {
    const toml::table root = toml::parse(std::string_view(buf.data(), n), std::string_view(path));
    return ArgsTree(ToArgsNode(path, root));
  } catch (const toml::parse_error& e) {
    throw ArgsError(Location(path, e.source().begin) +
                    ": invalid TOML: " + std::string(e.description()));
  }
}

CapacitySchedulingArgs ParseCapacitySchedulingArgs(const Args& args) {
  CapacitySchedulingArgs out;
  ArgsReader r(args, "CapacityScheduling");
  const bool inline_quotas = r.Has("quotas");
  const bool file = r.Has("quota_file");
  const bool poll = r.Has("quota_file_poll_ms");
  r.Done();
  if (file && inline_quotas) {
    r.Fail("quota_file",
           "give the quotas either inline under `quotas` or in `quota_file`, not both");
  }
  if (poll && !file) r.Fail("quota_file_poll_ms", "only applies with quota_file");
  out.quota_file_poll = std::chrono::milliseconds(
      r.Int("quota_file_poll_ms",
            {.min = 0, .max = kMaxPollMs, .fallback = out.quota_file_poll.count()}));
  if (!file) {
    out.quotas = Quotas(r);
    return out;
  }
  out.quota_file = QuotaFilePath(r);
  // Stamped before reading: a change made while it is read shows as a new stamp later.
  out.quota_file_stamp = StatQuotaFile(out.quota_file);
  try {
    out.quotas = LoadQuotaFile(out.quota_file);
  } catch (const ArgsError& e) {
    r.Fail("quota_file", e.what());
  }
  return out;
}

QuotaFileStamp StatQuotaFile(const std::string& path) {
  QuotaFileStamp st;
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) {
    st.error = errno == 0 ? EIO : errno;
    return st;
  }
  st.device = static_cast<uint64_t>(sb.st_dev);
  st.inode = static_cast<uint64_t>(sb.st_ino);
  st.size = static_cast<int64_t>(sb.st_size);
  st.mtime_ns = static_cast<int64_t>(sb.st_mtim.tv_sec) * 1'000'000'000 + sb.st_mtim.tv_nsec;
  st.ctime_ns = static_cast<int64_t>(sb.st_ctim.tv_sec) * 1'000'000'000 + sb.st_ctim.tv_nsec;
  return st;
}

std::vector<capacity::QuotaSpec> LoadQuotaFile(const std::string& path) {
  const ArgsTree file = ReadTomlFile(path);
  ArgsReader r = ArgsReader::Document(file.root());
  const bool given = r.Has("quotas");
  r.Done();
  // An empty file is more likely a write caught half-way than a wish to drop every quota.
  if (!given) throw ArgsError(path + ": quotas: missing (write `quotas = []` for no quotas)");
  return Quotas(r);
}

}  // namespace schedhost::contrib
