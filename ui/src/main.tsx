// The entry point: picks the data source (a report's embedded object, or the live daemon), routes
// on the URL's hash and draws the nav bar around the current page.

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type Api, FetchApi } from "./api";
import { clock } from "./format";
import { ComparePage } from "./pages/compare";
import { Overview } from "./pages/overview";
import { PodPage } from "./pages/pod";
import { Profiles } from "./pages/profiles";
import { QueuePage } from "./pages/queue";
import { ShadowList, ShadowPair } from "./pages/shadow";
import { ApiContext } from "./poll";
import { type Report, StaticApi } from "./static_api";

declare global {
  // Set by the inline <script> of `schedctl simulate --html` before app.js runs.
  var SCHEDHOST_REPORT: Report | undefined;
}

type Route =
  | { page: "overview" }
  | { page: "queue" }
  | { page: "profiles" }
  | { page: "shadow" }
  | { page: "shadow-pair"; profile: string; uid: string }
  | { page: "compare" }
  | { page: "pod"; namespace: string; name: string };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/");
  if (parts[0] === "queue") return { page: "queue" };
  if (parts[0] === "profiles") return { page: "profiles" };
  if (parts[0] === "shadow" && parts.length === 3) {
    return { page: "shadow-pair", profile: decodeURIComponent(parts[1]),
      uid: decodeURIComponent(parts[2]) };
  }
  if (parts[0] === "shadow") return { page: "shadow" };
  if (parts[0] === "compare") return { page: "compare" };
  if (parts[0] === "pod" && parts.length === 3) {
    return { page: "pod", namespace: decodeURIComponent(parts[1]),
      name: decodeURIComponent(parts[2]) };
  }
  return { page: "overview" };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  return route;
}

function NavLink({ href, id, current, children }: {
  href: string;
  id: string;
  current: boolean;
  children: string;
}) {
  return (
    <a href={href} data-testid={id} class={current ? "current" : undefined}
      aria-current={current ? "page" : undefined}>{children}</a>
  );
}

function App({ api, report }: { api: Api; report?: Report }) {
  const route = useRoute();
  useEffect(() => {
    document.title = report ? report.title :
      route.page === "pod" ? `${route.namespace}/${route.name} · schedhost` : "schedhost";
  }, [route, report]);
  return (
    <ApiContext.Provider value={api}>
      <header class="top">
        <span class="brand">schedhost</span>
        <nav>
          <NavLink href="#/" id="nav-overview" current={route.page === "overview"}>
            Overview
          </NavLink>
          <NavLink href="#/queue" id="nav-queue" current={route.page === "queue"}>Queue</NavLink>
          <NavLink href="#/profiles" id="nav-profiles" current={route.page === "profiles"}>
            Profiles
          </NavLink>
          {!report && (
            <NavLink href="#/shadow" id="nav-shadow"
              current={route.page === "shadow" || route.page === "shadow-pair"}>Shadow</NavLink>
          )}
          {report?.compare && (
            <NavLink href="#/compare" id="nav-compare" current={route.page === "compare"}>
              Compare
            </NavLink>
          )}
        </nav>
        {report ? (
          <span class="mode">
            <span class="badge">report</span>
            <span data-testid="report-title">{report.title}</span>
            {report.generated_unix_seconds !== undefined && (
              <span class="muted">{clock(report.generated_unix_seconds)}</span>
            )}
          </span>
        ) : <span class="mode"><span class="badge live">live</span></span>}
      </header>
      <main>
        {route.page === "overview" && <Overview />}
        {route.page === "queue" && <QueuePage />}
        {route.page === "profiles" && <Profiles />}
        {route.page === "shadow" && <ShadowList />}
        {route.page === "shadow-pair" && (
          <ShadowPair key={`${route.profile}/${route.uid}`} profile={route.profile}
            uid={route.uid} />
        )}
        {route.page === "compare" && (report?.compare ?
          <ComparePage comparison={report.compare} /> :
          <p class="notice">this page shows a report of `schedctl simulate --compare --html`</p>)}
        {route.page === "pod" && (
          <PodPage key={`${route.namespace}/${route.name}`} namespace={route.namespace}
            name={route.name} />
        )}
      </main>
    </ApiContext.Provider>
  );
}

const report = globalThis.SCHEDHOST_REPORT;
const api: Api = report ? new StaticApi(report) : new FetchApi();
// A report's page may have no #app; the pages then get a container of their own.
let root = document.getElementById("app");
if (!root) {
  root = document.createElement("div");
  document.body.appendChild(root);
}
render(<App api={api} report={report} />, root);
