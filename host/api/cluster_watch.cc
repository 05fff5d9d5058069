// ClusterService::Watch: a store watch feeding a per-stream queue. The store runs callbacks on
// the writer's thread, so the callback only filters and queues; this RPC's thread encodes and
// writes, and ends the stream when the client goes, the host stops or the client falls too far
// behind.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "host/api/cluster_kinds.h"
#include "host/api/cluster_service.h"

namespace schedhost::api {
namespace {

// How often a waiting stream looks at cancellation and shutdown.
constexpr auto kPollInterval = std::chrono::milliseconds(100);

v1::EventType ProtoType(store::EventType type) {
  switch (type) {
    case store::EventType::kAdded: return v1::ADDED;
    case store::EventType::kModified: return v1::MODIFIED;
    case store::EventType::kDeleted: return v1::DELETED;
  }
  return v1::EVENT_TYPE_UNSPECIFIED;
}

// Stream is what the store's callback shares with the RPC thread.
struct Stream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<store::Event> events;
  bool overflowed = false;
  bool expired = false;  // The store resynced a watch that asked for a version: history is gone.
};

}  // namespace

grpc::Status ClusterService::Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                                   grpc::ServerWriter<v1::WatchEvent>* writer) {
  if (!request->resources().empty()) {
    if (!request->kinds().empty()) {
      return internal::Invalid(
          "kinds: cannot be combined with resources (declared kinds have their own versions): "
          "watch them in two streams");
    }
    return WatchDeclared(context, *request, writer);
  }
  bool kinds[5] = {};
  bool any_kind = request->kinds().empty();
  for (int i = 0; i < request->kinds_size(); ++i) {
    std::optional<store::Kind> kind;
    std::string field = "kinds[" + std::to_string(i) + "]";
    if (grpc::Status s = internal::CheckKind(request->kinds(i), field.c_str(), kind); !s.ok()) {
      return s;
    }
    kinds[static_cast<int>(*kind)] = true;
  }
  const std::string& ns = request->namespace_();
  if (grpc::Status s = internal::CheckNamespace(ns, "namespace"); !s.ok()) return s;
  const uint64_t from = request->resource_version();
  if (from > store_.resource_version()) {
    return internal::Invalid("resource_version: " + std::to_string(from) +
                             " is newer than the store's " +
                             std::to_string(store_.resource_version()));
  }
  const auto too_old = [&] {
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                        "resource_version: " + std::to_string(from) +
                            " is too old: the event log starts after " +
                            std::to_string(store_.oldest_replayable_rv()) +
                            "; list again and watch from the list's resource_version");
  };
  if (from != 0 && from < store_.oldest_replayable_rv()) return too_old();
  if (shutting_down_) return {grpc::StatusCode::UNAVAILABLE, "the host is shutting down"};

  auto stream = std::make_shared<Stream>();
  uint64_t id = 0;
  try {
    id = store_.Watch(from, [stream, any_kind, kinds, ns, from](const store::Event& e) {
      if (!any_kind && !kinds[static_cast<int>(e.kind)]) return;
      if (!ns.empty() && store::Namespaced(e.kind) && store::NamespaceOf(e.object) != ns) {
        return;
      }
      std::lock_guard lock(stream->mu);
      if (e.resync && from != 0) stream->expired = true;
      if (stream->events.size() >= kMaxWatchBacklog) stream->overflowed = true;
      if (!stream->expired && !stream->overflowed) stream->events.push_back(e);
      stream->cv.notify_one();
    });
  } catch (const store::StoreError& e) {
    return ToStatus(e);
  }

  grpc::Status result = grpc::Status::OK;
  std::deque<store::Event> batch;
  v1::WatchEvent out;
  while (true) {
    {
      std::unique_lock lock(stream->mu);
      stream->cv.wait_for(lock, kPollInterval, [&] {
        return !stream->events.empty() || stream->expired || stream->overflowed;
      });
      batch.swap(stream->events);
      if (batch.empty()) {
        if (stream->expired) {
          result = too_old();
          break;
        }
        if (stream->overflowed) {
          result = {grpc::StatusCode::RESOURCE_EXHAUSTED,
                    "the watcher fell more than " + std::to_string(kMaxWatchBacklog) +
                        " events behind; watch again from the last resource_version received"};
          break;
        }
      }
    }
    if (context->IsCancelled()) break;
    if (shutting_down_) {
      result = {grpc::StatusCode::UNAVAILABLE, "the host is shutting down"};
      break;
    }
    bool write_failed = false;
    for (const store::Event& e : batch) {
      out.Clear();
      out.set_type(ProtoType(e.type));
      out.set_resource_version(e.resource_version);
      ToProto(e.object, *out.mutable_object());
      if (!writer->Write(out)) {
        write_failed = true;  // The client is gone.
        break;
      }
    }
    batch.clear();
    if (write_failed) break;
  }
  store_.Unwatch(id);
  return result;
}

}  // namespace schedhost::api
