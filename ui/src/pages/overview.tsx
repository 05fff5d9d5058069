// Overview (#/): the counts, the nodes and pods tables, the rate chart, the plugin libraries and
// the reload history.

import type { ComponentChildren } from "preact";
import {
  type Api,
  isMissing,
  type Latency,
  type Node,
  num,
  POD_PHASES,
  type Stats,
} from "../api";
import { record, RateChart } from "../chart";
import { FilterBox, Pager, Panel, podHref, Select, useTable } from "../components";
import { clock, resourcePair } from "../format";
import { useApi, usePoll } from "../poll";

interface Summary {
  stats: Stats;
  nodesTotal: number;
  // null while the daemon lacks the endpoint (an older schedhostd).
  phases: Record<string, number> | null;
  latency: Latency | null;
  at: number;
}

// optional turns the 404 of an endpoint this daemon lacks into null, for the parts that can do
// without it.
async function optional<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

async function loadSummary(api: Api): Promise<Summary> {
  const [stats, nodes, pods, latency] = await Promise.all([
    api.get("stats"),
    api.get("nodes", { limit: "0" }),
    optional(api.get("pods", { limit: "0" })),
    optional(api.get("latency")),
  ]);
  const at = Date.now();
  if (api.live) {
    const attempts = latency?.attempts ?? [];
    record({
      t: at,
      bound: num(stats.bound_pods),
      count: latency ? attempts.reduce((n, a) => n + num(a.count), 0) : undefined,
      sum: latency ? attempts.reduce((n, a) => n + a.sum_seconds, 0) : undefined,
    });
  }
  return { stats, nodesTotal: nodes.nodes_total, phases: pods?.phases ?? null, latency, at };
}

// Count is one number of a tile, with its label under it.
function Count({ label, value, testid }: {
  label: string;
  value: ComponentChildren;
  testid?: string;
}) {
  return (
    <div class="count">
      <div class="count-value" data-testid={testid}>{value}</div>
      <div class="count-label">{label}</div>
    </div>
  );
}

function Tile({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="tile">
      <div class="tile-title">{title}</div>
      <div class="tile-counts">{children}</div>
    </div>
  );
}

function Counts({ s }: { s: Summary }) {
  const st = s.stats;
  return (
    <div class="tiles">
      <Tile title="cluster">
        <Count label="nodes" value={s.nodesTotal} testid="node-count" />
      </Tile>
      <Tile title="pods">
        {s.phases ? POD_PHASES.map((p) => (
          <Count label={p.toLowerCase()} value={s.phases?.[p] ?? 0} testid={`phase-${p}`} />
        )) : <Count label="by phase" value={<span class="muted">n/a</span>} />}
      </Tile>
      <Tile title="queue">
        <Count label="active" value={num(st.active_pods)} />
        <Count label="backoff" value={num(st.backoff_pods)} />
        <Count label="unschedulable" value={num(st.unschedulable_pods)} />
        <Count label="gated" value={num(st.gated_pods)} />
        <Count label="in flight" value={num(st.in_flight_pods)} />
      </Tile>
      <Tile title="binding">
        <Count label="bound pods" value={num(st.bound_pods)} />
        <Count label="pods/s (1 min)" value={st.pods_per_second.toFixed(2)} />
      </Tile>
      <Tile title="attempts">
        <Count label="scheduled" value={num(st.attempts_scheduled)} />
        <Count label="unschedulable" value={num(st.attempts_unschedulable)} />
        <Count label="error" value={num(st.attempts_error)} />
      </Tile>
      <Tile title="config">
        <Count label="generation" value={num(st.config_generation)} />
      </Tile>
    </div>
  );
}

// resources orders the page's resource names: cpu, memory, pods (always: every node has a pod
// count), then the rest by name.
function resources(nodes: Node[]): string[] {
  const first = ["cpu", "memory", "pods"];
  const rest = new Set<string>(["pods"]);
  for (const n of nodes) for (const k of Object.keys(n.allocatable)) rest.add(k);
  return [...first.filter((k) => rest.has(k)), ...[...rest].filter((k) => !first.includes(k))
    .sort()];
}

function Bar({ resource, used, total }: { resource: string; used: number; total: number }) {
  const share = total > 0 ? Math.min(1, used / total) : used > 0 ? 1 : 0;
  return (
    <div class={share >= 0.9 ? "bar hot" : "bar"} title={`${Math.round(share * 100)}%`}>
      <div class="fill" style={{ width: `${share * 100}%` }} />
      <span>{resourcePair(resource, used, total)}</span>
    </div>
  );
}

function NodesTable() {
  const t = useTable({ name: "" });
  const state = usePoll((api) => api.get("nodes", {
    name: t.filters.name, offset: String(t.offset), limit: "100",
  }), [t.filters.name, t.offset]);
  return (
    <Panel title="Nodes" state={state} tools={
      <>
        <FilterBox value={t.filters.name} placeholder="node name" onInput={(name) =>
          t.setFilter({ name })} />
        {state.data && <Pager offset={state.data.offset} limit={state.data.limit}
          total={state.data.nodes_total} onOffset={t.setOffset} />}
      </>
    }>
      {(page) => {
        const res = resources(page.nodes);
        return (
          <table class="grid-table">
            <thead>
              <tr>
                <th>node</th>
                {res.map((r) => <th>{r === "pods" ? "pods / allocatable" : r}</th>)}
              </tr>
            </thead>
            <tbody>
              {page.nodes.map((n) => (
                <tr data-testid="node-row" data-node={n.name}>
                  <td>
                    <span class="name">{n.name}</span>
                    {n.unschedulable && <span class="chip warn">cordoned</span>}
                    {n.taints.map((tt) => (
                      <span class="chip">{tt.key}{tt.value ? `=${tt.value}` : ""}:{tt.effect}</span>
                    ))}
                  </td>
                  {res.map((r) => (
                    <td class="res">
                      {r in n.allocatable ? (
                        <Bar resource={r} total={n.allocatable[r]}
                          // The cache counts pods, not a "pods" request.
                          used={r === "pods" ? n.pods : n.requested[r] ?? 0} />
                      ) : r === "pods" ? n.pods : <span class="muted">—</span>}
                    </td>
                  ))}
                </tr>
              ))}
              {page.nodes.length === 0 && (
                <tr><td colSpan={res.length + 1} class="muted">no nodes</td></tr>
              )}
            </tbody>
          </table>
        );
      }}
    </Panel>
  );
}

