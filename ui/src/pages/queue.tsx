// Queue (#/queue): the pending pods, where each waits and why.

import { QUEUE_PLACES } from "../api";
import { FilterBox, List, Pager, Panel, podHref, Select, useTable } from "../components";
import { seconds } from "../format";
import { usePoll } from "../poll";

export function QueuePage() {
  const t = useTable({ name: "", where: "" });
  const state = usePoll((api) => api.get("queue", {
    name: t.filters.name, where: t.filters.where, offset: String(t.offset), limit: "100",
  }), [t.filters.name, t.filters.where, t.offset]);
  return (
    <Panel title="Pending pods" state={state} tools={
      <>
        <FilterBox value={t.filters.name} placeholder="namespace/name" onInput={(name) =>
          t.setFilter({ name })} />
        <Select value={t.filters.where} onChange={(where) => t.setFilter({ where })}
          options={[["", "everywhere"], ...QUEUE_PLACES.map((p): [string, string] => [p, p])]} />
        {state.data && <Pager offset={state.data.offset} limit={state.data.limit}
          total={state.data.pods_total} onOffset={t.setOffset} />}
      </>
    }>
      {(page) => (
        <table class="grid-table">
          <thead>
            <tr>
              <th>pod</th><th>where</th><th class="num">attempts</th><th>rejected by</th>
              <th>pending plugins</th><th>gates</th><th class="num">backoff left</th>
              <th>nominated node</th><th>message</th>
            </tr>
          </thead>
          <tbody>
            {page.pods.map((p) => (
              <tr data-testid="queue-row" data-pod={`${p.namespace}/${p.name}`}>
                <td class="nowrap"><a href={podHref(p.namespace, p.name)}>
                  {p.namespace}/{p.name}</a></td>
                <td><span class={`where ${p.where}`}>{p.where}</span></td>
                <td class="num">{p.attempts}</td>
                <td><List items={p.rejected_by} /></td>
                <td><List items={p.pending_plugins} /></td>
                <td><List items={p.scheduling_gates} /></td>
                <td class="num">
                  {p.backoff_left_ms > 0 ? seconds(p.backoff_left_ms / 1000) : "—"}
                </td>
                <td>{p.nominated_node || <span class="muted">—</span>}</td>
                <td class="message"><div class="clamp" title={p.message}>{p.message}</div></td>
              </tr>
            ))}
            {page.pods.length === 0 && <tr><td colSpan={9} class="muted">no pending pods</td></tr>}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
