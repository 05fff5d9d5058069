// Metrics: counters, gauges and histograms with labels, rendered in the Prometheus text
// exposition format 0.0.4. Hand-written on purpose: Debian 12 packages no Prometheus C++ client
// (prometheus-cpp is not in bookworm), and the hot path wants something smaller anyway.
//
// A family is a metric name with its label names; a child is one label set of it, resolved once
// with With() and then kept (children live as long as the registry). Counter::Inc and
// Histogram::Observe are relaxed atomic adds on a per-thread shard ("metrics
// counters per thread, summed when scraped"): no lock, no string lookup, no shared cache line
// between scheduling threads. Render sums the shards.
//
//   Registry registry;
//   CounterFamily& attempts = registry.AddCounter("x_total", "Attempts.", {"result"});
//   Counter& scheduled = attempts.With({"scheduled"});   // once, at setup
//   scheduled.Inc();                                     // on the hot path
//   std::string text = registry.Render();                // on scrape
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::metrics {

// kShards is how many per-thread cells a counter or histogram spreads its adds over.
inline constexpr size_t kShards = 16;

// ShardIndex returns the calling thread's shard (threads are spread round-robin at first use).
size_t ShardIndex();

// LabelValues are the values of one child, in the order of its family's label names.
using LabelValues = std::vector<std::string>;

// Counter is a monotonically increasing count for one label set.
class Counter {
 public:
  // Inc adds `n`; lock-free, relaxed, on the calling thread's shard.
  void Inc(uint64_t n = 1) { cells_[ShardIndex()].value.fetch_add(n, std::memory_order_relaxed); }
  // Value returns the sum of every shard.
  uint64_t Value() const;

 private:
  struct alignas(64) Cell {
    std::atomic<uint64_t> value{0};
  };
  std::array<Cell, kShards> cells_{};
};

// Gauge is a value that goes up and down for one label set (not meant for hot paths).
class Gauge {
 public:
  // Set replaces the value.
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  // Add adds `v` (negative to subtract).
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  // Value returns the current value.
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// HistogramSnapshot is a histogram's state summed over the shards: cumulative bucket counts
// (one per upper bound, then +Inf, which is also the count) and the sum.
struct HistogramSnapshot {
  std::vector<uint64_t> cumulative;
  double sum = 0;
  uint64_t count() const { return cumulative.empty() ? 0 : cumulative.back(); }
};

// Histogram counts observations into buckets with fixed upper bounds, for one label set.
class Histogram {
 public:
  // Histogram uses `bounds` (sorted ascending, not owned; must outlive it).
  explicit Histogram(const std::vector<double>* bounds);
  // Observe records `v`: lock-free, relaxed adds on the calling thread's shard.
  void Observe(double v);
  // Snapshot sums the shards.
  HistogramSnapshot Snapshot() const;

 private:
  struct alignas(64) Line {
    std::array<std::atomic<uint64_t>, 8> v{};
  };
  const std::vector<double>* bounds_;
  size_t lines_per_shard_;  // each shard: bucket counts (bounds + Inf), then the sum's bits
  std::unique_ptr<Line[]> lines_;
  std::atomic<uint64_t>& Slot(size_t shard, size_t i) const;
};

// ExponentialBuckets returns `count` bounds start, start*factor, ... (as Prometheus' Go client).
std::vector<double> ExponentialBuckets(double start, double factor, size_t count);

// Family is one metric name with its label names and its children.
template <typename T>
class Family {
 public:
  // With returns the child for `values` (one per label name), creating it on first use. It
  // takes a lock: call it once per label set and keep the reference. Throws
  // std::invalid_argument when the number of values is wrong.
  T& With(const LabelValues& values);

  const std::string& name() const { return name_; }

  // ForEach calls `fn` with every child and its label values, in label order, under the
  // family's lock (`fn` must not call With on this family).
  void ForEach(const std::function<void(const LabelValues&, const T&)>& fn) const;

 private:
  friend class Registry;
  Family(std::string name, std::string help, std::vector<std::string> labels,
         std::vector<double> bounds = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        labels_(std::move(labels)),
        bounds_(std::move(bounds)) {}
  void Render(std::string& out) const;

  std::string name_;
  std::string help_;
  std::vector<std::string> labels_;
  std::vector<double> bounds_;  // histograms only
  mutable std::mutex mu_;
  std::map<LabelValues, std::unique_ptr<T>> children_;
};

// CounterFamily, GaugeFamily and HistogramFamily are the three kinds of family.
using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// GaugeSample is one label set's value reported by a gauge callback.
struct GaugeSample {
  LabelValues labels;
  double value = 0;
};

// Registry owns families and renders them in registration order. Thread-safe.
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // AddCounter registers a counter family. Throws std::invalid_argument for a bad or taken name
  // or a bad label name. The family lives as long as the registry.
  CounterFamily& AddCounter(std::string name, std::string help, std::vector<std::string> labels);
  // AddGauge registers a gauge family (see AddCounter).
  GaugeFamily& AddGauge(std::string name, std::string help, std::vector<std::string> labels);
  // AddHistogram registers a histogram family with `bounds` (sorted ascending, finite; +Inf is
  // implicit). Throws std::invalid_argument as AddCounter, and for unsorted bounds.
  HistogramFamily& AddHistogram(std::string name, std::string help, std::vector<std::string> labels,
                                std::vector<double> bounds);

  // Registration removes a gauge callback when destroyed.
  class Registration {
   public:
    Registration() = default;
    Registration(Registry* registry, uint64_t id) : registry_(registry), id_(id) {}
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    ~Registration() { Reset(); }
    // Reset removes the callback now.
    void Reset();

   private:
    Registry* registry_ = nullptr;
    uint64_t id_ = 0;
  };
  // AddGaugeCallback registers a gauge family whose samples `fn` computes at every scrape (on
  // the scraping thread). While several callbacks share a name, only the latest one is
  // rendered (one per process is expected). Throws std::invalid_argument as AddCounter.
  [[nodiscard]] Registration AddGaugeCallback(std::string name, std::string help,
                                              std::vector<std::string> labels,
                                              std::function<std::vector<GaugeSample>()> fn);

  // Render returns every family in the Prometheus text format 0.0.4.
  std::string Render() const;

 private:
  struct Entry;
  void CheckNew(const std::string& name, const std::vector<std::string>& labels) const;

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
  uint64_t next_id_ = 1;
};

// kTextContentType is the Content-Type of Render's output.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// EscapeLabelValue escapes `\`, `"` and newlines as the text format requires.
std::string EscapeLabelValue(std::string_view value);
// FormatValue renders a sample value: shortest round-trip form, "+Inf", "-Inf", "NaN".
std::string FormatValue(double v);

}  // namespace schedhost::metrics
