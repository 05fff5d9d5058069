// Plugin arguments: the plugin_config.<Name> table a plugin's constructor receives.
//
// Args is the raw tree (kinds, children, locations). ArgsReader reads it declaratively, one line
// per key: typed values with ranges, allowed values or a validator, Kubernetes quantities, Go
// durations, string lists, nested tables and arrays of tables, and Done() refuses every key
// nobody asked for, suggesting the closest known one. Each error is an ArgsError that names the
// key's path and where the key is written, which the host reports as the profile's error:
//
//   schedhost.toml:14:1: plugin_config.NodePool.max_per_zone: must be at least 0, got -1
//   schedhost.toml:15:1: plugin_config.NodePool.lable: unknown key; did you mean "label"?
//
//   NodePool(const Host& host, const Args& args) : Plugin(host) {
//     ArgsReader r(args, kName);
//     max_ = r.Int("max_per_zone", {.min = 0, .fallback = 10});
//     label_ = r.RequiredString("label", {.valid = names::IsQualifiedName, .what = "a label key"});
//     r.Done();
//   }
#pragma once

#include <schedhost/plugin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <schedhost/units.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace schedhost {

/// ArgsError is a plugin argument the plugin refuses; thrown from its constructor, the host
/// reports what() as the profile's configuration error.
class ArgsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace args_detail {

inline schedhost_str Str(std::string_view s) noexcept { return {s.data(), s.size()}; }
inline std::string_view View(schedhost_str s) noexcept {
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}
inline char Lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace args_detail

/// Args reads a plugin's configuration tree (plugin_config.<Name>) with typed accessors.
class Args {
 public:
  Args(const schedhost_host_api* api, const schedhost_config* node) noexcept
      : api_(api), node_(node) {}

  bool present() const noexcept {
    return node_ != nullptr && api_->config_kind(node_) != SCHEDHOST_CONFIG_NONE;
  }
  int32_t kind() const noexcept { return api_->config_kind(node_); }
  /// operator[] returns the child under `key` (absent if this is not a table or lacks it).
  Args operator[](std::string_view key) const noexcept {
    return Args(api_, node_ ? api_->config_get(node_, args_detail::Str(key)) : nullptr);
  }
  size_t size() const noexcept { return node_ ? api_->config_len(node_) : 0; }
  /// At returns array element or table entry `i`; `key` receives the table key.
  Args At(size_t i, std::string_view* key = nullptr) const noexcept {
    schedhost_str k{};
    auto* c = node_ ? api_->config_at(node_, i, &k) : nullptr;
    if (key) *key = args_detail::View(k);
    return Args(api_, c);
  }
  /// location is "file:line:col" of the value ("" when unknown).
  std::string location() const {
    return node_ ? std::string(args_detail::View(api_->config_location(node_))) : "";
  }
  /// key_location is "file:line:col" of this value's key (of the element itself in an array),
  /// for errors about the key; the value's location on hosts older than abi 1.4.
  std::string key_location() const {
    if (node_ != nullptr && SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, config_key_location) &&
        api_->config_key_location != nullptr) {
      std::string loc(args_detail::View(api_->config_key_location(node_)));
      if (!loc.empty()) return loc;
    }
    return location();
  }