function PodsTable() {
  const t = useTable({ name: "", phase: "" });
  const state = usePoll((api) => api.get("pods", {
    name: t.filters.name, phase: t.filters.phase, offset: String(t.offset), limit: "100",
  }), [t.filters.name, t.filters.phase, t.offset]);
  return (
    <Panel title="Pods" state={state} optional tools={
      <>
        <FilterBox value={t.filters.name} placeholder="namespace/name" onInput={(name) =>
          t.setFilter({ name })} />
        <Select value={t.filters.phase} onChange={(phase) => t.setFilter({ phase })}
          options={[["", "all phases"], ...POD_PHASES.map((p): [string, string] => [p, p])]} />
        {state.data && <Pager offset={state.data.offset} limit={state.data.limit}
          total={state.data.pods_total} onOffset={t.setOffset} />}
      </>
    }>
      {(page) => (
        <table class="grid-table">
          <thead>
            <tr><th>pod</th><th>phase</th><th>node</th><th>nominated node</th></tr>
          </thead>
          <tbody>
            {page.pods.map((p) => (
              <tr data-testid="pod-row" data-pod={`${p.namespace}/${p.name}`}>
                <td><a href={podHref(p.namespace, p.name)}>{p.namespace}/{p.name}</a></td>
                <td><span class={`phase ${p.phase}`}>{p.phase}</span></td>
                <td>{p.node || <span class="muted">—</span>}</td>
                <td>{p.nominated_node || <span class="muted">—</span>}</td>
              </tr>
            ))}
            {page.pods.length === 0 && <tr><td colSpan={4} class="muted">no pods</td></tr>}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

function PluginLibraries() {
  const state = usePoll((api) => api.get("plugins"), []);
  return (
    <Panel title="Plugin libraries" state={state}>
      {(p) => (
        <>
          <table class="grid-table">
            <thead>
              <tr>
                <th>plugin</th><th>version</th><th>ABI</th><th>sha256</th><th>profiles</th>
                <th>library</th>
              </tr>
            </thead>
            <tbody>
              {p.plugins.map((pl) => (
                <tr data-testid="plugin-row">
                  <td class="name">{pl.name}</td>
                  <td>{pl.version}</td>
                  <td>{pl.abi_version}</td>
                  <td class="mono" title={pl.sha256}>{pl.sha256.slice(0, 12)}</td>
                  <td>{pl.profiles.join(", ")}</td>
                  <td class="mono path">{pl.library_path}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {p.library_versions.length > 0 && (
            <details>
              <summary>{p.library_versions.length} loaded library versions</summary>
              <table class="grid-table versions">
                <thead>
                  <tr><th>loaded library version</th><th>sha256</th><th>state</th>
                    <th class="num">generation</th></tr>
                </thead>
                <tbody>
                  {p.library_versions.map((v) => (
                    <tr>
                      <td class="mono path" title={v.loaded_path}>{v.path}</td>
                      <td class="mono" title={v.sha256}>{v.sha256.slice(0, 12)}</td>
                      <td>{v.state}</td>
                      <td class="num">{num(v.generation)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          )}
        </>
      )}
    </Panel>
  );
}

function ReloadHistory() {
  const state = usePoll((api) => api.get("reloads"), []);
  const live = useApi().live;
  return (
    <Panel title="Reload history" state={state} optional>
      {(r) => r.reloads.length === 0 ? (
        <p class="muted">{live ? "no reload since the daemon started" : "no reload"}</p>
      ) : (
        <table class="grid-table">
          <thead>
            <tr><th>time</th><th>result</th><th class="num">generation</th><th>message</th></tr>
          </thead>
          <tbody>
            {r.reloads.map((x) => (
              <tr data-testid="reload-row" data-result={x.result}>
                <td class="nowrap">{clock(num(x.unix_seconds))}</td>
                <td><span class={`verdict ${x.result === "success" ? "ok" : "bad"}`}>
                  {x.result}</span></td>
                <td class="num">{num(x.generation)}</td>
                <td class="message">{x.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

export function Overview() {
  const summary = usePoll(loadSummary, []);
  const live = useApi().live;
  return (
    <>
      <Panel title="Cluster" state={summary}>{(s) => <Counts s={s} />}</Panel>
      <NodesTable />
      <div class="columns">
        <PodsTable />
        <div>
          <Panel title="Scheduling rate and latency, last 5 minutes" state={summary}>
            {(s) => live ? <RateChart now={s.at} /> :
              <p class="muted">a report is one moment: the chart needs a live daemon</p>}
          </Panel>
          <ReloadHistory />
        </div>
      </div>
      <PluginLibraries />
    </>
  );
}
