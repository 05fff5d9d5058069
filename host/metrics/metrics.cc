// Metrics: the sharded cells, the families and the text exposition format.
#include "host/metrics/metrics.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace schedhost::metrics {
namespace {

std::atomic<size_t> next_shard{0};

bool ValidName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Header(std::string& out, const std::string& name, const std::string& help,
            std::string_view type) {
  out += "# HELP " + name + " " + EscapeHelp(help) + "\n";
  out += "# TYPE " + name + " " + std::string(type) + "\n";
}

// LabelText renders {a="x",b="y"} (with an extra label such as le last), or "" for no labels.
std::string LabelText(const std::vector<std::string>& names, const LabelValues& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ",";
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ",";
    out += std::string(extra_name) + "=\"" + std::string(extra_value) + "\"";
  }
  return out + "}";
}

void AddDouble(std::atomic<uint64_t>& bits, double v) {
  uint64_t old = bits.load(std::memory_order_relaxed);
  while (!bits.compare_exchange_weak(old, std::bit_cast<uint64_t>(std::bit_cast<double>(old) + v),
                                     std::memory_order_relaxed)) {
  }
}

}  // namespace

size_t ShardIndex() {
  thread_local const size_t index = next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  return index;
}

uint64_t Counter::Value() const {
  uint64_t sum = 0;
  for (const Cell& c : cells_) sum += c.value.load(std::memory_order_relaxed);
  return sum;
}

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds),
      lines_per_shard_((bounds->size() + 2 + 7) / 8),
      lines_(new Line[kShards * lines_per_shard_]) {}

std::atomic<uint64_t>& Histogram::Slot(size_t shard, size_t i) const {
  return lines_[shard * lines_per_shard_ + i / 8].v[i % 8];
}

void Histogram::Observe(double v) {
  const std::vector<double>& b = *bounds_;
  // Buckets are few (<= 20 upstream); a linear scan beats a binary search at that size.
  size_t i = 0;
  while (i < b.size() && v > b[i]) ++i;
  const size_t shard = ShardIndex();
  Slot(shard, i).fetch_add(1, std::memory_order_relaxed);
  AddDouble(Slot(shard, b.size() + 1), v);
}

HistogramSnapshot Histogram::Snapshot() const {
  const size_t n = bounds_->size() + 1;
  HistogramSnapshot snap;
  snap.cumulative.assign(n, 0);
  for (size_t s = 0; s < kShards; ++s) {
    for (size_t i = 0; i < n; ++i) {
      snap.cumulative[i] += Slot(s, i).load(std::memory_order_relaxed);
    }
    snap.sum += std::bit_cast<double>(Slot(s, n).load(std::memory_order_relaxed));
  }
  for (size_t i = 1; i < n; ++i) snap.cumulative[i] += snap.cumulative[i - 1];
  return snap;
}

std::vector<double> ExponentialBuckets(double start, double factor, size_t count) {
  std::vector<double> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    out.push_back(start);
    start *= factor;
  }
  return out;
}

template <typename T>
T& Family<T>::With(const LabelValues& values) {
  if (values.size() != labels_.size()) {
    throw std::invalid_argument(name_ + ": " + std::to_string(values.size()) +
                                " label value(s) given, " + std::to_string(labels_.size()) +
                                " expected");
  }
  std::lock_guard lock(mu_);
  std::unique_ptr<T>& child = children_[values];
  if (!child) {
    if constexpr (std::is_same_v<T, Histogram>) {
      child = std::make_unique<Histogram>(&bounds_);
    } else {
      child = std::make_unique<T>();
    }
  }
  return *child;
}

template <typename T>
void Family<T>::ForEach(const std::function<void(const LabelValues&, const T&)>& fn) const {
  std::lock_guard lock(mu_);
  for (const auto& [values, child] : children_) fn(values, *child);
}

