import { useCallback, useEffect, useRef, useState, type DependencyList } from "react";

export type Loadable<T> =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; data: T };

/**
 * Load data when `deps` change (aborting the previous request), with `reload` to try again and
 * `update` to change what was loaded after a write. A reload answers what the server had when it
 * was asked; `merge` decides what of it replaces data shown meanwhile (a write that settled while
 * the reload was in flight is newer than the reload's copy).
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList,
  merge?: (fresh: T, shown: T) => T) {
  const [state, setState] = useState<Loadable<T>>({ status: "loading" });
  const [attempt, setAttempt] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  const merger = useRef(merge);
  merger.current = merge;

  useEffect(() => {
    const controller = new AbortController();
    setState((current) => (current.status === "ready" ? current : { status: "loading" }));
    loader.current(controller.signal).then(
      (data) => setState((current) => ({
        status: "ready",
        data: current.status === "ready" && merger.current ? merger.current(data, current.data) : data,
      })),
      (error: unknown) => {
        if (!controller.signal.aborted) setState({ status: "error", message: (error as Error).message });
      },
    );
    return () => controller.abort();
    // `deps` are the caller's: the loader is read through a ref so it need not be memoised.
  }, [...deps, attempt]);

  const reload = useCallback(() => setAttempt((count) => count + 1), []);
  const update = useCallback((change: (data: T) => T) => {
    setState((current) => (current.status === "ready" ? { status: "ready", data: change(current.data) } : current));
  }, []);
  return { state, reload, update };
}
