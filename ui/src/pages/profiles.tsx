// Profiles (#/profiles): each profile's extension points in run order, their plugins and
// weights, and the mean time each took since the daemon started.

import { type Api, isMissing, type Latency, num, type Profile, type Timing } from "../api";
import { Panel } from "../components";
import { mean } from "../format";
import { useApi, usePoll } from "../poll";

async function load(api: Api) {
  const [profiles, latency] = await Promise.all([
    api.get("profiles"),
    // Older daemons have no /latency: the page then shows the profiles without timings.
    api.get("latency").catch((e: unknown) => {
      if (isMissing(e)) return null;
      throw e;
    }),
  ]);
  return { profiles, latency };
}

function Mean({ t }: { t: Timing | undefined }) {
  const count = num(t?.count);
  return (
    <span title={t ? `${count} observations, ${t.sum_seconds.toFixed(6)} s in all` : undefined}>
      {mean(t?.sum_seconds ?? 0, count)}
    </span>
  );
}

// prettyArgs prints the args on one line, spaced as JSON.stringify indents them (a newline
// inside JSON text is always whitespace: strings carry theirs escaped); text that is not JSON is
// shown as it came.
function prettyArgs(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 1).replace(/\n\s*/g, " ");
  } catch {
    return json;
  }
}

function ProfileTable({ p, latency }: { p: Profile; latency: Latency | null }) {
  const attempts = latency?.attempts.filter((a) => a.profile === p.scheduler_name &&
    num(a.count) > 0) ?? [];
  const point = (ep: string) => latency?.extension_points.find((x) =>
    x.profile === p.scheduler_name && x.extension_point === ep);
  // Plugin timings carry no profile (as upstream's metric): the same plugin in two profiles
  // shares one figure.
  const plugin = (name: string, ep: string) => latency?.plugins.find((x) =>
    x.plugin === name && x.extension_point === ep);
  return (
    <section class="panel">
      <div class="panel-head">
        <h2>{p.scheduler_name}</h2>
        <span class="muted">
          percentageOfNodesToScore {p.percentage_of_nodes_to_score || "adaptive"}
        </span>
        {attempts.map((a) => (
          <span class="muted">
            {a.result}: {num(a.count)} attempts, mean <Mean t={a} />
          </span>
        ))}
      </div>
      <table class="grid-table profile">
        <thead>
          <tr>
            <th>extension point</th><th class="num">mean per cycle</th><th>plugin</th>
            <th class="num">weight</th><th class="num">mean per call</th>
            <th class="num">calls sampled</th>
          </tr>
        </thead>
        <tbody>
          {p.extension_points.map((ep) => ep.plugins.length === 0 ? (
            // Shown empty too, so the points read in their run order without a gap.
            <tr class="group" data-point={ep.extension_point}>
              <td class="name">{ep.extension_point}</td>
              <td class="num"><Mean t={point(ep.extension_point)} /></td>
              <td colSpan={4} class="muted">no plugin</td>
            </tr>
          ) : ep.plugins.map((pl, i) => {
            const t = plugin(pl.name, ep.extension_point);
            return (
              <tr class={i === 0 ? "group" : undefined} data-point={ep.extension_point}
                data-plugin={pl.name}>
                {i === 0 && <td rowSpan={ep.plugins.length} class="name">{ep.extension_point}</td>}
                {i === 0 && (
                  <td rowSpan={ep.plugins.length} class="num">
                    <Mean t={point(ep.extension_point)} />
                  </td>
                )}
                <td>{pl.name}</td>
                <td class="num weight">{ep.extension_point === "Score" ? pl.weight : ""}</td>
                <td class="num"><Mean t={t} /></td>
                <td class="num">{num(t?.count)}</td>
              </tr>
            );
          }))}
        </tbody>
      </table>
      {(p.plugin_args ?? []).length > 0 && (
        <table class="grid-table args">
          <thead><tr><th>plugin</th><th>args (plugin_config)</th></tr></thead>
          <tbody>
            {p.plugin_args?.map((a) => (
              <tr data-plugin={a.name}>
                <td class="name">{a.name}</td>
                <td class="mono">{prettyArgs(a.args_json)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Profiles() {
  const state = usePoll(load, []);
  const since = useApi().live ? "since the daemon started" : "over the simulation";
  return (
    <>
      <Panel title="Profiles" state={state}>
        {(d) => (
          <p class="muted">
            generation {num(d.profiles.generation)}
            {d.latency ? `; timings are means ${since}, plugin calls on a 10% sample of cycles ` +
              "as upstream" : "; timings not available from this daemon"}
          </p>
        )}
      </Panel>
      {state.data?.profiles.profiles.map((p) => (
        <ProfileTable p={p} latency={state.data?.latency ?? null} />
      ))}
    </>
  );
}
