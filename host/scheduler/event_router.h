// EventRouter: turns store events into cache and queue updates (upstream's event handlers).
// Nodes go to the cache and wake unschedulable pods (node add / update / delete events). Bound
// pods go to the cache (an add confirms an assumed pod) and wake pods through the
// AssignedPod* events. Objects of declared kinds wake pods through their own events. Unbound pods whose schedulerName names a profile are added to, updated
// in or deleted from the queue, and a deleted pod waiting at Permit is rejected.
#pragma once

#include <cstdint>

#include "host/store/event.h"
#include "host/store/object_store.h"

namespace schedhost::scheduler {

class Scheduler;

/// EventRouter is owned by its Scheduler; callbacks run on the store's delivering thread.
class EventRouter {
 public:
  /// EventRouter routes for `scheduler`; it does not watch until Start.
  explicit EventRouter(Scheduler& scheduler) : s_(scheduler) {}
  EventRouter(const EventRouter&) = delete;
  EventRouter& operator=(const EventRouter&) = delete;

  /// Start watches the store from its first version (every stored object is routed now).
  void Start();
  /// Stop ends the watch; no callback runs once it returns.
  void Stop();

  /// Route applies one store event.
  void Route(const store::Event& event);
  /// RouteObject wakes the pods an event of a declared kind may help (upstream's handlers for
  /// PVCs, StorageClasses and the like: the queue asks the rejecting plugins' hints).
  void RouteObject(const store::ObjectEvent& event);

 private:
  void RoutePod(const store::Event& event);
  void RouteNode(const store::Event& event);
  // RouteNamespace keeps the cache's Namespace objects current.
  void RouteNamespace(const store::Event& event);

  Scheduler& s_;
  uint64_t watch_id_ = 0;
  uint64_t object_watch_id_ = 0;
};

}  // namespace schedhost::scheduler
