// EventRouter: store events -> cache and queue, as upstream's eventhandlers.go.
#include "host/scheduler/event_router.h"

#include <spdlog/spdlog.h>

#include "host/queue/cluster_event.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::scheduler {
namespace {

using PodPtr = std::shared_ptr<const model::Pod>;
using NodePtr = std::shared_ptr<const model::Node>;

bool Bound(const PodPtr& pod) { return pod && !pod->node_name().empty(); }

}  // namespace

void EventRouter::Start() {
  watch_id_ = s_.store_.Watch(0, [this](const store::Event& e) { Route(e); });
  // Objects stored before now concern no unschedulable pod yet: no backlog to replay.
  object_watch_id_ = s_.store_.objects().Watch([this](const store::ObjectEvent& e) { RouteObject(e); });
}

void EventRouter::Stop() {
  if (watch_id_ != 0) s_.store_.Unwatch(watch_id_);
  if (object_watch_id_ != 0) s_.store_.objects().Unwatch(object_watch_id_);
  watch_id_ = 0;
  object_watch_id_ = 0;
}

void EventRouter::RouteObject(const store::ObjectEvent& event) {
  try {
    auto tree = [](const std::shared_ptr<const store::StoredObject>& o) {
      return o ? o->tree : nullptr;
    };
    const bool deleted = event.type == store::EventType::kDeleted;
    s_.queue_->MoveAllToActiveOrBackoffQueue(queue::MakeObjectEvent(
        event.key, event.kind, tree(event.old_object),
        deleted ? nullptr : tree(event.object)));
  } catch (const std::exception& e) {
    spdlog::error("scheduler: routing {} {} {}/{} failed: {}", store::ToString(event.type),
                  event.key, event.object->namespace_name, event.object->name, e.what());
  }
}

void EventRouter::Route(const store::Event& event) {
  try {
    if (event.kind == store::Kind::kPod) RoutePod(event);
    if (event.kind == store::Kind::kNode) RouteNode(event);
    if (event.kind == store::Kind::kNamespace) RouteNamespace(event);
    // PDBs and PriorityClasses change no placement by themselves (priorities are resolved on
    // admission); preemption reads them from the store when it runs.
  } catch (const std::exception& e) {
    spdlog::error("scheduler: routing {} {} failed: {}", store::ToString(event.type),
                  store::Describe(event.object), e.what());
  }
}

void EventRouter::RouteNamespace(const store::Event& event) {
  // Namespace labels matter to InterPodAffinity's namespaceSelector; like upstream's
  // namespace informer they move no pod by themselves.
  const auto ns = std::get<std::shared_ptr<const model::Namespace>>(event.object);
  if (event.type == store::EventType::kDeleted) {
    s_.cache_.RemoveNamespace(ns->name());
  } else {
    s_.cache_.SetNamespace(ns);
  }
}

void EventRouter::RoutePod(const store::Event& event) {
  const PodPtr pod = std::get<PodPtr>(event.object);
  const PodPtr old = event.old_object ? std::get<PodPtr>(*event.old_object) : nullptr;
  queue::SchedulingQueue& q = *s_.queue_;
  cache::Cache& cache = s_.cache_;
  auto responsible = [&](const PodPtr& p) {
    return p && s_.profiles()->FrameworkFor(*p) != nullptr;
  };
  auto add_bound = [&](const PodPtr& p) {
    try {
      cache.AddPod(p);  // confirms the pod when it was assumed
    } catch (const cache::CacheError&) {
      cache.UpdatePod(p);  // a resync of a pod the cache already holds
    }
    q.AssignedPodAdded(p);
  };

  switch (event.type) {
    case store::EventType::kAdded:
      if (Bound(pod)) {
        add_bound(pod);
      } else if (responsible(pod)) {
        try {
          q.Add(pod);
        } catch (const queue::QueueError&) {
          q.Update(nullptr, pod);  // already queued (a resync)
        }
      }
      return;
    case store::EventType::kModified:
      if (Bound(pod) && !Bound(old)) {
        // The binding: the pod leaves the queue (its flight ends with the binding cycle) and
        // the cache confirms the assumed copy.
        q.Delete(*pod);
        add_bound(pod);
      } else if (Bound(pod)) {
        try {
          cache.UpdatePod(pod);
        } catch (const cache::CacheError&) {
          cache.AddPod(pod);
        }
        q.AssignedPodUpdated(old, pod);
      } else if (responsible(pod)) {
        // Upstream skips updates of assumed pods; here the queue keeps the newer object of an
        // in-flight pod for its requeue without scheduling it twice, and the requeue must carry
        // the new resource version (binding checks it), so the update goes through.
        q.Update(old, pod);
      } else if (responsible(old)) {
        q.Delete(*pod);  // its schedulerName no longer names a profile here
      }
      return;
    case store::EventType::kDeleted:
      s_.ForgetDiagnostics(pod->uid());
      if (Bound(pod)) {
        try {
          cache.RemovePod(pod->uid());
        } catch (const cache::CacheError&) {
        }
        q.AssignedPodDeleted(pod);
        return;
      }
      q.Delete(*pod);
      // The binding cycle of a rejected pod unreserves and forgets it, which wakes the pods
      // that its resources may now fit. It may wait in a set a reload replaced.
      s_.RejectWaiting(pod->uid(), "", "removed");
      return;
  }
}

void EventRouter::RouteNode(const store::Event& event) {
  const NodePtr node = std::get<NodePtr>(event.object);
  const NodePtr old = event.old_object ? std::get<NodePtr>(*event.old_object) : nullptr;
  queue::SchedulingQueue& q = *s_.queue_;
  switch (event.type) {
    case store::EventType::kAdded:
      s_.cache_.AddNode(node);
      q.MoveAllToActiveOrBackoffQueue(queue::MakeNodeAddEvent(node));
      return;
    case store::EventType::kModified:
      s_.cache_.UpdateNode(node);
      if (old) {
        if (auto ev = queue::MakeNodeUpdateEvent(old, node)) q.MoveAllToActiveOrBackoffQueue(*ev);
      }
      return;
    case store::EventType::kDeleted:
      try {
        s_.cache_.RemoveNode(node->name());
      } catch (const cache::CacheError&) {
      }
      q.MoveAllToActiveOrBackoffQueue(queue::MakeNodeDeleteEvent(node));
      return;
  }
}

}  // namespace schedhost::scheduler
