// The enumerated fields of the scheduling-relevant Kubernetes objects, with their manifest
// spellings. Each enum's numeric values equal the matching plugin.h constants, so a view field
// is the enum cast to int32_t. Parse* functions accept exactly upstream's spellings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "schedhost/plugin.h"

namespace schedhost::model {

// SelectorOp is a label or node selector operator (In, NotIn, Exists, DoesNotExist, Gt, Lt).
enum class SelectorOp : int32_t {
  kIn = SCHEDHOST_OP_IN,
  kNotIn = SCHEDHOST_OP_NOT_IN,
  kExists = SCHEDHOST_OP_EXISTS,
  kDoesNotExist = SCHEDHOST_OP_DOES_NOT_EXIST,
  kGt = SCHEDHOST_OP_GT,
  kLt = SCHEDHOST_OP_LT,
};

// TaintEffect is a taint's or toleration's effect; kNone only appears on tolerations.
enum class TaintEffect : int32_t {
  kNone = SCHEDHOST_EFFECT_NONE,
  kNoSchedule = SCHEDHOST_EFFECT_NO_SCHEDULE,
  kPreferNoSchedule = SCHEDHOST_EFFECT_PREFER_NO_SCHEDULE,
  kNoExecute = SCHEDHOST_EFFECT_NO_EXECUTE,
};

// TolerationOperator is a toleration's operator; an empty manifest value means kEqual.
enum class TolerationOperator : int32_t {
  kEqual = SCHEDHOST_TOLERATION_EQUAL,
  kExists = SCHEDHOST_TOLERATION_EXISTS,
};

// WhenUnsatisfiable is what a topology spread constraint does when it cannot be met.
enum class WhenUnsatisfiable : int32_t {
  kDoNotSchedule = SCHEDHOST_DO_NOT_SCHEDULE,
  kScheduleAnyway = SCHEDHOST_SCHEDULE_ANYWAY,
};

// NodeInclusionPolicy is a spread constraint's nodeAffinityPolicy / nodeTaintsPolicy.
enum class NodeInclusionPolicy : int32_t {
  kHonor = SCHEDHOST_POLICY_HONOR,
  kIgnore = SCHEDHOST_POLICY_IGNORE,
};

// PreemptionPolicy is a pod's or PriorityClass's preemptionPolicy.
enum class PreemptionPolicy : int32_t {
  kPreemptLowerPriority = SCHEDHOST_PREEMPT_LOWER_PRIORITY,
  kNever = SCHEDHOST_PREEMPT_NEVER,
};

// Protocol is a container port's protocol; TCP is the default.
enum class Protocol : int32_t { kTCP, kUDP, kSCTP };

// ToString returns the manifest spelling of each enum value ("" for TaintEffect::kNone).
std::string_view ToString(SelectorOp v);
std::string_view ToString(TaintEffect v);
std::string_view ToString(TolerationOperator v);
std::string_view ToString(WhenUnsatisfiable v);
std::string_view ToString(NodeInclusionPolicy v);
std::string_view ToString(PreemptionPolicy v);
std::string_view ToString(Protocol v);

// ParseSelectorOp reads "In", "NotIn", "Exists", "DoesNotExist", "Gt" or "Lt".
std::optional<SelectorOp> ParseSelectorOp(std::string_view s);
// ParseTaintEffect reads "NoSchedule", "PreferNoSchedule", "NoExecute" or "" (kNone).
std::optional<TaintEffect> ParseTaintEffect(std::string_view s);
// ParseTolerationOperator reads "Equal", "Exists" or "" (kEqual).
std::optional<TolerationOperator> ParseTolerationOperator(std::string_view s);
// ParseWhenUnsatisfiable reads "DoNotSchedule" or "ScheduleAnyway".
std::optional<WhenUnsatisfiable> ParseWhenUnsatisfiable(std::string_view s);
// ParseNodeInclusionPolicy reads "Honor" or "Ignore".
std::optional<NodeInclusionPolicy> ParseNodeInclusionPolicy(std::string_view s);
// ParsePreemptionPolicy reads "PreemptLowerPriority" or "Never".
std::optional<PreemptionPolicy> ParsePreemptionPolicy(std::string_view s);
// ParseProtocol reads "TCP", "UDP" or "SCTP".
std::optional<Protocol> ParseProtocol(std::string_view s);

// ProtocolId returns the well-known interned id (SCHEDHOST_ID_PROTOCOL_*) of a protocol.
schedhost_id ProtocolId(Protocol p);

}  // namespace schedhost::model
