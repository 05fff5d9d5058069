// UiRoute: the web UI's JSON API, served by schedhostd on `[ui] listen` (docs/web-ui.md). The
// first four endpoints answer with the Admin API's own messages in protobuf's JSON mapping
// (field names as in admin.proto, zero values included), so what the UI shows is what
// `schedctl` shows; nodes and queue, which no Admin call has, have shapes of their own:
//
//   GET /api/v1/stats                                  Admin.Stats
//   GET /api/v1/profiles                               Admin.ListProfiles
//   GET /api/v1/plugins                                Admin.ListPlugins
//   GET /api/v1/explain?namespace=NS&name=POD          Admin.Explain, its nodes paged:
//       [&offset=0][&limit=100][&node=SUBSTRING][&feasible=true|false]
//   GET /api/v1/nodes[?offset=0][&limit=100][&name=SUBSTRING]
//       a page of nodes: taints, unschedulable, allocatable and what the scheduler's cache
//       counts as requested (cpu in millicores, the rest in whole units), and their pods
//   GET /api/v1/queue[?offset=0][&limit=100][&where=backoff][&name=SUBSTRING]
//       a page of the pending pods: where each waits, the plugins that rejected it, its gates,
//       its backoff left and its last message
//   GET /api/v1/pods[?offset=0][&limit=100][&name=SUBSTRING][&node=NODE][&phase=Pending]
//       a page of the pods with their node and phase, and every pod counted by phase
//   GET /api/v1/reloads                                the last 32 reloads, newest first
//   GET /api/v1/latency                                the duration histograms' counts and sums
//
// Errors are JSON too: {"code": "NOT_FOUND", "message": "..."} with 400, 404, 409 or 500. Every
// other path is one of the built pages (index.html, app.js, app.css), read from the pages
// directory. Every handler runs on the UI server's thread and only reads: the store, the cache
// and the queue lock for the copy they hand out.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "host/api/admin_service.h"
#include "host/api/http_server.h"
#include "host/scheduler/scheduler.h"
#include "host/store/store.h"

namespace schedhost::api {

// kPageLimit bounds one page of nodes or pods (a 5,000-node cluster is read a page at a time);
// kDefaultPageLimit is the page size when none is asked for.
inline constexpr int kPageLimit = 1000;
inline constexpr int kDefaultPageLimit = 100;

// kInstalledUiPagesDir is where the packages install the built pages.
inline const std::filesystem::path kInstalledUiPagesDir = "/usr/share/schedhost/ui";

// UiPagesDir returns the pages directory of a binary at `exe`: `<exe>/../ui` in a build tree,
// else `<exe>/../share/schedhost/ui` (an install under any prefix) when it holds index.html,
// otherwise kInstalledUiPagesDir.
std::filesystem::path UiPagesDir(const std::filesystem::path& exe);

// UiRoute serves the API above and the pages in `pages` ("" : none; `/` then says so). None of
// the three services is owned; all must outlive the route.
HttpRoute UiRoute(AdminService& admin, store::Store& store, scheduler::Scheduler& scheduler,
                  std::filesystem::path pages = {});

// UiReport returns everything the pages show, whole, for a report read without a server
// (`schedctl simulate --html`): stats, profiles, plugins, reloads, latency as their endpoints
// answer; nodes, queue and pods as the full lists their endpoints page; phases; and
// explanations, each pod's Admin.Explain with every node, keyed "namespace/name" (a pod never
// tried, such as one bound in the input, has one without nodes). Throws std::runtime_error when
// an Admin call fails.
nlohmann::json UiReport(AdminService& admin, store::Store& store, scheduler::Scheduler& scheduler);

// UiExplanation returns `pod`'s Admin.Explain with every node, as the report's explanations
// hold it (`schedctl simulate --compare --html` shows two side by side); null when Explain
// refuses the pod's name.
nlohmann::json UiExplanation(AdminService& admin, const model::Pod& pod);

}  // namespace schedhost::api
