// Status: the host-side result of running an extension point, and the ABI status sink.
//
// Plugins return an int32 code and add reasons through the host table; the host turns that
// into a Status that also remembers which plugin produced it (upstream's FailedPlugin).
#pragma once

#include <schedhost/plugin.h>

#include <boost/container/small_vector.hpp>
#include <iosfwd>
#include <memory>
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

/// Text is an immutable string that copies without allocating or touching a shared counter
/// when interned. A failed cycle makes a status per rejected node, nearly all with the same
/// plugin and reason: each distinct reason a plugin gives and each plugin name is made once,
/// in a process-wide pool, and every status carrying it points there. Other texts (error
/// messages, which often name a pod) own a reference-counted copy; so does a reason once the
/// pool is full (a plugin that words each rejection differently), which keeps the pool bounded.
class Text {
 public:
  /// The empty text: no string behind it, so a default Status costs two null pointers.
  Text() noexcept = default;
  /// A text owning a copy of `s` (not interned).
  explicit Text(std::string s);
  Text(const char* s) : Text(std::string(s)) {}  // NOLINT(google-explicit-constructor): literals
  /// Intern returns the pool's text equal to `s`, adding it when new; an owned copy when the pool
  /// is full. Recent texts are found in a per-thread cache before the pool's lock.
  static Text Intern(std::string_view s);

  const std::string& str() const noexcept { return p_ ? *p_ : Empty(); }
  std::string_view view() const noexcept { return p_ ? std::string_view(*p_) : std::string_view(); }
  // NOLINTNEXTLINE(google-explicit-constructor): a Text reads as a string_view
  operator std::string_view() const noexcept { return view(); }
  bool empty() const noexcept { return !p_ || p_->empty(); }
  size_t size() const noexcept { return p_ ? p_->size() : 0; }
  const char* data() const noexcept { return view().data(); }
  /// interned is true for a text of the pool (or the empty text): it owns no memory of its own.
  bool interned() const noexcept { return p_.use_count() == 0; }

  friend bool operator==(const Text& a, const Text& b) noexcept {
    return a.p_ == b.p_ || a.view() == b.view();
  }
  friend bool operator==(const Text& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator==(const Text& a, const char* b) noexcept { return a.view() == b; }
  friend bool operator<(const Text& a, const Text& b) noexcept { return a.view() < b.view(); }

 private:
  explicit Text(std::shared_ptr<const std::string> p) noexcept : p_(std::move(p)) {}
  static const std::string& Empty() noexcept;
  // Interned texts alias the pool's string with no control block: copies count nothing.
  // Null for the empty text.
  std::shared_ptr<const std::string> p_;
};

std::string operator+(const std::string& a, const Text& b);
std::string operator+(const char* a, const Text& b);
std::string operator+(const Text& a, const char* b);
std::ostream& operator<<(std::ostream& os, const Text& t);

/// Reasons are a status's messages. Nearly every status has one, kept inline: a failed cycle
/// makes a status per rejected node, and a preemption dry run several per node.
using Reasons = boost::container::small_vector<Text, 1>;

/// Status is a code, its reasons and the plugin that produced it.
struct Status {
  Code code = Code::kSuccess;
  Reasons reasons;
  Text plugin;

  static Status Success() { return {}; }
  static Status Error(std::string msg, Text plugin = {}) {
    return Status{Code::kError, {Text(std::move(msg))}, std::move(plugin)};
  }
  static Status Make(Code code, std::string msg, Text plugin = {}) {
    return Status{code, {Text(std::move(msg))}, std::move(plugin)};
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
Status ToStatus(int32_t raw, StatusSink& sink, const Text& plugin);

}  // namespace schedhost::framework
