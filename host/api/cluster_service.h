// ClusterService: schedhost.v1.Cluster over a store::Store — Apply (create or update with
// optimistic concurrency), Delete, Get, List (label selectors) and Watch (resumable from a
// resource version). Objects travel as Kubernetes manifests (see cluster.proto); requests are
// decoded and validated by the model decoder, and a refused request changes nothing and gets
// INVALID_ARGUMENT naming the field. The scheduler sees every change through its own store
// watch, so bindings and nominations come back to watchers as pod updates.
//
//   store::Store store;
//   api::ClusterService cluster(store);
//   builder.RegisterService(&cluster);      // ... cluster.Shutdown() before server->Shutdown()
#pragma once

#include <atomic>
#include <cstddef>

#include "host/api/label_selector.h"
#include "host/model/decode.h"
#include "host/store/store.h"
#include "schedhost/v1/cluster.grpc.pb.h"

namespace schedhost::api {

// kMaxManifestBytes bounds one object's manifest in a request (etcd's default request limit).
inline constexpr size_t kMaxManifestBytes = size_t{1536} * 1024;
// kMaxSelectorBytes bounds a label selector string.
inline constexpr size_t kMaxSelectorBytes = 4096;
// kMaxWatchBacklog is how many events a watcher may fall behind before its stream is ended
// with RESOURCE_EXHAUSTED (it resumes from its last version, as after any disconnect).
inline constexpr size_t kMaxWatchBacklog = 100'000;

// ToStatus maps a store refusal onto the gRPC code the Kubernetes API's HTTP status
// corresponds to (NotFound, AlreadyExists, Conflict -> ABORTED, Invalid, limits).
grpc::Status ToStatus(const store::StoreError& error);

// ToProto fills `out` with `object`: identity fields plus its manifest as Kubernetes JSON.
void ToProto(const model::Object& object, v1::Object& out);
// ToProto fills `out` with an object of the declared kind keyed `key`.
void ToProto(const std::string& key, const store::StoredObject& object, v1::Object& out);

// ClusterService implements schedhost.v1.Cluster; thread-safe, as gRPC calls it.
class ClusterService final : public v1::Cluster::Service {
 public:
  // ClusterService serves `store` (not owned; must outlive the service).
  explicit ClusterService(store::Store& store);
  // SetReadOnly makes Apply and Delete answer FAILED_PRECONDITION with `reason` (Kubernetes
  // mode: the store mirrors an API server, which is where the cluster is changed). Call before
  // serving.
  void SetReadOnly(std::string reason) { read_only_ = std::move(reason); }

  grpc::Status Apply(grpc::ServerContext* context, const v1::ApplyRequest* request,
                     v1::ApplyResponse* response) override;
  grpc::Status Delete(grpc::ServerContext* context, const v1::DeleteRequest* request,
                      v1::DeleteResponse* response) override;
  grpc::Status Get(grpc::ServerContext* context, const v1::GetRequest* request,
                   v1::GetResponse* response) override;
  grpc::Status List(grpc::ServerContext* context, const v1::ListRequest* request,
                    v1::ListResponse* response) override;
  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::WatchEvent>* writer) override;

  // Shutdown ends every open and future Watch with UNAVAILABLE so the server can stop; clients
  // resume from their last resource version elsewhere or later.
  void Shutdown();

 private:
  // Objects of declared kinds (cluster_declared.cc).
  grpc::Status Declared(const std::string& resource, const char* field,
                        store::KindInfo& out) const;
  grpc::Status ApplyDeclared(const model::GenericObject& object, v1::ApplyResponse* response);
  grpc::Status DeleteDeclared(const v1::DeleteRequest& request, v1::DeleteResponse* response);
  grpc::Status GetDeclared(const v1::GetRequest& request, v1::GetResponse* response);
  grpc::Status ListDeclared(const v1::ListRequest& request, const LabelSelector& selector,
                            v1::ListResponse* response);
  grpc::Status WatchDeclared(grpc::ServerContext* context, const v1::WatchRequest& request,
                             grpc::ServerWriter<v1::WatchEvent>* writer);

  store::Store& store_;
  std::string read_only_;  // "" : writes allowed
  std::atomic<bool> shutting_down_{false};
};

}  // namespace schedhost::api
