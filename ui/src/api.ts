// The JSON API of docs/web-ui.md: its answers' types, the Api interface the pages read through,
// and FetchApi, which asks the live daemon.

// Int64 is a 64-bit integer as protobuf's JSON mapping prints it (a string); the endpoints
// without an Admin call behind them print plain numbers, so either is accepted. Read with num().
export type Int64 = string | number;

export function num(v: Int64 | undefined): number {
  return v === undefined ? 0 : Number(v);
}

export interface LeaderElection {
  leading: boolean;
  identity: string;
  lease: string;
  holder: string;
  transitions: Int64;
  last_error: string;
}

export interface Stats {
  active_pods: Int64;
  backoff_pods: Int64;
  unschedulable_pods: Int64;
  gated_pods: Int64;
  in_flight_pods: Int64;
  attempts_scheduled: Int64;
  attempts_unschedulable: Int64;
  attempts_error: Int64;
  bound_pods: Int64;
  pods_per_second: number;
  resource_version: Int64;
  config_generation: Int64;
  last_reload_result: string;
  last_reload_message: string;
  last_reload_unix_seconds: Int64;
  draining_profile_sets: Int64;
  leader_election?: LeaderElection;
}

export interface PluginRef {
  name: string;
  weight: number;
}

export interface ExtensionPointPlugins {
  extension_point: string;
  plugins: PluginRef[];
}

// PluginArgs are a profile's [profile.plugin_config.NAME] table, as JSON text in file order.
export interface PluginArgs {
  name: string;
  args_json: string;
}

export interface Profile {
  scheduler_name: string;
  percentage_of_nodes_to_score: number;
  extension_points: ExtensionPointPlugins[];
  // Absent from daemons older than the field.
  plugin_args?: PluginArgs[];
}

export interface Profiles {
  profiles: Profile[];
  generation: Int64;
}

export interface Plugin {
  name: string;
  version: string;
  library_path: string;
  sha256: string;
  abi_version: string;
  extension_points: string[];
  profiles: string[];
}

export interface LibraryVersion {
  path: string;
  loaded_path: string;
  sha256: string;
  state: string;
  generation: Int64;
}

export interface Plugins {
  plugins: Plugin[];
  library_versions: LibraryVersion[];
}

export interface PluginVerdict {
  plugin: string;
  // "" when the plugin has no Filter or its Filter did not run on the node.
  filter_code: string;
  filter_reason: string;
  score: Int64;
  normalized_score: Int64;
  weighted_score: Int64;
}

export interface NodeExplanation {
  node: string;
  feasible: boolean;
  total_score: Int64;
  plugins: PluginVerdict[];
  reason: string;
}

export interface Explanation {
  profile: string;
  attempts: number;
  node: string;
  nominated_node: string;
  message: string;
  nodes: NodeExplanation[];
  nodes_not_evaluated: number;
}

// Paged is the place of a page in the whole list, after filtering.
export interface Paged {
  offset: number;
  limit: number;
}

export interface ExplainPage extends Paged {
  explanation: Explanation;
  nodes_total: number;
}

export interface Taint {
  key: string;
  value: string;
  effect: string;
}

export interface Node {
  name: string;
  unschedulable: boolean;
  taints: Taint[];
  // The scheduler's units: cpu in millicores, everything else in whole units (bytes, counts).
  allocatable: Record<string, number>;
  requested: Record<string, number>;
  pods: number;
}

export interface NodesPage extends Paged {
  nodes: Node[];
  nodes_total: number;
}

export const QUEUE_PLACES = ["active", "backoff", "unschedulable", "gated", "in_flight"] as const;
export type QueuePlace = (typeof QUEUE_PLACES)[number];

export interface PendingPod {
  namespace: string;
  name: string;
  where: QueuePlace;
  attempts: number;
  rejected_by: string[];
  pending_plugins: string[];
  scheduling_gates: string[];
  backoff_left_ms: number;
  message: string;
  nominated_node: string;
}

export interface QueuePage extends Paged {
  pods: PendingPod[];
  pods_total: number;
}

export const POD_PHASES = ["Scheduled", "Pending", "Terminating"] as const;

