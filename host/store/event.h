// Object kinds the store keeps and the events its watchers receive. Objects travel as
// model::Object (a variant of the five immutable shared_ptr types); an event carries the new
// state, the previous one for MODIFIED and DELETED, and the store-wide resource version.
//
//   store.Watch(0, [](const store::Event& e) { if (e.kind == store::Kind::kPod) ... });
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "host/model/decode.h"

namespace schedhost::store {

// Kind is the type of a stored object.
enum class Kind : uint8_t { kPod, kNode, kPodDisruptionBudget, kPriorityClass, kNamespace };

// ToString names a kind as Kubernetes does ("Pod", "Node", "PodDisruptionBudget", ...).
std::string_view ToString(Kind kind);

// KindOf returns the kind of the object held by `object`.
Kind KindOf(const model::Object& object);

// Namespaced tells whether objects of `kind` live in a namespace (Pod, PodDisruptionBudget).
constexpr bool Namespaced(Kind kind) {
  return kind == Kind::kPod || kind == Kind::kPodDisruptionBudget;
}

// ObjectKey returns the store key: "namespace/name" for namespaced kinds ("" namespace reads as
// "default"), just the name for cluster-scoped ones.
std::string ObjectKey(Kind kind, std::string_view namespace_name, std::string_view name);

// KeyOf returns the store key of `object`.
std::string KeyOf(const model::Object& object);

// The identity of the object held by `object` (which must not be null), read without decoding
// it: its name, namespace ("" for cluster-scoped kinds), uid and resource version.
std::string_view NameOf(const model::Object& object);
std::string_view NamespaceOf(const model::Object& object);
std::string_view UidOf(const model::Object& object);
uint64_t VersionOf(const model::Object& object);

// Describe renders "<Kind> <key>", e.g. "Pod default/web-1", for messages.
std::string Describe(const model::Object& object);

// EventType says what happened to an object.
enum class EventType : uint8_t { kAdded, kModified, kDeleted };

// ToString names an event type as the watch API does ("ADDED", "MODIFIED", "DELETED").
std::string_view ToString(EventType type);

// Event is one change delivered to watchers, in resource-version order.
// The log keeps up to Limits::event_log_length of them, one per change: the small fields come
// last, so that an event takes 72 bytes (seven to a deque block) rather than 80.
struct Event {
  // object is the new state (ADDED, MODIFIED) or the last stored state (DELETED).
  model::Object object;
  // old_object is the state before the change (MODIFIED, DELETED); empty for ADDED.
  std::optional<model::Object> old_object;
  // resource_version is the store version this change created; for a resync it is the store's
  // version when the resync was taken (the same for every event of the resync).
  uint64_t resource_version = 0;
  EventType type = EventType::kAdded;
  Kind kind = Kind::kPod;
  // resync marks the synthetic ADDED events sent instead of a replay when the watcher asked for
  // history older than the event log keeps: one per object existing at that moment.
  bool resync = false;
};

}  // namespace schedhost::store