  int64_t Int(int64_t fallback) const {
    if (!present()) return fallback;
    int64_t v = 0;
    if (api_->config_int(node_, &v) != SCHEDHOST_OK) Fail("an integer");
    return v;
  }
  double Float(double fallback) const {
    if (!present()) return fallback;
    double v = 0;
    if (api_->config_float(node_, &v) != SCHEDHOST_OK) Fail("a number");
    return v;
  }
  bool Bool(bool fallback) const {
    if (!present()) return fallback;
    int32_t v = 0;
    if (api_->config_bool(node_, &v) != SCHEDHOST_OK) Fail("a boolean");
    return v != 0;
  }
  std::string String(std::string_view fallback) const {
    if (!present()) return std::string(fallback);
    schedhost_str v{};
    if (api_->config_string(node_, &v) != SCHEDHOST_OK) Fail("a string");
    return std::string(args_detail::View(v));
  }
  /// ExpectNone refuses any argument for a plugin that takes none (an empty table is fine), so a
  /// misspelt or misplaced key is reported instead of silently ignored.
  void ExpectNone(std::string_view plugin) const {
    if (!present()) return;
    if (kind() != SCHEDHOST_CONFIG_TABLE) Fail("a table (it takes no arguments)");
    if (size() == 0) return;
    std::string_view key;
    const std::string loc = At(0, &key).key_location();
    throw ArgsError(units_detail::Cat({loc, loc.empty() ? "" : ": ", "plugin_config.", plugin, ".",
                                       key, ": ", plugin, " takes no arguments"}));
  }
  /// Fail throws ArgsError naming this node's location and what was expected.
  [[noreturn]] void Fail(std::string_view expected) const {
    const std::string loc = location();
    throw ArgsError(units_detail::Cat({loc, loc.empty() ? "" : ": ", "expected ", expected}));
  }
  const schedhost_config* raw() const noexcept { return node_; }
  const schedhost_host_api* api() const noexcept { return api_; }

 private:
  const schedhost_host_api* api_;
  const schedhost_config* node_;
};

// ---------------------------------------------------------------------------------------------
// Suggestions for misspelt keys and values (the host's config uses the same rule)
// ---------------------------------------------------------------------------------------------

/// EditDistance returns the optimal-string-alignment distance between `a` and `b` (insertions,
/// deletions, substitutions and adjacent swaps cost 1), ignoring ASCII case.
inline size_t EditDistance(std::string_view a, std::string_view b) {
  using args_detail::Lower;
  const size_t width = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * width);
  auto at = [&](size_t i, size_t j) -> size_t& { return d[i * width + j]; };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

/// ClosestMatch returns the candidate closest to `word` when it is close enough to be a typo:
/// about one edit per three characters (at least one, at most three), or a candidate that
/// `word` (three or more characters) starts ("sha" -> "sha256"). An exact match is no typo.
inline std::optional<std::string> ClosestMatch(std::string_view word,
                                               const std::vector<std::string>& candidates) {
  const size_t allowed = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == word) continue;
    size_t distance = EditDistance(word, candidate);
    const bool prefix = word.size() >= 3 && candidate.size() > word.size() &&
                        EditDistance(word, std::string_view(candidate).substr(0, word.size())) == 0;
    if (prefix) distance = std::min(distance, allowed);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// ArgsReader
// ---------------------------------------------------------------------------------------------

// Every member has an initializer so that designated initializers naming only some of them
// ({.min = 0, .fallback = 10}) compile without -Wmissing-field-initializers warnings.

/// IntOptions bounds an integer (inclusive) and gives an absent optional key's value.
struct IntOptions {
  std::optional<int64_t> min = {};
  std::optional<int64_t> max = {};
  int64_t fallback = 0;
};
/// FloatOptions bounds a number (integers are accepted too) and gives an absent key's value.
struct FloatOptions {
  std::optional<double> min = {};
  std::optional<double> max = {};
  double fallback = 0;
};
/// StringOptions restricts a string to `one_of` (when not empty) and to what `valid` accepts,
/// which `what` names for the message ("\"x y\" is not <what>"); `non_empty` refuses "" ("must
/// not be empty"). For Strings and RequiredStrings the rules apply to each element, and `unique`
/// refuses an element equal to an earlier one ("\"a\" is also element 0"), located at the later
/// element; `unique` means nothing for a single string.
struct StringOptions {
  std::vector<std::string_view> one_of = {};
  bool (*valid)(std::string_view) = nullptr;
  std::string_view what = {};
  std::string_view fallback = {};
  bool non_empty = false;
  bool unique = false;
};
/// QuantityOptions reads a quantity ("500m", "2Gi", or a TOML integer of whole units) in `unit`,
/// bounded in that unit.
struct QuantityOptions {
  QuantityUnit unit = QuantityUnit::kUnits;
  std::optional<int64_t> min = {};
  std::optional<int64_t> max = {};
  int64_t fallback = 0;
};
/// DurationOptions bounds a Go duration string ("30s", "1m30s", "250ms").
struct DurationOptions {
  std::optional<std::chrono::nanoseconds> min = {};
  std::optional<std::chrono::nanoseconds> max = {};
  std::chrono::nanoseconds fallback{0};
};

