// SwapProbe: a test plugin built twice from this file (SWAP_PROBE_VARIANT 1 and 2), so the swap
// tests can publish a new build of "the same" library and see which one runs: variant N reports
// version "N.0.0" and lets pods onto node "nN" only. Pods whose name starts with "wait" wait at
// its Permit (a minute) until the test allows them, to hold a build across a swap.
#include <chrono>
#include <schedhost/plugin.hpp>
#include <string>

#ifndef SWAP_PROBE_VARIANT
#error "build with -DSWAP_PROBE_VARIANT=1 or 2"
#endif

#define SWAP_PROBE_STR2(x) #x
#define SWAP_PROBE_STR(x) SWAP_PROBE_STR2(x)

class SwapProbe final : public schedhost::Plugin,
                        public schedhost::FilterPlugin,
                        public schedhost::PermitPlugin {
 public:
  static constexpr std::string_view kName = "SwapProbe";
  static constexpr std::string_view kVersion = SWAP_PROBE_STR(SWAP_PROBE_VARIANT) ".0.0";

  SwapProbe(const schedhost::Host& host, const schedhost::Args&) : Plugin(host) {}

  schedhost::Status Filter(const schedhost::CycleState&, const schedhost::Pod&,
                           const schedhost::NodeInfo& node) override {
    if (node.node().name() == "n" SWAP_PROBE_STR(SWAP_PROBE_VARIANT)) {
      return schedhost::Status::Success();
    }
    return schedhost::Status::Unschedulable(
        "SwapProbe " SWAP_PROBE_STR(SWAP_PROBE_VARIANT) " says no");
  }

  schedhost::Status Permit(schedhost::CycleState&, const schedhost::Pod& pod, std::string_view,
                           std::chrono::nanoseconds& timeout) override {
    if (pod.name().substr(0, 4) != "wait") return schedhost::Status::Success();
    timeout = std::chrono::minutes(1);
    return schedhost::Status::Wait();
  }
};

SCHEDHOST_PLUGIN_LIBRARY(SwapProbe)
