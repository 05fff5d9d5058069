// C++ twins of the Rust plugins of sdk/rust, for rust_bench.cc: the same decisions in the C++
// SDK, so the two languages' per-call costs through the ABI can be set side by side.
//  - TargetLoadPackingCpp: TargetLoadPacking (sdk/rust/examples/target-load-packing): PreScore
//    keeps the pod's CPU in CycleState, Score reads the node's utilization label.
//  - PanickyCpp: Panicky's Filter (sdk/rust/tests/panicky), throwing where it panics.
#include <schedhost/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using schedhost::CycleState;
using schedhost::Id;
using schedhost::NodeInfo;
using schedhost::NodeInfoList;
using schedhost::Pod;
using schedhost::Status;

class TargetLoadPackingCpp final : public schedhost::Plugin,
                                   public schedhost::PreScorePlugin,
                                   public schedhost::ScorePlugin {
 public:
  static constexpr std::string_view kName = "TargetLoadPackingCpp";
  static constexpr std::string_view kVersion = "1.0.0";
  TargetLoadPackingCpp(const schedhost::Host& host, const schedhost::Args& args)
      : Plugin(host),
        label_(host.Intern("schedhost.io/cpu-utilization")),
        key_(host.Intern("PreScoreTargetLoadPackingCpp")) {
    args.ExpectNone(kName);
  }

  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList&) override {
    state.Write(key_, std::make_unique<int64_t>(PodCpu(pod)));
    return {};
  }

  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override {
    const int64_t* cpu = state.Read<int64_t>(key_);
    const int64_t pod_milli = cpu != nullptr ? *cpu : PodCpu(pod);
    score = 0;
    if (ni.raw()->node == nullptr) return {};
    const std::optional<Id> value = ni.node().labels().Get(label_);
    if (!value) return {};
    const std::optional<double> parsed = ParseUtilization(host().IdString(*value));
    if (!parsed) return {};
    const double utilization = *parsed;
    const int64_t capacity = ni.node().capacity().Get(SCHEDHOST_ID_CPU);
    if (capacity <= 0) return {};
    const double predicted =
        utilization + 100.0 * static_cast<double>(pod_milli) / static_cast<double>(capacity);
    if (predicted > 100.0) return {};
    const double target = static_cast<double>(target_);
    const double s = predicted <= target ? (100.0 - target) * predicted / target + target
                                         : target * (100.0 - predicted) / (100.0 - target);
    score = std::clamp<int64_t>(std::llround(s), 0, 100);
    return {};
  }

 private:
  // As the Rust plugin's parse_utilization: digits with an optional fraction, at most 100.
  static std::optional<double> ParseUtilization(std::string_view text) {
    size_t i = 0;
    uint32_t whole = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      whole = whole * 10 + static_cast<uint32_t>(text[i] - '0');
      if (whole > 100) return std::nullopt;
      ++i;
    }
    if (i == 0) return std::nullopt;
    double value = whole;
    if (i < text.size() && text[i] == '.') {
      const size_t start = ++i;
      double scale = 0.1;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        value += (text[i] - '0') * scale;
        scale *= 0.1;
        ++i;
      }
      if (i == start) return std::nullopt;
    }
    if (i != text.size() || value > 100.0) return std::nullopt;
    return value;
  }
  // Arguments in the Rust plugin, so members here too (not constants the compiler folds).
  int64_t target_ = 40;
  int64_t default_cpu_milli_ = 1000;
  int64_t PodCpu(const Pod& pod) const {
    const int64_t cpu = pod.requests().Get(SCHEDHOST_ID_CPU);
    return cpu == 0 ? default_cpu_milli_ : cpu;
  }
  Id label_;
  Id key_;
};

class PanickyCpp final : public schedhost::Plugin, public schedhost::FilterPlugin {
 public:
  static constexpr std::string_view kName = "PanickyCpp";
  static constexpr std::string_view kVersion = "1.0.0";
  PanickyCpp(const schedhost::Host& host, const schedhost::Args& args)
      : Plugin(host), avoid_key_(host.Intern("panicky-avoid")), avoid_(host.Intern("v1")) {
    args.ExpectNone(kName);
  }
  Status Filter(const CycleState&, const Pod& pod, const NodeInfo& ni) override {
    if (pod.name() == "panic") throw std::runtime_error("pod panic is not welcome");
    if (pod.name() == "reject") return Status::Unschedulable("node(s) rejected by Panicky");
    if (ni.raw()->node != nullptr && ni.node().labels().Get(avoid_key_) == avoid_) {
      return Status::Unschedulable("node(s) avoided by this build of Panicky");
    }
    return {};
  }

 private:
  Id avoid_key_;
  Id avoid_;
};

}  // namespace

SCHEDHOST_PLUGIN_LIBRARY(TargetLoadPackingCpp, PanickyCpp)