/// ArgsReader reads one table of plugin arguments, key by key. Each accessor takes the key and
/// its rules and returns the value (an absent optional key: the rules' fallback); every key it
/// is asked about becomes known, and Done() refuses the others. Nested readers (Table, Tables)
/// call Done() themselves when their callback returns. Errors throw ArgsError
/// "<file:line:col of the key>: plugin_config.<Plugin>.<path>: <what is wrong>"; an array
/// element is located at the element. With no plugin_config table at all, optional keys take
/// their fallbacks and a required key's error has no location (the host then gives where the
/// plugin is enabled).
class ArgsReader {
 public:
  /// ArgsReader reads plugin_config.<plugin> (`args` as the plugin's constructor got it).
  ArgsReader(const Args& args, std::string_view plugin)
      : ArgsReader(args, units_detail::Cat({"plugin_config.", plugin}), std::string(plugin)) {
    root_ = true;
  }

  /// Document reads a tree the plugin loaded itself (see ArgsTree): paths start at its top
  /// level ("quotas[0].min"), and locations are the tree's own.
  static ArgsReader Document(const Args& root) {
    return ArgsReader(root, std::string(), std::string());
  }

  /// Object reads `node`, the part at `path` ("spec") of an object of a declared kind
  /// (Host::GetObject): paths start at `path` ("spec.minMember"), and errors name the object,
  /// "PodGroup team-a/gang: spec.minMember: must be at least 1". An object carries fields a
  /// plugin has no use for: read what you need and do not call Done(). since: sdk 1.5
  static ArgsReader Object(const Args& node, std::string path) {
    return ArgsReader(node, std::move(path), std::string());
  }

  /// Int reads an optional integer, `opts.fallback` when absent.
  int64_t Int(std::string_view key, const IntOptions& opts = {}) {
    return ReadInt(key, opts, false);
  }
  /// RequiredInt reads an integer that must be given.
  int64_t RequiredInt(std::string_view key, const IntOptions& opts = {}) {
    return ReadInt(key, opts, true);
  }

  /// Float reads an optional number (an integer converts), `opts.fallback` when absent.
  double Float(std::string_view key, const FloatOptions& opts = {}) {
    return ReadFloat(key, opts, false);
  }
  /// RequiredFloat reads a number that must be given.
  double RequiredFloat(std::string_view key, const FloatOptions& opts = {}) {
    return ReadFloat(key, opts, true);
  }

  /// Bool reads an optional boolean, `fallback` when absent.
  bool Bool(std::string_view key, bool fallback = false) { return ReadBool(key, fallback, false); }
  /// RequiredBool reads a boolean that must be given.
  bool RequiredBool(std::string_view key) { return ReadBool(key, false, true); }

  /// String reads an optional string, `opts.fallback` when absent.
  std::string String(std::string_view key, const StringOptions& opts = {}) {
    const Args v = Value(key, false);
    return v.present() ? CheckString(v, Path(key), opts) : std::string(opts.fallback);
  }
  /// RequiredString reads a string that must be given.
  std::string RequiredString(std::string_view key, const StringOptions& opts = {}) {
    return CheckString(Value(key, true), Path(key), opts);
  }

  /// OneOf reads an optional string that must be one of `choices` and returns its value,
  /// `fallback` when absent: OneOf("mode", {{"fast", kFast}, {"safe", kSafe}}, kSafe).
  template <class T>
  T OneOf(std::string_view key, std::initializer_list<std::pair<std::string_view, T>> choices,
          T fallback) {
    const Args v = Value(key, false);
    return v.present() ? Choose(v, Path(key), choices) : fallback;
  }
  /// RequiredOneOf reads a string that must be given and be one of `choices`.
  template <class T>
  T RequiredOneOf(std::string_view key,
                  std::initializer_list<std::pair<std::string_view, T>> choices) {
    return Choose(Value(key, true), Path(key), choices);
  }

