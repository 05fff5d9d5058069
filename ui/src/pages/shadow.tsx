// Shadow (#/shadow, #/shadow/PROFILE/UID): each shadow profile's agreement with its live profile,
// its disagreements as a list, and one disagreement opened as the two cycles' grids side by side.

import {
  type ExplainPage,
  type NodeExplanation,
  num,
  type ShadowDisagreement,
  type ShadowStatus,
} from "../api";
import { ErrorBanner, Panel, podHref } from "../components";
import { clock, seconds } from "../format";
import { usePoll } from "../poll";
import { Grid } from "./pod";

// shadowHref is a disagreement's route; the parts are encoded so any name survives the hash.
export function shadowHref(profile: string, uid: string): string {
  return `#/shadow/${encodeURIComponent(profile)}/${encodeURIComponent(uid)}`;
}

function share(part: number, whole: number): string {
  return whole === 0 ? "—" : `${part} (${((100 * part) / whole).toFixed(1)}%)`;
}

function Summary({ shadows }: { shadows: ShadowStatus[] }) {
  return (
    <table class="grid-table" data-testid="shadow-table">
      <thead>
        <tr>
          <th>shadow</th><th>of</th><th>state</th><th class="num">compared</th>
          <th class="num">skipped</th><th class="num">errors</th><th class="num">same node</th>
          <th class="num">same feasible</th><th class="num">same best</th>
          <th class="num">same PostFilter</th><th class="num">CPU</th>
        </tr>
      </thead>
      <tbody>
        {shadows.map((s) => {
          const n = num(s.compared);
          return (
            <tr data-testid="shadow-row" data-profile={s.profile} data-state={s.state}>
              <td class="name">{s.profile}</td>
              <td>{s.shadow_of}</td>
              <td><span class={`chip ${s.state === "running" ? "ok" : s.state === "failed" ?
                "bad" : "warn"}`}>{s.state}</span></td>
              <td class="num" data-testid="shadow-compared">{n}</td>
              <td class="num">{num(s.skipped)}</td>
              <td class="num">{num(s.errors)}</td>
              <td class="num">{share(num(s.agree_node), n)}</td>
              <td class="num">{share(num(s.agree_feasibility), n)}</td>
              <td class="num">{share(num(s.agree_best), n)}</td>
              <td class="num">{share(num(s.agree_postfilter), n)}</td>
              <td class="num">{seconds(s.cpu_seconds)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Disagreements({ s }: { s: ShadowStatus }) {
  if (s.recent.length === 0) return <p class="muted">no disagreement so far</p>;
  return (
    <table class="grid-table" data-testid="shadow-disagreements">
      <thead>
        <tr>
          <th>pod</th><th>live</th><th>shadow</th><th>point</th><th>plugin</th><th>why</th>
          <th>when</th>
        </tr>
      </thead>
      <tbody>
        {s.recent.map((d) => (
          <tr data-testid="shadow-disagreement" data-pod={`${d.namespace}/${d.name}`}
            data-uid={d.uid}>
            <td class="name"><a href={shadowHref(s.profile, d.uid)}>{d.namespace}/{d.name}</a></td>
            <td>{d.point === "PostFilter" ? `nominated ${d.live_nominated || "none"}` :
              d.live_node || <span class="muted">none</span>}</td>
            <td>{d.point === "PostFilter" ? `nominated ${d.shadow_nominated || "none"}` :
              d.shadow_node || <span class="muted">none</span>}
              {d.shadow_best.length > 1 && (
                <span class="muted"> (best of {d.shadow_best.length})</span>
              )}</td>
            <td>{d.point}</td>
            <td>{d.plugin || <span class="muted">—</span>}</td>
            <td class="reason">{d.detail}</td>
            <td class="muted">{clock(num(d.unix_seconds))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Latency({ s }: { s: ShadowStatus }) {
  if (s.latency.length === 0) return null;
  const perCall = (mean: number, calls: number) => (calls > 0 ? seconds(mean) : "—");
  return (
    <table class="grid-table">
      <thead>
        <tr><th>extension point</th><th>plugin</th><th class="num">shadow, per call</th>
          <th class="num">live, per call</th></tr>
      </thead>
      <tbody>
        {s.latency.map((l) => (
          <tr data-point={l.extension_point} data-plugin={l.plugin}>
            <td>{l.extension_point}</td>
            <td>{l.plugin}</td>
            <td class="num" title={`${num(l.shadow_calls)} calls`}>
              {perCall(l.shadow_mean_seconds, num(l.shadow_calls))}</td>
            <td class="num" title={`${num(l.live_calls)} calls (sampled)`}>
              {perCall(l.live_mean_seconds, num(l.live_calls))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ShadowList() {
  const state = usePoll((api) => api.get("shadows"), []);
  return (
    <>
      <h1 class="title">Shadow profiles</h1>
      <Panel title="Agreement with the live profiles" state={state} optional>
        {(data) => data.shadows.length === 0 ?
          <p class="muted" data-testid="no-shadows">no shadow profile: add a [[profile]] with
            shadow_of to the config and reload</p> : (
            <>
              <Summary shadows={data.shadows} />
              {data.shadows.filter((s) => s.reason).map((s) => (
                <p class={s.state === "failed" ? "error" : "notice"}>{s.profile}: {s.reason}</p>
              ))}
            </>
          )}
      </Panel>
      {state.data?.shadows.map((s) => (
        <section class="panel" data-testid="shadow-panel" data-profile={s.profile}>
          <div class="panel-head">
            <h2>{s.profile}: {num(s.disagreements)} disagreements in {num(s.compared)} pods</h2>
            <span class="muted">newest first, the last {s.recent.length} kept</span>
          </div>
          <Disagreements s={s} />
          <Latency s={s} />
        </section>
      ))}
    </>
  );
}

// page turns one side of a disagreement into what the pod page's grid draws.
function page(d: ShadowDisagreement, side: "live" | "shadow"): ExplainPage {
  const nodes: NodeExplanation[] = side === "live" ? d.live_nodes : d.shadow_nodes;
  return {
    explanation: {
      profile: side,
      attempts: 0,
      node: side === "live" ? d.live_node : d.shadow_node,
      nominated_node: side === "live" ? d.live_nominated : d.shadow_nominated,
      message: "",
      nodes,
      nodes_not_evaluated: side === "live" ? d.live_nodes_not_evaluated :
        d.shadow_nodes_not_evaluated,
    },
    nodes_total: nodes.length,
    offset: 0,
    limit: nodes.length,
  };
}

export function ShadowPair({ profile, uid }: { profile: string; uid: string }) {
  const state = usePoll((api) => api.get("shadows", { profile, uid }), [profile, uid]);
  const s = state.data?.shadows[0];
  const d = s?.recent.find((r) => r.uid === uid);
  return (
    <>
      <h1 class="title">
        <a href="#/shadow">Shadow</a> {profile}
        {d && <> · <a href={podHref(d.namespace, d.name)}>{d.namespace}/{d.name}</a></>}
      </h1>
      {state.error !== undefined && <ErrorBanner error={state.error} />}
      {state.data && !d && (
        <p class="notice">this disagreement is no longer kept (the shadow keeps its newest ones,
          and a reload starts it afresh)</p>
      )}
      {s && d && (
        <>
          <section class="panel">
            <dl class="fields">
              <dt>live ({s.shadow_of})</dt><dd data-testid="pair-live-node">
                {d.live_node || "none"}</dd>
              <dt>shadow ({s.profile})</dt><dd data-testid="pair-shadow-node">
                {d.shadow_node || "none"}{d.shadow_best.length > 1 &&
                  ` (one of ${d.shadow_best.join(", ")})`}</dd>
              <dt>turned by</dt><dd>{d.point} {d.plugin}</dd>
              <dt>why</dt><dd data-testid="pair-detail">{d.detail}</dd>
            </dl>
          </section>
          <div class="side-by-side">
            {(["live", "shadow"] as const).map((side) => (
              <section class="panel" data-testid={`pair-${side}`}>
                <div class="panel-head">
                  <h2>{side === "live" ? `live: ${s.shadow_of}` : `shadow: ${s.profile}`}</h2>
                </div>
                <div class="scroll">
                  <Grid page={page(d, side)} scorers={null} filtered={false} />
                </div>
              </section>
            ))}
          </div>
        </>
      )}
    </>
  );
}
