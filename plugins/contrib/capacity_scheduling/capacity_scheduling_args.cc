#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <schedhost/names.hpp>
#include <set>
#include <string>
#include <system_error>

#include "capacity_scheduling.h"
#include "toml_args.h"

namespace schedhost::contrib {
namespace {

constexpr std::string_view kPrefix = "plugin_config.CapacityScheduling";
constexpr int64_t kMaxPollMs = 3'600'000;

// Fail throws ArgsError "<location>: <prefix>.<field>: <msg>". The prefix is kPrefix for
// plugin_config and empty inside a quota file, whose location already names the file.
[[noreturn]] void Fail(const Args& at, std::string_view prefix, const std::string& field,
                       const std::string& msg) {
  std::string loc = at.location();
  std::string path(prefix);
  if (!field.empty()) path += (path.empty() ? "" : ".") + field;
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + path + (path.empty() ? "" : ": ") +
                  msg);
}

// Amounts reads a table of resource name -> quantity (string, or an integer).
std::map<std::string, int64_t, std::less<>> Amounts(const Args& at, std::string_view prefix,
                                                    const std::string& field) {
  std::map<std::string, int64_t, std::less<>> out;
  if (!at.present()) return out;
  if (at.kind() != SCHEDHOST_CONFIG_TABLE) {
    Fail(at, prefix, field,
         "expected a table of resource = quantity (e.g. { cpu = \"2\", memory = "
         "\"4Gi\" })");
  }
  for (size_t i = 0; i < at.size(); ++i) {
    std::string_view name;
    Args v = at.At(i, &name);
    const std::string where = field + "." + std::string(name);
    if (!names::IsQualifiedName(name)) Fail(v, prefix, where, "not a valid resource name");
    std::string text;
    if (v.kind() == SCHEDHOST_CONFIG_STRING) {
      text = v.String("");
    } else if (v.kind() == SCHEDHOST_CONFIG_INT) {
      text = std::to_string(v.Int(0));
    } else {
      Fail(v, prefix, where, "expected a quantity such as \"2\", \"500m\" or \"4Gi\"");
    }
    std::string error;
    std::optional<int64_t> q = capacity::ParseQuantity(name, text, &error);
    if (!q) Fail(v, prefix, where, error);
    out.emplace(std::string(name), *q);
  }
  return out;
}

capacity::QuotaSpec Quota(const Args& at, std::string_view prefix, const std::string& field) {
  if (at.kind() != SCHEDHOST_CONFIG_TABLE) {
    Fail(at, prefix, field, "expected a table { namespace = \"...\", min = {...}, max = {...} }");
  }
  for (size_t i = 0; i < at.size(); ++i) {
    std::string_view key;
    Args child = at.At(i, &key);
    if (key != "namespace" && key != "min" && key != "max") {
      Fail(child, prefix, field + "." + std::string(key),
           "unknown key (known keys: namespace, min, max)");
    }
  }
  capacity::QuotaSpec q;
  const Args ns = at["namespace"];
  if (!ns.present())
    Fail(at, prefix, field + ".namespace", "missing (the namespace the quota is for)");
  if (ns.kind() != SCHEDHOST_CONFIG_STRING)
    Fail(ns, prefix, field + ".namespace", "expected a string");
  q.namespace_name = ns.String("");
  if (!names::IsDnsSubdomain(q.namespace_name)) {
    Fail(ns, prefix, field + ".namespace",
         "\"" + q.namespace_name + "\" is not a valid namespace name");
  }
  q.min = Amounts(at["min"], prefix, field + ".min");
  q.max = Amounts(at["max"], prefix, field + ".max");
  for (const auto& [name, min] : q.min) {
    auto it = q.max.find(name);
    if (it != q.max.end() && min > it->second) {
      Fail(at["min"][name], prefix, field + ".min." + name,
           capacity::FormatQuantity(name, min) + " is more than max." + name + " " +
               capacity::FormatQuantity(name, it->second));
    }
  }
  return q;
}

// Quotas reads `quotas` (an array of quota tables, possibly absent) of plugin_config or of a
// quota file: the one validation both go through.
std::vector<capacity::QuotaSpec> Quotas(const Args& quotas, std::string_view prefix) {
  std::vector<capacity::QuotaSpec> out;
  if (!quotas.present()) return out;
  if (quotas.kind() != SCHEDHOST_CONFIG_ARRAY) {
    Fail(quotas, prefix, "quotas",
         "expected an array of tables (quotas = [ { namespace = ... } ])");
  }
  std::set<std::string, std::less<>> namespaces;
  for (size_t i = 0; i < quotas.size(); ++i) {
    const std::string field = "quotas[" + std::to_string(i) + "]";
    capacity::QuotaSpec q = Quota(quotas.At(i), prefix, field);
    if (!namespaces.insert(q.namespace_name).second) {
      Fail(quotas.At(i)["namespace"], prefix, field + ".namespace",
           "namespace \"" + q.namespace_name + "\" already has a quota");
    }
    out.push_back(std::move(q));
  }
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
std::string QuotaFilePath(const Args& at) {
  if (at.kind() != SCHEDHOST_CONFIG_STRING) {
    Fail(at, kPrefix, "quota_file", "expected a string (the path of a TOML file of quotas)");
  }
  const std::string text = at.String("");
  if (text.empty() || text.find('\0') != std::string::npos) {
    Fail(at, kPrefix, "quota_file", "expected a non-empty path");
  }
  std::filesystem::path p(text);
  if (p.is_relative()) {
    std::optional<std::filesystem::path> dir = ConfigDir(at);
    if (!dir) {
      Fail(at, kPrefix, "quota_file",
           "relative path \"" + text +
               "\" but the config was not read from a file whose directory it could be relative "
               "to; give an absolute path");
    }
    p = *dir / p;
  }
  return p.lexically_normal().string();
}

}  // namespace

CapacitySchedulingArgs ParseCapacitySchedulingArgs(const Args& args) {
  CapacitySchedulingArgs out;
  if (!args.present()) return out;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) Fail(args, kPrefix, "", "expected a table");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    Args child = args.At(i, &key);
    if (key != "quotas" && key != "quota_file" && key != "quota_file_poll_ms") {
      Fail(child, kPrefix, std::string(key),
           "unknown key (known keys: quotas, quota_file, quota_file_poll_ms)");
    }
  }
  const Args file = args["quota_file"];
  const Args poll = args["quota_file_poll_ms"];
  if (file.present() && args["quotas"].present()) {
    Fail(file, kPrefix, "quota_file",
         "give the quotas either inline under `quotas` or in `quota_file`, not both");
  }
  if (poll.present()) {
    if (!file.present()) Fail(poll, kPrefix, "quota_file_poll_ms", "only applies with quota_file");
    if (poll.kind() != SCHEDHOST_CONFIG_INT || poll.Int(0) < 0 || poll.Int(0) > kMaxPollMs) {
      Fail(poll, kPrefix, "quota_file_poll_ms",
           "expected an integer number of milliseconds from 0 to " + std::to_string(kMaxPollMs));
    }
    out.quota_file_poll = std::chrono::milliseconds(poll.Int(0));
  }
  if (!file.present()) {
    out.quotas = Quotas(args["quotas"], kPrefix);
    return out;
  }
  out.quota_file = QuotaFilePath(file);
  // Stamped before reading: a change made while it is read shows as a new stamp later.
  out.quota_file_stamp = StatQuotaFile(out.quota_file);
  try {
    out.quotas = LoadQuotaFile(out.quota_file);
  } catch (const ArgsError& e) {
    Fail(file, kPrefix, "quota_file", e.what());
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
  const TomlArgs file = TomlArgs::Load(path);
  const Args root = file.root();
  for (size_t i = 0; i < root.size(); ++i) {
    std::string_view key;
    Args child = root.At(i, &key);
    if (key != "quotas") Fail(child, "", std::string(key), "unknown key (known keys: quotas)");
  }
  // An empty file is more likely a write caught half-way than a wish to drop every quota.
  if (!root["quotas"].present()) {
    throw ArgsError(path + ": quotas: missing (write `quotas = []` for no quotas)");
  }
  return Quotas(root["quotas"], "");
}

}  // namespace schedhost::contrib
