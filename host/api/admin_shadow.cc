// AdminService's shadow profiles: GetShadows, StartShadow, StopShadow and PromoteShadow, which
// rewrites the config file (PromoteShadowText) and reloads it through the ordinary Reload.
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/api/admin_service.h"
#include "host/config/config_error.h"
#include "host/config/promote.h"
#include "host/scheduler/scheduler.h"
#include "host/scheduler/shadow.h"

namespace schedhost::api {
namespace {

void FillCycle(const scheduler::CycleExplanation& e,
               google::protobuf::RepeatedPtrField<v1::NodeExplanation>* nodes,
               int32_t* not_evaluated) {
  v1::ExplainResponse one;
  FillExplanation(e, one);
  nodes->Swap(one.mutable_nodes());
  *not_evaluated = one.nodes_not_evaluated();
}

// WriteFile replaces `path` with `text` in one step (a temporary file renamed over it).
void WriteFile(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".promote-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot replace " + path.string() + ": " + ec.message());
  }
}

}  // namespace

bool FillShadows(const std::vector<scheduler::ShadowStatus>& shadows, std::string_view profile,
                 std::string_view uid, v1::ShadowResponse& out) {
  bool found = profile.empty();
  for (const scheduler::ShadowStatus& s : shadows) {
    if (!profile.empty() && s.profile != profile) continue;
    found = true;
    v1::ShadowStatus* o = out.add_shadows();
    o->set_profile(s.profile);
    o->set_shadow_of(s.shadow_of);
    o->set_state(s.state);
    o->set_reason(s.reason);
    o->set_generation(s.generation);
    o->set_compared(s.compared);
    o->set_skipped(s.skipped);
    o->set_errors(s.errors);
    o->set_agree_node(s.agree_node);
    o->set_agree_feasibility(s.agree_feasibility);
    o->set_agree_best(s.agree_best);
    o->set_agree_postfilter(s.agree_postfilter);
    o->set_disagreements(s.disagreements);
    o->set_cpu_seconds(s.cpu_seconds);
    o->set_memory_limit_enforced(s.memory_limit_enforced);
    for (const scheduler::ShadowDisagreement& d : s.recent) {
      v1::ShadowDisagreement* r = o->add_recent();
      r->set_namespace_(d.namespace_name);
      r->set_name(d.name);
      r->set_uid(d.uid);
      r->set_unix_seconds(d.unix_seconds);
      r->set_live_node(d.live_node);
      r->set_shadow_node(d.shadow_node);
      for (const std::string& n : d.shadow_best) r->add_shadow_best(n);
      r->set_live_nominated(d.live_nominated);
      r->set_shadow_nominated(d.shadow_nominated);
      r->set_point(d.point);
      r->set_plugin(d.plugin);
      r->set_detail(d.detail);
      // Both cycles node by node only for the pod asked for: expanded, a big cluster's cycle
      // is a megabyte.
      if (uid.empty() || d.uid != uid) continue;
      int32_t not_evaluated = 0;
      if (d.live != nullptr) {
        FillCycle(*d.live->Expand(), r->mutable_live_nodes(), &not_evaluated);
        r->set_live_nodes_not_evaluated(not_evaluated);
      }
      if (d.shadow != nullptr) {
        FillCycle(*d.shadow->Expand(), r->mutable_shadow_nodes(), &not_evaluated);
        r->set_shadow_nodes_not_evaluated(not_evaluated);
      }
    }
    for (const scheduler::ShadowLatency& l : s.latency) {
      v1::ShadowLatency* r = o->add_latency();
      r->set_extension_point(l.point);
      r->set_plugin(l.plugin);
      r->set_shadow_calls(l.shadow_calls);
      r->set_shadow_mean_seconds(l.shadow_mean_seconds);
      r->set_live_calls(l.live_calls);
      r->set_live_mean_seconds(l.live_mean_seconds);
    }
  }
  return found;
}

grpc::Status AdminService::GetShadows(grpc::ServerContext*, const v1::ShadowRequest* request,
                                      v1::ShadowResponse* response) {
  if (!FillShadows(scheduler_.shadows().Status(), request->profile(), request->uid(),
                   *response)) {
    return {grpc::StatusCode::NOT_FOUND,
            "no shadow profile named \"" + request->profile() + "\""};
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::StartShadow(grpc::ServerContext*, const v1::ShadowRequest* request,
                                       v1::ShadowResponse* response) {
  return SetShadowRunning(*request, true, *response);
}

grpc::Status AdminService::StopShadow(grpc::ServerContext*, const v1::ShadowRequest* request,
                                      v1::ShadowResponse* response) {
  return SetShadowRunning(*request, false, *response);
}

grpc::Status AdminService::SetShadowRunning(const v1::ShadowRequest& request, bool run,
                                            v1::ShadowResponse& response) {
  try {
    if (run) {
      scheduler_.shadows().Start(request.profile());
    } else {
      scheduler_.shadows().Stop(request.profile());
    }
  } catch (const scheduler::ShadowError& e) {
    return {grpc::StatusCode::NOT_FOUND, e.what()};
  }
  FillShadows(scheduler_.shadows().Status(), request.profile(), "", response);
  const std::string state = run ? "running" : "stopped";
  response.set_message(request.profile().empty()
                           ? "every shadow profile is " + state
                           : "shadow \"" + request.profile() + "\" is " + state);
  spdlog::info("shadow: {}", response.message());
  return grpc::Status::OK;
}

grpc::Status AdminService::PromoteShadow(grpc::ServerContext*, const v1::ShadowRequest* request,
                                         v1::ReloadResponse* response) {
  if (options_.config_file.empty()) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            "this host was started without a config file (schedhostd --config FILE), so there "
            "is no profile to promote over"};
  }
  if (request->profile().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "name the shadow profile to promote"};
  }
  std::lock_guard lock(promote_mu_);
  const std::filesystem::path& file = options_.config_file;
  const std::filesystem::path backup = file.string() + ".pre-promote";
  std::string before;
  std::string after;
  try {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string() + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    before = text.str();
    after = config::PromoteShadowText(before, file.string(), request->profile());
    WriteFile(backup, before);
    WriteFile(file, after);
  } catch (const std::runtime_error& e) {  // ConfigError, the files
    response->set_ok(false);
    response->set_message(std::string(e.what()) + " (promote refused; nothing changed)");
    response->set_generation(scheduler_.generation());
    spdlog::error("promote: {}", response->message());
    return grpc::Status::OK;
  }
  // The ordinary reload, with its guarantees: a refused set changes nothing, and then neither
  // does the file.
  Reload(nullptr, nullptr, response);
  if (!response->ok()) {
    try {
      WriteFile(file, before);
      response->set_message(response->message() + "; the config file is back as it was");
    } catch (const std::runtime_error& e) {
      response->set_message(response->message() + "; and putting the config file back failed (" +
                            e.what() + "): its earlier text is in " + backup.string());
    }
    return grpc::Status::OK;
  }
  response->set_message("promoted shadow \"" + request->profile() + "\": " +
                        response->message() + "; the file as it was is " + backup.string());
  spdlog::info("promote: {}", response->message());
  return grpc::Status::OK;
}

}  // namespace schedhost::api