  /// Quantity reads an optional Kubernetes quantity, `opts.fallback` when absent.
  int64_t Quantity(std::string_view key, const QuantityOptions& opts = {}) {
    const Args v = Value(key, false);
    return v.present() ? CheckQuantity(v, Path(key), opts) : opts.fallback;
  }
  /// RequiredQuantity reads a quantity that must be given.
  int64_t RequiredQuantity(std::string_view key, const QuantityOptions& opts = {}) {
    return CheckQuantity(Value(key, true), Path(key), opts);
  }

  /// Duration reads an optional Go duration, `opts.fallback` when absent.
  std::chrono::nanoseconds Duration(std::string_view key, const DurationOptions& opts = {}) {
    const Args v = Value(key, false);
    return v.present() ? CheckDuration(v, Path(key), opts) : opts.fallback;
  }
  /// RequiredDuration reads a duration that must be given.
  std::chrono::nanoseconds RequiredDuration(std::string_view key,
                                            const DurationOptions& opts = {}) {
    return CheckDuration(Value(key, true), Path(key), opts);
  }

  /// Strings reads an optional array of strings (empty when absent), each checked against
  /// `each` and reported as "<key>[i]".
  std::vector<std::string> Strings(std::string_view key, const StringOptions& each = {}) {
    return ReadStrings(key, each, false);
  }
  /// RequiredStrings reads an array of strings that must be given (it may be empty).
  std::vector<std::string> RequiredStrings(std::string_view key, const StringOptions& each = {}) {
    return ReadStrings(key, each, true);
  }

  /// Table calls `fn(ArgsReader&)` on the nested table under `key` when it is given, then
  /// refuses the keys `fn` did not read; returns whether it was given.
  template <class Fn>
  bool Table(std::string_view key, Fn&& fn) {
    const Args v = Value(key, false);
    if (!v.present()) return false;
    ReadTable(v, Path(key), fn);
    return true;
  }
  /// RequiredTable is Table for a table that must be given.
  template <class Fn>
  void RequiredTable(std::string_view key, Fn&& fn) {
    ReadTable(Value(key, true), Path(key), fn);
  }

  /// Tables calls `fn(ArgsReader& item)` or `fn(ArgsReader& item, size_t index)` on each table
  /// of the array under `key` (paths "<key>[index].<k>"), each refusing the keys `fn` did not
  /// read; returns the number of tables (0 when absent).
  template <class Fn>
  size_t Tables(std::string_view key, Fn&& fn) {
    return ReadTables(Value(key, false), Path(key), fn);
  }
  /// RequiredTables is Tables for an array that must be given (it may be empty).
  template <class Fn>
  size_t RequiredTables(std::string_view key, Fn&& fn) {
    return ReadTables(Value(key, true), Path(key), fn);
  }

