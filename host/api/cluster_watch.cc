// ClusterService::Watch: a store watch feeding a per-stream queue (watch_stream.h). The store
// runs callbacks on the writer's thread, so the callback only filters and queues; this RPC's
// thread encodes and writes.
#include "host/api/cluster_kinds.h"
#include "host/api/cluster_service.h"
#include "host/api/watch_stream.h"

namespace schedhost::api {

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

  auto stream = std::make_shared<internal::WatchStream<store::Event>>();
  uint64_t id = 0;
  try {
    id = store_.Watch(from, [stream, any_kind, kinds, ns, from](const store::Event& e) {
      if (!any_kind && !kinds[static_cast<int>(e.kind)]) return;
      if (!ns.empty() && store::Namespaced(e.kind) && store::NamespaceOf(e.object) != ns) {
        return;
      }
      stream->Push(e, e.resync && from != 0);
    });
  } catch (const store::StoreError& e) {
    return ToStatus(e);
  }
  v1::WatchEvent out;
  grpc::Status result = internal::PumpWatch(
      context, *stream, shutting_down_, too_old,
      "watch again from the last resource_version received", [&](const store::Event& e) {
        out.Clear();
        out.set_type(internal::ProtoEventType(e.type));
        out.set_resource_version(e.resource_version);
        ToProto(e.object, *out.mutable_object());
        return writer->Write(out);
      });
  store_.Unwatch(id);
  return result;
}

}  // namespace schedhost::api
