// GccPlugin: a C++ plugin built by g++ with schedhost_add_plugin, the way builtin plugins are.
// Its Filter throws for pods named "throw"; the SDK turns that into an Error status.
#include <schedhost/plugin.hpp>
#include <stdexcept>

class GccPlugin final : public schedhost::Plugin, public schedhost::FilterPlugin {
 public:
  static constexpr std::string_view kName = "GccPlugin";
  static constexpr std::string_view kVersion = "1.0.0";

  GccPlugin(const schedhost::Host& host, const schedhost::Args&) : Plugin(host) {}

  schedhost::Status Filter(const schedhost::CycleState&, const schedhost::Pod& pod,
                           const schedhost::NodeInfo&) override {
    if (pod.name() == "throw") throw std::runtime_error("boom from libstdc++");
    if (pod.name() == "reject") return schedhost::Status::Unschedulable("GccPlugin says no");
    return schedhost::Status::Success();
  }
};

SCHEDHOST_PLUGIN_LIBRARY(GccPlugin)
