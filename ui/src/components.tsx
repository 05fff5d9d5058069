// Pieces every page uses: the error banner, a panel that waits for its data, the pager and the
// filter box.

import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { isMissing } from "./api";
import type { Loaded } from "./poll";

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function ErrorBanner({ error }: { error: unknown }) {
  return <div class="error" data-testid="api-error">{errorText(error)}</div>;
}

// podHref is the pod page's route; the parts are encoded so any name survives the hash.
export function podHref(namespace: string, name: string): string {
  return `#/pod/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}

interface PanelProps<T> {
  title: string;
  state: Loaded<T>;
  // optional: the endpoint is newer than some daemons, whose 404 reads "not available".
  optional?: boolean;
  // tools sit on the title line (filters, pager).
  tools?: ComponentChildren;
  children: (data: T) => ComponentChildren;
}

export function Panel<T>({ title, state, optional, tools, children }: PanelProps<T>) {
  const missing = optional && isMissing(state.error);
  return (
    <section class="panel">
      <div class="panel-head">
        <h2>{title}</h2>
        {tools}
      </div>
      {missing ? <p class="muted">not available</p> :
        state.error !== undefined && <ErrorBanner error={state.error} />}
      {!missing && (state.data !== undefined ? children(state.data) :
        state.error === undefined && <p class="muted">loading…</p>)}
    </section>
  );
}

export function Pager({ offset, limit, total, onOffset }: {
  offset: number;
  limit: number;
  total: number;
  onOffset: (offset: number) => void;
}) {
  const last = Math.min(offset + limit, total);
  return (
    <span class="pager">
      <button disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        ‹ prev
      </button>
      <span>{total === 0 ? "0 of 0" : `${offset + 1}–${last} of ${total}`}</span>
      <button disabled={last >= total} onClick={() => onOffset(offset + limit)}>next ›</button>
    </span>
  );
}

export function FilterBox({ value, placeholder, onInput }: {
  value: string;
  placeholder: string;
  onInput: (value: string) => void;
}) {
  return (
    <input
      type="search"
      class="filter"
      placeholder={placeholder}
      value={value}
      onInput={(e) => onInput(e.currentTarget.value)}
    />
  );
}

export function Select({ value, options, onChange }: {
  value: string;
  // [value, label]; the value "" means no filter.
  options: [string, string][];
  onChange: (value: string) => void;
}) {
  return (
    <select value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      {options.map(([v, label]) => <option value={v}>{label}</option>)}
    </select>
  );
}

// List prints a list of names, "—" when it is empty.
export function List({ items }: { items: string[] }) {
  return items.length === 0 ? <span class="muted">—</span> : <>{items.join(", ")}</>;
}

// useTable holds a table's filters and its page: changing a filter goes back to the first page,
// since the old offset may lie past the end of the new list.
export function useTable<F extends Record<string, string>>(initial: F) {
  const [state, setState] = useState({ filters: initial, offset: 0 });
  return {
    filters: state.filters,
    offset: state.offset,
    setFilter: (patch: Partial<F>) =>
      setState((s) => ({ filters: { ...s.filters, ...patch }, offset: 0 })),
    setOffset: (offset: number) => setState((s) => ({ ...s, offset })),
  };
}
