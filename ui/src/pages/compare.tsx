// Compare (#/compare, in a `schedctl simulate --compare --html` report): the pods the two configs
// place differently, each opening both configs' explanations side by side.

import { useState } from "preact/hooks";
import type { Explanation } from "../api";
import type { ComparedPod, Comparison, ComparedSide } from "../static_api";
import { Grid } from "./pod";

const key = (p: ComparedPod) => `${p.kind}/${p.namespace}/${p.name}`;

function place(side: ComparedSide) {
  return side.node ?? <span class="muted">pending</span>;
}

// Side is one config's cycle for the pod: where it went and its nodes × plugins grid.
function Side({ title, config, side }: { title: string; config: string; side: ComparedSide }) {
  const e: Explanation | null = side.explanation;
  return (
    <section class="panel compare-side" data-testid={`compare-${title}`}>
      <div class="panel-head">
        <h2>{title}</h2>
        <span class="muted">{config}</span>
      </div>
      <p>placed on <b data-testid="compare-node">{place(side)}</b></p>
      {side.message && <p class="muted">{side.message}</p>}
      {e ? (
        <div class="scroll">
          <Grid page={{ explanation: e, nodes_total: e.nodes.length, offset: 0,
            limit: e.nodes.length }} scorers={null} filtered={false} />
        </div>
      ) : <p class="muted">no scheduling cycle was recorded</p>}
    </section>
  );
}

export function ComparePage({ comparison }: { comparison: Comparison }) {
  const differing = comparison.pods.filter((p) => p.differs);
  const [open, setOpen] = useState<string | null>(null);
  const shown = differing.find((p) => key(p) === open);
  return (
    <>
      <section class="panel">
        <div class="panel-head">
          <h2>Pods placed differently</h2>
          <span class="muted" data-testid="compare-count">
            {differing.length} of {comparison.pods.length}: old {comparison.old_config}, new{" "}
            {comparison.new_config}
          </span>
        </div>
        <table class="grid-table">
          <thead>
            <tr>
              <th>pod</th><th>kind</th><th>runs on</th><th>old</th><th>new</th>
              <th>differs by</th><th>why</th>
            </tr>
          </thead>
          <tbody>
            {differing.map((p) => (
              <tr data-testid="compare-row" data-pod={`${p.namespace}/${p.name}`}
                class={key(p) === open ? "chosen" : undefined}
                onClick={() => setOpen(key(p) === open ? null : key(p))}>
                <td class="nowrap"><a href="#/compare" onClick={(ev) => ev.preventDefault()}>
                  {p.namespace}/{p.name}</a></td>
                <td>{p.kind}</td>
                <td>{p.runs_on ?? <span class="muted">—</span>}</td>
                <td>{place(p.old)}</td>
                <td>{place(p.new)}</td>
                <td class="nowrap">{p.point} {p.plugin}</td>
                <td class="message"><div class="clamp" title={p.detail}>{p.detail}</div></td>
              </tr>
            ))}
            {differing.length === 0 && (
              <tr><td colSpan={7} class="muted">both configs place every pod alike</td></tr>
            )}
          </tbody>
        </table>
      </section>
      {shown && (
        <div class="compare-sides" data-testid="compare-sides">
          <Side title="old" config={comparison.old_config} side={shown.old} />
          <Side title="new" config={comparison.new_config} side={shown.new} />
        </div>
      )}
    </>
  );
}