export interface Pod {
  namespace: string;
  name: string;
  node: string;
  nominated_node: string;
  phase: string;
}

export interface PodsPage extends Paged {
  pods: Pod[];
  pods_total: number;
  // Every pod counted by phase, whatever the filter.
  phases: Record<string, number>;
}

export interface Reload {
  result: string;
  message: string;
  unix_seconds: Int64;
  generation: Int64;
}

export interface Reloads {
  reloads: Reload[];
}

// Timing is a Prometheus histogram's count and sum, cumulative since the daemon started.
export interface Timing {
  count: Int64;
  sum_seconds: number;
}

export interface Latency {
  attempts: (Timing & { profile: string; result: string })[];
  extension_points: (Timing & { profile: string; extension_point: string })[];
  plugins: (Timing & { plugin: string; extension_point: string })[];
}

// ShadowDisagreement is a pod a shadow profile would have placed differently; live_nodes and
// shadow_nodes (both cycles, node by node) come only for the pod the request's uid names.
export interface ShadowDisagreement {
  namespace: string;
  name: string;
  uid: string;
  unix_seconds: Int64;
  live_node: string;
  shadow_node: string;
  shadow_best: string[];
  live_nominated: string;
  shadow_nominated: string;
  point: string;
  plugin: string;
  detail: string;
  live_nodes: NodeExplanation[];
  shadow_nodes: NodeExplanation[];
  live_nodes_not_evaluated: number;
  shadow_nodes_not_evaluated: number;
}

export interface ShadowLatency {
  extension_point: string;
  plugin: string;
  shadow_calls: Int64;
  shadow_mean_seconds: number;
  live_calls: Int64;
  live_mean_seconds: number;
}

export interface ShadowStatus {
  profile: string;
  shadow_of: string;
  state: string;
  reason: string;
  generation: Int64;
  compared: Int64;
  skipped: Int64;
  errors: Int64;
  agree_node: Int64;
  agree_feasibility: Int64;
  agree_best: Int64;
  agree_postfilter: Int64;
  disagreements: Int64;
  cpu_seconds: number;
  recent: ShadowDisagreement[];
  latency: ShadowLatency[];
  memory_limit_enforced: boolean;
}

export interface Shadows {
  shadows: ShadowStatus[];
  message: string;
}

// Endpoints maps each path under api/v1/ to its answer.
export interface Endpoints {
  stats: Stats;
  profiles: Profiles;
  plugins: Plugins;
  reloads: Reloads;
  latency: Latency;
  explain: ExplainPage;
  nodes: NodesPage;
  queue: QueuePage;
  pods: PodsPage;
  shadows: Shadows;
}

export type Params = Record<string, string>;

export interface Api {
  // live is false for a report: nothing changes, so nothing polls.
  readonly live: boolean;
  get<P extends keyof Endpoints>(path: P, params?: Params): Promise<Endpoints[P]>;
}

// ApiError is an answer other than 2xx, with the API's {code, message}.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// isMissing is true for a 404: on a list endpoint (pods, reloads, latency) it can only mean that
// this daemon predates the endpoint.
export function isMissing(e: unknown): boolean {
  return e instanceof ApiError && e.status === 404;
}

// query drops empty values so that a cleared filter is the same request as no filter.
function query(params: Params): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "") q.set(k, v);
  const s = q.toString();
  return s === "" ? "" : "?" + s;
}

export class FetchApi implements Api {
  readonly live = true;

  async get<P extends keyof Endpoints>(path: P, params: Params = {}): Promise<Endpoints[P]> {
    // Relative, so the pages work under any prefix a proxy or port-forward puts them.
    let res: Response;
    try {
      res = await fetch("api/v1/" + path + query(params), { cache: "no-store" });
    } catch (e) {
      // fetch only throws when no answer came: the daemon is down or the network is.
      throw new ApiError(0, "UNAVAILABLE", `cannot reach schedhostd: ${(e as Error).message}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError(res.status, "", `${path}: HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    if (!res.ok) {
      const e = body as { code?: string; message?: string };
      throw new ApiError(res.status, e.code ?? "", e.message ?? `HTTP ${res.status}`);
    }
    return body as Endpoints[P];
  }
}
