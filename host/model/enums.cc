#include "host/model/enums.h"

#include <utility>

namespace schedhost::model {
namespace {

template <class E, size_t N>
std::string_view Name(const std::pair<E, std::string_view> (&table)[N], E v) {
  for (const auto& [value, name] : table) {
    if (value == v) return name;
  }
  return "<invalid>";
}

template <class E, size_t N>
std::optional<E> Find(const std::pair<E, std::string_view> (&table)[N], std::string_view s) {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

constexpr std::pair<SelectorOp, std::string_view> kSelectorOps[] = {
    {SelectorOp::kIn, "In"},         {SelectorOp::kNotIn, "NotIn"},
    {SelectorOp::kExists, "Exists"}, {SelectorOp::kDoesNotExist, "DoesNotExist"},
    {SelectorOp::kGt, "Gt"},         {SelectorOp::kLt, "Lt"},
};
constexpr std::pair<TaintEffect, std::string_view> kEffects[] = {
    {TaintEffect::kNone, ""},
    {TaintEffect::kNoSchedule, "NoSchedule"},
    {TaintEffect::kPreferNoSchedule, "PreferNoSchedule"},
    {TaintEffect::kNoExecute, "NoExecute"},
};
constexpr std::pair<TolerationOperator, std::string_view> kTolerationOps[] = {
    {TolerationOperator::kEqual, "Equal"},
    {TolerationOperator::kExists, "Exists"},
};
constexpr std::pair<WhenUnsatisfiable, std::string_view> kWhen[] = {
    {WhenUnsatisfiable::kDoNotSchedule, "DoNotSchedule"},
    {WhenUnsatisfiable::kScheduleAnyway, "ScheduleAnyway"},
};
constexpr std::pair<NodeInclusionPolicy, std::string_view> kPolicies[] = {
    {NodeInclusionPolicy::kHonor, "Honor"},
    {NodeInclusionPolicy::kIgnore, "Ignore"},
};
constexpr std::pair<PreemptionPolicy, std::string_view> kPreemption[] = {
    {PreemptionPolicy::kPreemptLowerPriority, "PreemptLowerPriority"},
    {PreemptionPolicy::kNever, "Never"},
};
constexpr std::pair<Protocol, std::string_view> kProtocols[] = {
    {Protocol::kTCP, "TCP"},
    {Protocol::kUDP, "UDP"},
    {Protocol::kSCTP, "SCTP"},
};

}  // namespace

std::string_view ToString(SelectorOp v) { return Name(kSelectorOps, v); }
std::string_view ToString(TaintEffect v) { return Name(kEffects, v); }
std::string_view ToString(TolerationOperator v) { return Name(kTolerationOps, v); }
std::string_view ToString(WhenUnsatisfiable v) { return Name(kWhen, v); }
std::string_view ToString(NodeInclusionPolicy v) { return Name(kPolicies, v); }
std::string_view ToString(PreemptionPolicy v) { return Name(kPreemption, v); }
std::string_view ToString(Protocol v) { return Name(kProtocols, v); }

std::optional<SelectorOp> ParseSelectorOp(std::string_view s) { return Find(kSelectorOps, s); }
std::optional<TaintEffect> ParseTaintEffect(std::string_view s) { return Find(kEffects, s); }
std::optional<TolerationOperator> ParseTolerationOperator(std::string_view s) {
  if (s.empty()) return TolerationOperator::kEqual;
  return Find(kTolerationOps, s);
}
std::optional<WhenUnsatisfiable> ParseWhenUnsatisfiable(std::string_view s) {
  return Find(kWhen, s);
}
std::optional<NodeInclusionPolicy> ParseNodeInclusionPolicy(std::string_view s) {
  return Find(kPolicies, s);
}
std::optional<PreemptionPolicy> ParsePreemptionPolicy(std::string_view s) {
  return Find(kPreemption, s);
}
std::optional<Protocol> ParseProtocol(std::string_view s) { return Find(kProtocols, s); }

schedhost_id ProtocolId(Protocol p) {
  switch (p) {
    case Protocol::kUDP:
      return SCHEDHOST_ID_PROTOCOL_UDP;
    case Protocol::kSCTP:
      return SCHEDHOST_ID_PROTOCOL_SCTP;
    case Protocol::kTCP:
      break;
  }
  return SCHEDHOST_ID_PROTOCOL_TCP;
}

}  // namespace schedhost::model
