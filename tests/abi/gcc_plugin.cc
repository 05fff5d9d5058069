// GccPlugin: a C++ plugin built by g++ with schedhost_add_plugin, the way builtin plugins are.
// Its Filter throws for pods named "throw"; the SDK turns that into an Error status. The node
// label gcc=no rejects and gcc=throw throws, so the SDK's batched entries (abi 1.2) can be seen
// stopping at the right node; Score is the node's label count times ten. A cycle state holding
// "gcc-limit" (an int64_t) rejects nodes with more labels than that and adds it to the score.
#include <schedhost/plugin.hpp>
#include <stdexcept>
#include <string>

class GccPlugin final : public schedhost::Plugin,
                        public schedhost::FilterPlugin,
                        public schedhost::ScorePlugin {
 public:
  static constexpr std::string_view kName = "GccPlugin";
  static constexpr std::string_view kVersion = "1.0.0";

  GccPlugin(const schedhost::Host& host, const schedhost::Args&)
      : Plugin(host),
        key_(host.Intern("gcc")),
        no_(host.Intern("no")),
        throw_(host.Intern("throw")),
        limit_(host.Intern("gcc-limit")) {}

  schedhost::Status Filter(const schedhost::CycleState& state, const schedhost::Pod& pod,
                           const schedhost::NodeInfo& ni) override {
    if (pod.name() == "throw") throw std::runtime_error("boom from libstdc++");
    if (pod.name() == "reject") return schedhost::Status::Unschedulable("GccPlugin says no");
    const size_t labels = ni.node().labels().size();
    if (const auto* limit = state.Read<int64_t>(limit_);
        limit != nullptr && static_cast<int64_t>(labels) > *limit) {
      return schedhost::Status::Unschedulable("GccPlugin: " + std::to_string(labels) +
                                              " labels, more than " + std::to_string(*limit));
    }
    const auto value = ni.node().labels().Get(key_);
    if (value == no_) {
      return schedhost::Status::Unschedulable("GccPlugin says no to " + std::string(ni.node().name()));
    }
    if (value == throw_) throw std::runtime_error("boom on " + std::string(ni.node().name()));
    return schedhost::Status::Success();
  }

  schedhost::Status Score(const schedhost::CycleState& state, const schedhost::Pod& pod,
                          const schedhost::NodeInfo& ni, int64_t& score) override {
    if (pod.name() == "throw") throw std::runtime_error("boom from Score");
    score = 10 * static_cast<int64_t>(ni.node().labels().size());
    if (const auto* limit = state.Read<int64_t>(limit_)) score += *limit;
    return schedhost::Status::Success();
  }

 private:
  schedhost::Id key_, no_, throw_, limit_;
};

SCHEDHOST_PLUGIN_LIBRARY(GccPlugin)
