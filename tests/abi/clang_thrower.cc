// ClangThrower: a C++ plugin built by clang++-14 against libc++, linked statically with
// -Wl,--exclude-libs,ALL, then loaded into the g++/libstdc++ host. Its Filter throws a libc++
// std::runtime_error for pods named "throw": the SDK must catch it inside the library and hand
// the host an Error status with the message (docs/abi.md rules 8 and 10).
#include <schedhost/plugin.hpp>
#include <stdexcept>

class ClangThrower final : public schedhost::Plugin,
                           public schedhost::FilterPlugin,
                           public schedhost::ScorePlugin {
 public:
  static constexpr std::string_view kName = "ClangThrower";
  static constexpr std::string_view kVersion = "1.0.0";

  ClangThrower(const schedhost::Host& host, const schedhost::Args&) : Plugin(host) {}

  schedhost::Status Filter(const schedhost::CycleState&, const schedhost::Pod& pod,
                           const schedhost::NodeInfo&) override {
    if (pod.name() == "throw") throw std::runtime_error("boom from libc++");
    return schedhost::Status::Success();
  }

  schedhost::Status Score(const schedhost::CycleState&, const schedhost::Pod&,
                          const schedhost::NodeInfo&, int64_t& score) override {
    score = 7;
    return schedhost::Status::Success();
  }
};

SCHEDHOST_PLUGIN_LIBRARY(ClangThrower)