template <typename T>
void Family<T>::Render(std::string& out) const {
  std::lock_guard lock(mu_);
  if constexpr (std::is_same_v<T, Counter>) {
    Header(out, name_, help_, "counter");
    for (const auto& [values, c] : children_) {
      out += name_ + LabelText(labels_, values) + " " + std::to_string(c->Value()) + "\n";
    }
  } else if constexpr (std::is_same_v<T, Gauge>) {
    Header(out, name_, help_, "gauge");
    for (const auto& [values, g] : children_) {
      out += name_ + LabelText(labels_, values) + " " + FormatValue(g->Value()) + "\n";
    }
  } else {
    Header(out, name_, help_, "histogram");
    for (const auto& [values, h] : children_) {
      const HistogramSnapshot snap = h->Snapshot();
      for (size_t i = 0; i < snap.cumulative.size(); ++i) {
        const std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
        out += name_ + "_bucket" + LabelText(labels_, values, "le", le) + " " +
               std::to_string(snap.cumulative[i]) + "\n";
      }
      const std::string labels = LabelText(labels_, values);
      out += name_ + "_sum" + labels + " " + FormatValue(snap.sum) + "\n";
      out += name_ + "_count" + labels + " " + std::to_string(snap.count()) + "\n";
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct Registry::Entry {
  uint64_t id = 0;
  std::string name;
  // A family, or a callback gauge with its help and label names.
  std::variant<std::unique_ptr<CounterFamily>, std::unique_ptr<GaugeFamily>,
               std::unique_ptr<HistogramFamily>>
      family;
  std::string help;
  std::vector<std::string> labels;
  std::function<std::vector<GaugeSample>()> callback;
};

Registry::Registry() = default;
Registry::~Registry() = default;

void Registry::CheckNew(const std::string& name, const std::vector<std::string>& labels) const {
  if (!ValidName(name, true)) throw std::invalid_argument("bad metric name \"" + name + "\"");
  for (const std::string& l : labels) {
    if (!ValidName(l, false) || l.starts_with("__") || l == "le") {
      throw std::invalid_argument(name + ": bad label name \"" + l + "\"");
    }
  }
  for (const auto& e : entries_) {
    if (e->name == name && !e->callback) {
      throw std::invalid_argument("metric \"" + name + "\" is already registered");
    }
  }
}

CounterFamily& Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  CheckNew(name, labels);
  auto entry = std::make_unique<Entry>();
  entry->name = name;
  auto* family = new CounterFamily(std::move(name), std::move(help), std::move(labels));
  entry->family = std::unique_ptr<CounterFamily>(family);
  entries_.push_back(std::move(entry));
  return *family;
}

GaugeFamily& Registry::AddGauge(std::string name, std::string help,
                                std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  CheckNew(name, labels);
  auto entry = std::make_unique<Entry>();
  entry->name = name;
  auto* family = new GaugeFamily(std::move(name), std::move(help), std::move(labels));
  entry->family = std::unique_ptr<GaugeFamily>(family);
  entries_.push_back(std::move(entry));
  return *family;
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> labels,
                                        std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      throw std::invalid_argument(name + ": histogram bounds must be finite and increasing");
    }
  }
  std::lock_guard lock(mu_);
  CheckNew(name, labels);
  auto entry = std::make_unique<Entry>();
  entry->name = name;
  auto* family =
      new HistogramFamily(std::move(name), std::move(help), std::move(labels), std::move(bounds));
  entry->family = std::unique_ptr<HistogramFamily>(family);
  entries_.push_back(std::move(entry));
  return *family;
}

Registry::Registration Registry::AddGaugeCallback(std::string name, std::string help,
                                                  std::vector<std::string> labels,
                                                  std::function<std::vector<GaugeSample>()> fn) {
  std::lock_guard lock(mu_);
  CheckNew(name, labels);
  auto entry = std::make_unique<Entry>();
  entry->id = next_id_++;
  entry->name = std::move(name);
  entry->help = std::move(help);
  entry->labels = std::move(labels);
  entry->callback = std::move(fn);
  const uint64_t id = entry->id;
  entries_.push_back(std::move(entry));
  return Registration(this, id);
}

Registry::Registration::Registration(Registration&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), id_(other.id_) {}

Registry::Registration& Registry::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    Reset();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

void Registry::Registration::Reset() {
  if (registry_ == nullptr) return;
  std::lock_guard lock(registry_->mu_);
  auto& entries = registry_->entries_;
  entries.erase(
      std::remove_if(entries.begin(), entries.end(), [&](const auto& e) { return e->id == id_; }),
      entries.end());
  registry_ = nullptr;
}

std::string Registry::Render() const {
  std::string out;
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = *entries_[i];
    if (!e.callback) {
      std::visit([&](const auto& family) { family->Render(out); }, e.family);
      continue;
    }
    // Only the latest callback of a name is rendered.
    const bool superseded =
        std::any_of(entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1, entries_.end(),
                    [&](const auto& later) { return later->callback && later->name == e.name; });
    if (superseded) continue;
    std::vector<GaugeSample> samples = e.callback();
    std::sort(samples.begin(), samples.end(),
              [](const GaugeSample& a, const GaugeSample& b) { return a.labels < b.labels; });
    Header(out, e.name, e.help, "gauge");
    for (const GaugeSample& s : samples) {
      if (s.labels.size() != e.labels.size()) continue;  // a callback bug; never a bad line
      out += e.name + LabelText(e.labels, s.labels) + " " + FormatValue(s.value) + "\n";
    }
  }
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::array<char, 32> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  if (ec != std::errc()) return "NaN";
  return std::string(buf.data(), end);
}

}  // namespace schedhost::metrics
