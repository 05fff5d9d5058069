// usePoll loads a page's data and, from a live daemon, loads it again every 2 s while the tab is
// visible; a report never changes, so it is read once.

import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import type { Api } from "./api";

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("no Api: the pages render inside ApiContext.Provider");
  return api;
}

const POLL_MS = 2000;

// Loaded is the last answer and the last error; a failed poll keeps the answer before it, so a
// hiccup shows a banner over the data instead of blanking the page.
export interface Loaded<T> {
  data?: T;
  error?: unknown;
}

export function usePoll<T>(load: (api: Api) => Promise<T>, deps: unknown[]): Loaded<T> {
  const api = useApi();
  const [state, setState] = useState<Loaded<T>>({});
  useEffect(() => {
    // Answers to an older `deps` arrive after the new ones were asked for; `done` drops them.
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // paused: a tick came while the tab was hidden; the next visibilitychange resumes polling.
    let paused = false;
    const run = async () => {
      try {
        const data = await load(api);
        if (!done) setState({ data });
      } catch (error) {
        if (!done) setState((s) => ({ data: s.data, error }));
      }
      if (!done && api.live) timer = setTimeout(tick, POLL_MS);
    };
    const tick = () => {
      if (document.visibilityState === "visible") void run();
      else paused = true;
    };
    const onVisibility = () => {
      if (paused && document.visibilityState === "visible") {
        paused = false;
        void run();
      }
    };
    document.addEventListener("visibilitychange", onVisibility);
    void run();
    return () => {
      done = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
    // `load` is a new closure each render; what it reads is listed in `deps`.
  }, [api, ...deps]);
  return state;
}
