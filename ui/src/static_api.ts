// StaticApi answers the API from the object `schedctl simulate --html` puts in its report
// (globalThis.SCHEDHOST_REPORT), with the filtering and paging of docs/web-ui.md, so that the
// pages read a report exactly as they read a live daemon.

import {
  type Api,
  ApiError,
  type Endpoints,
  type Latency,
  type Node,
  type NodeExplanation,
  type Params,
  type PendingPod,
  type Plugins,
  type Pod,
  type Profiles,
  QUEUE_PLACES,
  type Reloads,
  type Stats,
  type Explanation,
} from "./api";

// ComparedSide is where one config of `simulate --compare` places a pod; the explanation is
// there only for a pod the two place differently.
export interface ComparedSide {
  node: string | null;
  message: string;
  explanation: Explanation | null;
}

// ComparedPod is one pod under both configs: pending, or a bound pod replayed.
export interface ComparedPod {
  namespace: string;
  name: string;
  kind: "pending" | "replay";
  runs_on: string | null;
  differs: boolean;
  point: string;
  plugin: string;
  detail: string;
  old: ComparedSide;
  new: ComparedSide;
}

export interface Comparison {
  old_config: string;
  new_config: string;
  pods: ComparedPod[];
}

export interface Report {
  title: string;
  // Absent when the report does not say (a simulation runs on a virtual clock).
  generated_unix_seconds?: number;
  stats: Stats;
  profiles: Profiles;
  plugins: Plugins;
  reloads: Reloads;
  latency: Latency;
  nodes: Node[];
  queue: PendingPod[];
  pods: Pod[];
  phases: Record<string, number>;
  // Keyed "NAMESPACE/NAME", every node of the explanation included.
  explanations: Record<string, Explanation>;
  // Set by `schedctl simulate --compare --html`: the two configs' placements.
  compare?: Comparison;
}

// The daemon's limits (ui_api.cc): the default page and the largest one.
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const MAX_OFFSET = 1_000_000_000;

function badRequest(message: string): ApiError {
  return new ApiError(400, "INVALID_ARGUMENT", message);
}

function int(params: Params, key: string, fallback: number, max: number): number {
  const raw = params[key];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) > max) {
    throw badRequest(`${key} must be a whole number from 0 to ${max}, not "${raw}"`);
  }
  return Number(raw);
}

// page cuts one page out of the filtered list and says where it is.
function page<T>(items: T[], params: Params) {
  const offset = int(params, "offset", 0, MAX_OFFSET);
  const limit = int(params, "limit", DEFAULT_LIMIT, MAX_LIMIT);
  return { items: items.slice(offset, offset + limit), total: items.length, offset, limit };
}

function contains(text: string, filter: string | undefined): boolean {
  return !filter || text.includes(filter);
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const podKey = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

export class StaticApi implements Api {
  readonly live = false;

  constructor(readonly report: Report) {}

  async get<P extends keyof Endpoints>(path: P, params: Params = {}): Promise<Endpoints[P]> {
    // The cast is sound: answer() switches on the same path.
    return this.answer(path, params) as Endpoints[P];
  }

  private answer(path: keyof Endpoints, params: Params): Endpoints[keyof Endpoints] {
    const r = this.report;
    switch (path) {
      case "stats": return r.stats;
      case "profiles": return r.profiles;
      case "plugins": return r.plugins;
      case "reloads": return r.reloads;
      case "latency": return r.latency;
      case "nodes": {
        const nodes = r.nodes.filter((n) => contains(n.name, params.name))
          .sort((a, b) => byName(a.name, b.name));
        const p = page(nodes, params);
        return { nodes: p.items, nodes_total: p.total, offset: p.offset, limit: p.limit };
      }
      case "queue": {
        const where = params.where;
        if (where && !(QUEUE_PLACES as readonly string[]).includes(where)) {
          throw badRequest(
            `where must be active, backoff, unschedulable, gated or in_flight, not "${where}"`);
        }
        const pods = r.queue.filter((q) => (!where || q.where === where) &&
          contains(podKey(q), params.name)).sort((a, b) => byName(podKey(a), podKey(b)));
        const p = page(pods, params);
        return { pods: p.items, pods_total: p.total, offset: p.offset, limit: p.limit };
      }
      case "pods": {
        const pods = r.pods.filter((q) => contains(podKey(q), params.name) &&
          (!params.node || q.node === params.node) && (!params.phase || q.phase === params.phase))
          .sort((a, b) => byName(podKey(a), podKey(b)));
        const p = page(pods, params);
        return { pods: p.items, pods_total: p.total, offset: p.offset, limit: p.limit,
          phases: r.phases };
      }
      case "explain": return this.explain(params);
      // A simulation runs no shadow profile.
      case "shadows": return { shadows: [], message: "" };
    }
  }

  private explain(params: Params): Endpoints["explain"] {
    const namespace = params.namespace || "default";
    const name = params.name;
    if (!name) throw badRequest("name is required: /api/v1/explain?namespace=NS&name=POD");
    const feasible = params.feasible;
    if (feasible !== undefined && feasible !== "" && feasible !== "true" && feasible !== "false") {
      throw badRequest(`feasible must be true or false, not "${feasible}"`);
    }
    const key = `${namespace}/${name}`;
    const e = this.report.explanations[key];
    if (!e) {
      // The daemon's words for an unknown pod; the report leaves out pods without a cycle.
      const known = this.report.pods.some((p) => podKey(p) === key);
      throw new ApiError(404, "NOT_FOUND", known ?
        `no scheduling cycle of pod ${key} is in this report` : `pod ${key} not found`);
    }
    // The report keeps Admin.Explain's order (feasible first, best first); filtering keeps it.
    const kept = e.nodes.filter((n: NodeExplanation) =>
      (!feasible || n.feasible === (feasible === "true")) && contains(n.node, params.node));
    const p = page(kept, params);
    return { explanation: { ...e, nodes: p.items }, nodes_total: p.total, offset: p.offset,
      limit: p.limit };
  }
}
