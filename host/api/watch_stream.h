// The Cluster service's watches: a store callback queues events into a WatchStream, and the
// RPC's thread pumps them to the client (PumpWatch) until the client goes, the host stops, the
// watcher falls too far behind or its history is gone. Used for the built-in kinds' store
// events and for declared kinds' ObjectStore events alike.
//
//   auto stream = std::make_shared<WatchStream<store::Event>>();
//   store.Watch(from, [stream](const store::Event& e) { stream->Push(e); });
//   return PumpWatch(context, *stream, shutting_down, too_old, hint, [&](const auto& e) {...});
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include <grpcpp/server_context.h>

#include "host/api/cluster_service.h"

namespace schedhost::api::internal {

// ProtoEventType maps a store event type to the proto's.
inline v1::EventType ProtoEventType(store::EventType type) {
  switch (type) {
    case store::EventType::kAdded: return v1::ADDED;
    case store::EventType::kModified: return v1::MODIFIED;
    case store::EventType::kDeleted: return v1::DELETED;
  }
  return v1::EVENT_TYPE_UNSPECIFIED;
}

// WatchStream is what a store callback shares with the RPC's thread.
template <class E>
struct WatchStream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<E> events;
  bool overflowed = false;
  bool expired = false;  // the history the watcher asked for is gone

  // Push queues `e` (callback side); `expire` marks the stream expired instead.
  void Push(const E& e, bool expire = false) {
    std::lock_guard lock(mu);
    if (expire) expired = true;
    if (events.size() >= kMaxWatchBacklog) overflowed = true;
    if (!expired && !overflowed) events.push_back(e);
    cv.notify_one();
  }
};

// PumpWatch hands every queued event to `write` (false: the client is gone) until the client
// cancels, `shutting_down` is set (UNAVAILABLE), the stream expired (`too_old()`) or overflowed
// (RESOURCE_EXHAUSTED, `resume` says how to go on).
template <class E, class Write>
grpc::Status PumpWatch(grpc::ServerContext* context, WatchStream<E>& stream,
                       const std::atomic<bool>& shutting_down,
                       const std::function<grpc::Status()>& too_old, std::string_view resume,
                       Write&& write) {
  constexpr auto kPollInterval = std::chrono::milliseconds(100);  // cancellation and shutdown
  std::deque<E> batch;
  for (;;) {
    {
      std::unique_lock lock(stream.mu);
      stream.cv.wait_for(lock, kPollInterval, [&] {
        return !stream.events.empty() || stream.expired || stream.overflowed;
      });
      batch.swap(stream.events);
      if (batch.empty() && stream.expired) return too_old();
      if (batch.empty() && stream.overflowed) {
        return {grpc::StatusCode::RESOURCE_EXHAUSTED,
                "the watcher fell more than " + std::to_string(kMaxWatchBacklog) +
                    " events behind; " + std::string(resume)};
      }
    }
    if (context->IsCancelled()) return grpc::Status::OK;
    if (shutting_down.load()) return {grpc::StatusCode::UNAVAILABLE, "the host is shutting down"};
    for (const E& e : batch) {
      if (!write(e)) return grpc::Status::OK;  // the client is gone
    }
    batch.clear();
  }
}

}  // namespace schedhost::api::internal