  /// Has tells whether `key` is given (and makes it known).
  bool Has(std::string_view key) { return Value(key, false).present(); }
  /// Get returns the raw value under `key` (and makes it known), for what the accessors above
  /// do not read.
  Args Get(std::string_view key) { return Value(key, false); }
  /// Keys lists the keys of this table in file order (a table of names chosen by the user).
  std::vector<std::string> Keys() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < table_.size(); ++i) {
      std::string_view key;
      table_.At(i, &key);
      out.emplace_back(key);
    }
    return out;
  }
  /// Path returns the full path of `key` in messages, e.g. "plugin_config.NodePool.label"
  /// ("" gives this table's own path).
  std::string Path(std::string_view key = {}) const {
    if (key.empty()) return path_;
    return path_.empty() ? std::string(key) : units_detail::Cat({path_, ".", key});
  }
  /// Fail throws ArgsError about `key` ("": this table), at the key when it is given and at
  /// this table otherwise: "<location>: <Path(key)>: <message>".
  [[noreturn]] void Fail(std::string_view key, const std::string& message) const {
    FailAt(key.empty() ? table_ : table_[key], Path(key), message);
  }
  /// Fail throws ArgsError about element `index` of the array under `key`, at the element.
  [[noreturn]] void Fail(std::string_view key, size_t index, const std::string& message) const {
    FailAt(table_[key].At(index), Index(Path(key), index), message);
  }
  /// Done refuses the first key of this table that no accessor was asked about:
  /// "unknown key; did you mean \"label\"?" or "unknown key; known keys are: a, b".
  void Done() const {
    for (size_t i = 0; i < table_.size(); ++i) {
      std::string_view key;
      const Args child = table_.At(i, &key);
      if (Known(key)) continue;
      std::string message = "unknown key";
      if (known_.empty()) {
        message += root_ ? units_detail::Cat({"; ", plugin_, " takes no arguments"})
                         : "; this table takes none";
      } else if (std::optional<std::string> match = ClosestMatch(key, known_)) {
        message += units_detail::Cat({"; did you mean \"", *match, "\"?"});
      } else {
        message += "; known keys are: ";
        message += Join(known_, false);
      }
      FailAt(child, Path(key), message);
    }
  }
  /// args returns the table this reader reads (absent when the plugin has no plugin_config).
  const Args& args() const noexcept { return table_; }

 private:
  ArgsReader(const Args& table, std::string path, std::string plugin)
      : table_(table), path_(std::move(path)), plugin_(std::move(plugin)) {
    if (table_.present() && table_.kind() != SCHEDHOST_CONFIG_TABLE) {
      FailAt(table_, path_, units_detail::Cat({"expected a table, not ", KindName(table_.kind())}));
    }
  }

  static std::string KindName(int32_t kind) {
    switch (kind) {
      case SCHEDHOST_CONFIG_TABLE:
        return "a table";
      case SCHEDHOST_CONFIG_ARRAY:
        return "an array";
      case SCHEDHOST_CONFIG_STRING:
        return "a string";
      case SCHEDHOST_CONFIG_INT:
        return "an integer";
      case SCHEDHOST_CONFIG_FLOAT:
        return "a float";
      case SCHEDHOST_CONFIG_BOOL:
        return "a boolean";
      default:
        return "nothing";
    }
  }
  static std::string Join(const std::vector<std::string>& names, bool quoted) {
    std::string out;
    for (const std::string& n : names) {
      if (!out.empty()) out += ", ";
      if (quoted) out += '"';
      out += n;
      if (quoted) out += '"';
    }
    return out;
  }
  // Number prints a double with the fewest digits that read back as the same value, without an
  // exponent unless the value is very large or very small ("900", "0.001", "1e+20").
  static std::string Number(double v) {
    char buf[32] = "";
    const double magnitude = v < 0 ? -v : v;
    const bool plain = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e15);
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, v);
      if (std::strtod(buf, nullptr) == v && (!plain || std::strchr(buf, 'e') == nullptr)) break;
    }
    return buf;
  }
  static std::string Index(const std::string& path, size_t i) {
    return units_detail::Cat({path, "[", std::to_string(i), "]"});
  }
  static std::string QuantityText(int64_t v, QuantityUnit unit) {
    if (unit == QuantityUnit::kUnits || v % 1000 == 0) {
      return std::to_string(unit == QuantityUnit::kUnits ? v : v / 1000);
    }
    return std::to_string(v).append("m");
  }

  bool Known(std::string_view key) const {
    return std::find(known_.begin(), known_.end(), key) != known_.end();
  }
  // Value makes `key` known and returns its value; a required key that is absent throws.
  Args Value(std::string_view key, bool required) {
    if (!Known(key)) known_.emplace_back(key);
    const Args v = table_[key];
    if (required && !v.present()) Missing(key);
    return v;
  }
  // Missing reports a required key; a key of the table that looks like a typo of it is named,
  // and the error located there.
  [[noreturn]] void Missing(std::string_view key) const {
    const std::vector<std::string> wanted{std::string(key)};
    for (size_t i = 0; i < table_.size(); ++i) {
      std::string_view other;
      const Args child = table_.At(i, &other);
      if (!Known(other) && ClosestMatch(other, wanted)) {
        FailAt(child, Path(key),
               units_detail::Cat(
                   {"is required; did you mean \"", key, "\" instead of \"", other, "\"?"}));
      }
    }
    FailAt(Args(table_.api(), nullptr), Path(key), "is required");
  }
  [[noreturn]] void FailAt(const Args& at, const std::string& path,
                           const std::string& message) const {
    const std::string loc = at.present() ? at.key_location() : table_.key_location();
    throw ArgsError(
        units_detail::Cat({loc, loc.empty() ? "" : ": ", path, path.empty() ? "" : ": ", message}));
  }
  void Expect(const Args& v, const std::string& path, int32_t kind, std::string_view what) const {
    if (v.kind() != kind)
      FailAt(v, path, units_detail::Cat({"expected ", what, ", not ", KindName(v.kind())}));
  }
  template <class T, class Format>
  void CheckRange(const Args& v, const std::string& path, T x, const std::optional<T>& min,
                  const std::optional<T>& max, Format format) const {
    if ((!min || x >= *min) && (!max || x <= *max)) return;
    std::string range;
    if (min && max) {
      range = units_detail::Cat({"in the range [", format(*min), ", ", format(*max), "]"});
    } else {
      range = min ? units_detail::Cat({"at least ", format(*min)})
                  : units_detail::Cat({"at most ", format(*max)});
    }
    FailAt(v, path, units_detail::Cat({"must be ", range, ", got ", format(x)}));
  }

  int64_t ReadInt(std::string_view key, const IntOptions& opts, bool required) {
    const Args v = Value(key, required);
    if (!v.present()) return opts.fallback;
    Expect(v, Path(key), SCHEDHOST_CONFIG_INT, "an integer");
    const int64_t x = v.Int(0);
    CheckRange(v, Path(key), x, opts.min, opts.max, [](int64_t n) { return std::to_string(n); });
    return x;
  }
  double ReadFloat(std::string_view key, const FloatOptions& opts, bool required) {
    const Args v = Value(key, required);
    if (!v.present()) return opts.fallback;
    if (v.kind() != SCHEDHOST_CONFIG_INT) Expect(v, Path(key), SCHEDHOST_CONFIG_FLOAT, "a number");
    const double x = v.Float(0);
    if (x != x) FailAt(v, Path(key), "must be a number, not nan");
    CheckRange(v, Path(key), x, opts.min, opts.max, &Number);
    return x;
  }
  bool ReadBool(std::string_view key, bool fallback, bool required) {
    const Args v = Value(key, required);
    if (!v.present()) return fallback;
    Expect(v, Path(key), SCHEDHOST_CONFIG_BOOL, "a boolean");
    return v.Bool(fallback);
  }
  std::string Unsupported(const std::string& value,
                          const std::vector<std::string>& supported) const {
    if (std::optional<std::string> match = ClosestMatch(value, supported)) {
      return units_detail::Cat(
          {"unsupported value \"", value, "\"; did you mean \"", *match, "\"?"});
    }
    return units_detail::Cat(
        {"unsupported value \"", value, "\"; supported values: ", Join(supported, true)});
  }
  std::string CheckString(const Args& v, const std::string& path, const StringOptions& opts) const {
    Expect(v, path, SCHEDHOST_CONFIG_STRING, "a string");
    std::string s = v.String("");
    if (opts.non_empty && s.empty()) FailAt(v, path, "must not be empty");
    if (!opts.one_of.empty() &&
        std::find(opts.one_of.begin(), opts.one_of.end(), s) == opts.one_of.end()) {
      FailAt(v, path,
             Unsupported(s, std::vector<std::string>(opts.one_of.begin(), opts.one_of.end())));
    }
    if (opts.valid != nullptr && !opts.valid(s)) {
      FailAt(v, path,
             units_detail::Cat({"\"", s, "\" is not ", opts.what.empty() ? "valid" : opts.what}));
    }
    return s;
  }
  template <class T>
  T Choose(const Args& v, const std::string& path,
           std::initializer_list<std::pair<std::string_view, T>> choices) const {
    Expect(v, path, SCHEDHOST_CONFIG_STRING, "a string");
    const std::string s = v.String("");
    std::vector<std::string> names;
    for (const auto& [name, value] : choices) {
      if (name == s) return value;
      names.emplace_back(name);
    }
    FailAt(v, path, Unsupported(s, names));
  }
  int64_t CheckQuantity(const Args& v, const std::string& path, const QuantityOptions& opts) const {
    int64_t x = 0;
    if (v.kind() == SCHEDHOST_CONFIG_INT) {
      x = v.Int(0);
      const int64_t limit = std::numeric_limits<int64_t>::max() / 1000;
      if (opts.unit == QuantityUnit::kMilli) {
        if (x > limit || x < -limit) FailAt(v, path, std::to_string(x).append(" is too large"));
        x *= 1000;
      }
    } else if (v.kind() == SCHEDHOST_CONFIG_STRING) {
      std::string why;
      std::optional<int64_t> q = ParseQuantity(v.String(""), opts.unit, &why);
      if (!q) FailAt(v, path, why);
      x = *q;
    } else {
      FailAt(v, path,
             units_detail::Cat({"expected a quantity such as \"2\", \"500m\" or \"4Gi\", not ",
                                KindName(v.kind())}));
    }
    CheckRange(v, path, x, opts.min, opts.max,
               [&](int64_t n) { return QuantityText(n, opts.unit); });
    return x;
  }
  std::chrono::nanoseconds CheckDuration(const Args& v, const std::string& path,
                                         const DurationOptions& opts) const {
    if (v.kind() != SCHEDHOST_CONFIG_STRING) {
      FailAt(v, path,
             units_detail::Cat(
                 {"expected a duration such as \"30s\" or \"1m30s\", not ", KindName(v.kind())}));
    }
    std::string why;
    std::optional<std::chrono::nanoseconds> d = ParseDuration(v.String(""), &why);
    if (!d) FailAt(v, path, why);
    CheckRange(v, path, *d, opts.min, opts.max, &FormatDuration);
    return *d;
  }
  std::vector<std::string> ReadStrings(std::string_view key, const StringOptions& each,
                                       bool required) {
    const Args v = Value(key, required);
    std::vector<std::string> out;
    if (!v.present()) return out;
    Expect(v, Path(key), SCHEDHOST_CONFIG_ARRAY, "an array of strings");
    for (size_t i = 0; i < v.size(); ++i) {
      const Args item = v.At(i);
      std::string s = CheckString(item, Index(Path(key), i), each);
      if (each.unique) {
        const auto earlier = std::find(out.begin(), out.end(), s);
        if (earlier != out.end()) {
          FailAt(item, Index(Path(key), i),
                 units_detail::Cat({"\"", s, "\" is also element ",
                                    std::to_string(earlier - out.begin())}));
        }
      }
      out.push_back(std::move(s));
    }
    return out;
  }
  template <class Fn>
  void ReadTable(const Args& v, const std::string& path, Fn& fn) const {
    Expect(v, path, SCHEDHOST_CONFIG_TABLE, "a table");
    ArgsReader nested(v, path, plugin_);
    fn(nested);
    nested.Done();
  }
  template <class Fn>
  size_t ReadTables(const Args& v, const std::string& path, Fn& fn) const {
    if (!v.present()) return 0;
    Expect(v, path, SCHEDHOST_CONFIG_ARRAY, "an array of tables");
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string item_path = Index(path, i);
      const Args item = v.At(i);
      Expect(item, item_path, SCHEDHOST_CONFIG_TABLE, "a table");
      ArgsReader nested(item, item_path, plugin_);
      if constexpr (std::is_invocable_v<Fn&, ArgsReader&, size_t>) {
        fn(nested, i);
      } else {
        fn(nested);
      }
      nested.Done();
    }
    return v.size();
  }

  Args table_;
  std::string path_;    // "plugin_config.<Plugin>[.<key>...]", "" at a document's top level
  std::string plugin_;  // the plugin's name ("" for a document)
  bool root_ = false;   // plugin_config.<Plugin> itself
  std::vector<std::string> known_;  // the keys asked about, in the order asked
};

}  // namespace schedhost
