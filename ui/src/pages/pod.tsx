// Pod (#/pod/NS/NAME): why the pod's last scheduling cycle went where it did, as a grid of nodes
// × plugins, with its queue entry when it is still pending.

import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import {
  ApiError,
  type ExplainPage,
  type NodeExplanation,
  num,
  type PendingPod,
  type PluginVerdict,
} from "../api";
import { ErrorBanner, FilterBox, List, Pager, Select, useTable } from "../components";
import { seconds } from "../format";
import { type Loaded, usePoll } from "../poll";

const PAGE = 50;

// Upstream's FitError message ends with the PostFilter (preemption) verdict, after this marker.
const POST_FILTER = " preemption: ";

const REJECTIONS = new Set(["Unschedulable", "UnschedulableAndUnresolvable", "Error"]);

type SortKey = "api" | "score" | "name";
interface Sort {
  key: SortKey;
  descending: boolean;
}

// sorted orders one page: the API's order (feasible first, best first) until a header is clicked.
function sorted(nodes: NodeExplanation[], sort: Sort): NodeExplanation[] {
  if (sort.key === "api") return nodes;
  const sign = sort.descending ? -1 : 1;
  return [...nodes].sort((a, b) => sign * (sort.key === "score" ?
    num(a.total_score) - num(b.total_score) : a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

// pluginColumns lists the page's plugins in the order the nodes list them (Filter plugins in run
// order, then Score-only ones).
function pluginColumns(nodes: NodeExplanation[]): string[] {
  const seen = new Set<string>();
  for (const n of nodes) for (const p of n.plugins) seen.add(p.plugin);
  return [...seen];
}

// SHORT keeps the grid narrow enough for 1280 px; the cell's title has the whole code.
const SHORT: Record<string, string> = {
  Success: "✓",
  UnschedulableAndUnresolvable: "Unresolvable",
  "": "—",
};

function verdictClass(code: string): string {
  if (code === "Success") return "ok";
  if (REJECTIONS.has(code)) return "bad";
  return "none";
}

function Cell({ v, feasible, scorer }: {
  v: PluginVerdict | undefined;
  feasible: boolean;
  scorer: boolean;
}) {
  if (!v) return <td class="cell none" />;
  const code = v.filter_code;
  return (
    <td class={`cell ${verdictClass(code)}`} data-testid="grid-cell" data-plugin={v.plugin}
      data-code={code} title={code || "no Filter, or its Filter did not run on this node"}>
      <div class="code">{SHORT[code] ?? code}</div>
      {v.filter_reason && <div class="reason">{v.filter_reason}</div>}
      {feasible && scorer && (
        <div class="score" title="raw / normalized / weighted">
          {num(v.score)} / {num(v.normalized_score)} / <b>{num(v.weighted_score)}</b>
        </div>
      )}
    </td>
  );
}

function Field({ label, children, testid }: {
  label: string;
  children: ComponentChildren;
  testid?: string;
}) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={testid}>{children}</dd>
    </>
  );
}

function Summary({ page }: { page: ExplainPage }) {
  const e = page.explanation;
  const cut = e.message.indexOf(POST_FILTER);
  return (
    <section class="panel">
      <dl class="fields">
        <Field label="profile">{e.profile}</Field>
        <Field label="attempts">{e.attempts}</Field>
        <Field label="chosen node" testid="chosen-node">
          {e.node || <span class="muted">none (pending)</span>}
        </Field>
        <Field label="nominated node">{e.nominated_node || <span class="muted">—</span>}</Field>
        <Field label="nodes not evaluated">{e.nodes_not_evaluated}</Field>
        {e.message && <Field label="message" testid="explain-message">{e.message}</Field>}
        {cut >= 0 && (
          <Field label="PostFilter">{e.message.slice(cut + POST_FILTER.length)}</Field>
        )}
      </dl>
    </section>
  );
}

// QueueEntry shows where the pod waits; a gated pod has one but no explanation (no cycle ran).
// `shown` is the explanation's message, not repeated when the queue's is the same.
function QueueEntry({ queue, shown }: { queue: Loaded<PendingPod | null>; shown?: string }) {
  const entry = queue.data;
  if (queue.error !== undefined) return <ErrorBanner error={queue.error} />;
  if (!entry) return null;
  return (
    <section class="panel">
      <div class="panel-head"><h2>Queue entry</h2></div>
      <dl class="fields">
        <Field label="where"><span class={`where ${entry.where}`}>{entry.where}</span></Field>
        <Field label="attempts">{entry.attempts}</Field>
        <Field label="rejected by"><List items={entry.rejected_by} /></Field>
        <Field label="pending plugins"><List items={entry.pending_plugins} /></Field>
        <Field label="scheduling gates"><List items={entry.scheduling_gates} /></Field>
        <Field label="backoff left">
          {entry.backoff_left_ms > 0 ? seconds(entry.backoff_left_ms / 1000) : "—"}
        </Field>
        {entry.message && entry.message !== shown && (
          <Field label="message">{entry.message}</Field>
        )}
      </dl>
    </section>
  );
}

// CamelWrap lets a long plugin name wrap between its words (NodeResources|Balanced|Allocation).
function CamelWrap({ name }: { name: string }) {
  const words = name.split(/(?=[A-Z][a-z])/);
  return <>{words.map((w, i) => <>{i > 0 && <wbr />}{w}</>)}</>;
}

// Grid is the explanation's nodes × plugins; `filtered`: a filter or a later page may be why no
// node is shown.
export function Grid({ page, scorers, filtered }: {
  page: ExplainPage;
  scorers: Set<string> | null;
  filtered: boolean;
}) {
  const [sort, setSort] = useState<Sort>({ key: "api", descending: false });
  const e = page.explanation;
  const columns = pluginColumns(e.nodes);
  const header = (key: SortKey, label: string, numeric = false) => {
    const on = sort.key === key;
    return (
      <th class={`sortable${numeric ? " num" : ""}`} onClick={() =>
        setSort({ key, descending: on ? !sort.descending : key === "score" })}>
        {label}{on ? (sort.descending ? " ▾" : " ▴") : ""}
      </th>
    );
  };
  return (
    <table class="grid-table explain" data-testid="explain-grid">
      <thead>
        <tr>
          {header("name", "node")}
          {header("score", "total score", true)}
          {columns.map((c) => <th class="plugin"><CamelWrap name={c} /></th>)}
        </tr>
      </thead>
      <tbody>
        {sorted(e.nodes, sort).map((n) => (
          <tr data-testid="grid-row" data-node={n.node}
            class={n.node === e.node ? "chosen" : n.feasible ? "feasible" : "infeasible"}>
            <td class="node">
              <span class="name">{n.node}</span>
              {n.node === e.node && <span class="chip ok">chosen</span>}
              {n.node === e.nominated_node && <span class="chip warn">nominated</span>}
              {!n.feasible && <span class="chip bad">infeasible</span>}
              {n.reason && <div class="reason">{n.reason}</div>}
            </td>
            <td class="num">{n.feasible ? num(n.total_score) : <span class="muted">—</span>}</td>
            {columns.map((c) => {
              const v = n.plugins.find((p) => p.plugin === c);
              // Without /profiles, a score is shown where there is one.
              const scorer = scorers ? scorers.has(c) :
                v !== undefined && num(v.score) + num(v.weighted_score) !== 0;
              return <Cell v={v} feasible={n.feasible} scorer={scorer} />;
            })}
          </tr>
        ))}
        {e.nodes.length === 0 && (
          <tr><td colSpan={columns.length + 2} class="muted">{filtered ? "no nodes on this page" :
            "no cycle has evaluated a node for this pod (not tried yet, or its record was " +
            "dropped: the daemon keeps the most recent ones)"}</td></tr>
        )}
      </tbody>
    </table>
  );
}

export function PodPage({ namespace, name }: { namespace: string; name: string }) {
  const t = useTable({ node: "", feasible: "" });
  const explain = usePoll((api) => api.get("explain", {
    namespace, name, node: t.filters.node, feasible: t.filters.feasible,
    offset: String(t.offset), limit: String(PAGE),
  }), [t.filters.node, t.filters.feasible, t.offset]);
  // The queue filter matches substrings ("web-1" is in "web-10"): keep the exact pod only.
  const queue = usePoll(async (api) => {
    const q = await api.get("queue", { name: `${namespace}/${name}`, limit: "1000" });
    return q.pods.find((p) => p.namespace === namespace && p.name === name) ?? null;
  }, []);
  const profiles = usePoll((api) => api.get("profiles"), []);
  const profile = explain.data && profiles.data?.profiles.find((p) =>
    p.scheduler_name === explain.data?.explanation.profile);
  const scorers = profile ? new Set(profile.extension_points
    .filter((x) => x.extension_point === "Score").flatMap((x) => x.plugins.map((p) => p.name)))
    : null;
  const notFound = explain.error instanceof ApiError && explain.error.status === 404;
  return (
    <>
      <h1 class="title">{namespace}/{name}</h1>
      {notFound ? <p class="notice">{(explain.error as ApiError).message}</p> :
        explain.error !== undefined && <ErrorBanner error={explain.error} />}
      {!notFound && explain.data && <Summary page={explain.data} />}
      <QueueEntry queue={queue} shown={explain.data?.explanation.message} />
      {!notFound && explain.data && (
        <>
          <section class="panel">
            <div class="panel-head">
              <h2>Nodes × plugins</h2>
              <FilterBox value={t.filters.node} placeholder="node name"
                onInput={(node) => t.setFilter({ node })} />
              <Select value={t.filters.feasible} onChange={(feasible) => t.setFilter({ feasible })}
                options={[["", "all nodes"], ["true", "feasible"], ["false", "infeasible"]]} />
              <Pager offset={explain.data.offset} limit={explain.data.limit}
                total={explain.data.nodes_total} onOffset={t.setOffset} />
              <span class="muted legend-text">
                cell: Filter verdict (✓ Success, Unresolvable: UnschedulableAndUnresolvable,
                — not run) and reason; score raw / normalized / <b>weighted</b>
              </span>
            </div>
            <div class="scroll"><Grid page={explain.data} scorers={scorers}
              filtered={t.offset > 0 || t.filters.node !== "" || t.filters.feasible !== ""} /></div>
          </section>
        </>
      )}
      {!explain.data && explain.error === undefined && <p class="muted">loading…</p>}
    </>
  );
}
