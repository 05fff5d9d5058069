// Status: the host-side result of running an extension point, and the ABI status sink.
//
// Plugins return an int32 code and add reasons through the host table; the host turns that
// into a Status that also remembers which plugin produced it (upstream's FailedPlugin).
#pragma once

#include <schedhost/plugin.h>

#include <boost/container/small_vector.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedhost::framework {

/// Code mirrors plugin.h's schedhost_code.
enum class Code : int32_t {
  kSuccess = SCHEDHOST_SUCCESS,
  kError = SCHEDHOST_ERROR,
  kUnschedulable = SCHEDHOST_UNSCHEDULABLE,
  kUnschedulableAndUnresolvable = SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE,
  kWait = SCHEDHOST_WAIT,
  kSkip = SCHEDHOST_SKIP,
  kPending = SCHEDHOST_PENDING,
};

/// CodeName returns upstream's name of a code ("Success", "Unschedulable", ...).
std::string_view CodeName(Code code);

/// CodeFromAbi maps a plugin's return value to a Code; unknown values become kError.
Code CodeFromAbi(int32_t value);

/// Reasons are a status's messages. Nearly every status has one, kept inline: a failed cycle
/// makes a status per rejected node, and a preemption dry run several per node.
using Reasons = boost::container::small_vector<std::string, 1>;

/// Status is a code, its reasons and the plugin that produced it.
struct Status {
  Code code = Code::kSuccess;
  Reasons reasons;
  std::string plugin;

  static Status Success() { return {}; }
  static Status Error(std::string msg, std::string plugin = "") {
    return Status{Code::kError, {std::move(msg)}, std::move(plugin)};
  }
  static Status Make(Code code, std::string msg, std::string plugin = "") {
    return Status{code, {std::move(msg)}, std::move(plugin)};
  }

  bool ok() const { return code == Code::kSuccess; }
  /// IsRejected is true for Unschedulable, UnschedulableAndUnresolvable and Pending.
  bool IsRejected() const {
    return code == Code::kUnschedulable || code == Code::kUnschedulableAndUnresolvable ||
           code == Code::kPending;
  }
  /// Message joins the reasons with ", " as upstream's Status.Message().
  std::string Message() const;
};

/// NodeStatuses is each rejected node's Filter status (upstream's NodeToStatusMap): at most one
/// entry per node, in no promised order (the scheduler's is evaluation order). Names are views
/// of strings that outlive the cycle (the snapshot's nodes, the interner), so building one
/// copies no name.
using NodeStatuses = std::vector<std::pair<std::string_view, Status>>;

/// StatusSink collects the reasons a plugin adds during one call; it is what a
/// schedhost_status* points to.
struct StatusSink {
  Reasons reasons;
  schedhost_status* abi() { return reinterpret_cast<schedhost_status*>(this); }
  static StatusSink* From(schedhost_status* s) { return reinterpret_cast<StatusSink*>(s); }
};

/// ToStatus turns a plugin's raw return value and collected reasons into a Status. A non-success
/// code without reasons gets a generic reason naming the plugin, so no failure is silent.
Status ToStatus(int32_t raw, StatusSink& sink, std::string_view plugin);

}  // namespace schedhost::framework
