// AdminService: schedhost.v1.Admin over a running scheduler — its profiles and plugin libraries,
// its queue and throughput, why a pod went (or did not go) where it did, and Reload, which
// re-reads the config file, builds its ProfileSet off the scheduling loop and only then swaps it
// in (Scheduler::ReplaceProfiles); a refused config changes nothing.
//
//   api::AdminService admin(store, *scheduler, {.config_file = path, .builtin_dir = dir});
//   builder.RegisterService(&admin);
#pragma once

#include <schedhost/plugin.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/host_config.h"
#include "host/loader/library_store.h"
#include "host/store/cluster_writer.h"
#include "host/store/store.h"
#include "schedhost/v1/admin.grpc.pb.h"

namespace schedhost::scheduler {
class ProfileSet;
class Scheduler;
struct CycleExplanation;
struct ShadowStatus;
}  // namespace schedhost::scheduler

namespace schedhost::api {

// AdminOptions says where the host's config came from, for Reload.
struct AdminOptions {
  // config_file is the file the host was started with; empty when it was built without one
  // (Reload then answers FAILED_PRECONDITION).
  std::filesystem::path config_file;
  // builtin_dir is the builtin plugin directory ProfileSet::Build falls back to.
  std::filesystem::path builtin_dir;
  // in_process are plugin descriptors registered in every set a reload builds (tests and
  // embedders; they must outlive the service).
  std::vector<const schedhost_plugin_descriptor*> in_process;
  // library_store loads the libraries of every set a reload builds (shadow copies, unchanged
  // versions reused) and lists their versions for ListPlugins; null: libraries load in place.
  std::shared_ptr<loader::LibraryStore> library_store;
  // running is the config the host was started with: a reload that changes a setting only a
  // restart applies (listeners, TLS, backoff, log level, state_dir, unload) says so.
  std::optional<config::HostConfig> running;
  // build, when set, builds a reload's ProfileSet in place of ProfileSet::Build on the calling
  // thread: ServiceHost runs it on its control thread (creates and destroys on one thread).
  std::function<std::shared_ptr<const scheduler::ProfileSet>(const config::HostConfig&)> build;
  // lifecycle, when set, runs a reload's build and swap (plugin create, events_to_register) on
  // the thread the host keeps for plugin lifecycle calls; empty: on the calling thread.
  std::function<void(const std::function<void()>&)> lifecycle;
  // leadership, when set, says where this replica stands in leader election (Stats).
  std::function<store::Leadership()> leadership;
};

// ReloadRecord is the outcome of one reload, for Stats and the UI's reload history.
struct ReloadRecord {
  std::string result;  // "" (none yet), "success" or "failure"
  std::string message;
  int64_t unix_seconds = 0;
  uint64_t generation = 0;  // the live profile set's generation after it
};

// kReloadHistory is how many reloads AdminService remembers (the newest kept).
inline constexpr size_t kReloadHistory = 32;

// UpstreamPointName returns an extension point's name as upstream spells it ("PreFilter").
std::string_view UpstreamPointName(size_t point_index);

// FillExplanation renders `explanation` into `out` (nodes and nodes_not_evaluated): feasible
// nodes first, best total first, then the others, ties by name.
void FillExplanation(const scheduler::CycleExplanation& explanation, v1::ExplainResponse& out);

// FillShadows renders the shadow statuses named by `profile` ("" for all) into `out`, the
// disagreement of the pod with `uid` (if any) with both cycles node by node; false when
// `profile` names none of them.
bool FillShadows(const std::vector<scheduler::ShadowStatus>& shadows, std::string_view profile,
                 std::string_view uid, v1::ShadowResponse& out);

// AdminService implements schedhost.v1.Admin; thread-safe, as gRPC calls it.
class AdminService final : public v1::Admin::Service {
 public:
  // AdminService serves `store` and `scheduler` (not owned; both must outlive the service).
  AdminService(store::Store& store, scheduler::Scheduler& scheduler, AdminOptions options);

  grpc::Status Reload(grpc::ServerContext* context, const v1::ReloadRequest* request,
                      v1::ReloadResponse* response) override;
  grpc::Status ListProfiles(grpc::ServerContext* context, const v1::ListProfilesRequest* request,
                            v1::ListProfilesResponse* response) override;
  grpc::Status ListPlugins(grpc::ServerContext* context, const v1::ListPluginsRequest* request,
                           v1::ListPluginsResponse* response) override;
  grpc::Status Stats(grpc::ServerContext* context, const v1::StatsRequest* request,
                     v1::StatsResponse* response) override;
  grpc::Status Explain(grpc::ServerContext* context, const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;
  grpc::Status GetShadows(grpc::ServerContext* context, const v1::ShadowRequest* request,
                          v1::ShadowResponse* response) override;
  grpc::Status StartShadow(grpc::ServerContext* context, const v1::ShadowRequest* request,
                           v1::ShadowResponse* response) override;
  grpc::Status StopShadow(grpc::ServerContext* context, const v1::ShadowRequest* request,
                          v1::ShadowResponse* response) override;
  grpc::Status PromoteShadow(grpc::ServerContext* context, const v1::ShadowRequest* request,
                             v1::ReloadResponse* response) override;

  // ReloadHistory returns the last kReloadHistory reloads (Admin calls and SIGHUP), newest
  // first.
  std::vector<ReloadRecord> ReloadHistory() const;

 private:
  // SetShadowRunning starts (`run`) or stops the shadows `request` names, for Start/StopShadow.
  grpc::Status SetShadowRunning(const v1::ShadowRequest& request, bool run,
                                v1::ShadowResponse& response);

  store::Store& store_;
  scheduler::Scheduler& scheduler_;
  AdminOptions options_;
  std::mutex reload_mu_;   // one Reload at a time: each builds a whole ProfileSet
  std::mutex promote_mu_;  // one PromoteShadow at a time: each rewrites the config file
  mutable std::mutex record_mu_;
  std::deque<ReloadRecord> reloads_;  // newest first; guarded by record_mu_
};

}  // namespace schedhost::api
