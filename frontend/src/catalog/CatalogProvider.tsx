import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

import { fetchComponent, fetchComponents, type CatalogComponent, type ComponentDetail } from "../api/components";

type ListState =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; components: CatalogComponent[] };

interface CatalogValue {
  list: ListState;
  byName: ReadonlyMap<string, CatalogComponent>;
  reload: () => void;
  /** A component's detail (with its schema), fetched once per language. */
  loadDetail: (name: string) => Promise<ComponentDetail>;
  /** The detail if it has arrived already. */
  peekDetail: (name: string) => ComponentDetail | undefined;
}

const CatalogContext = createContext<CatalogValue | null>(null);

/** The component catalog in the UI's language; fetched again when the language changes. */
export function CatalogProvider({ children }: { children: ReactNode }) {
  const { i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? i18n.language;
  const [list, setList] = useState<ListState>({ status: "loading" });
  const [attempt, setAttempt] = useState(0);
  const details = useRef(new Map<string, Promise<ComponentDetail>>());
  const resolved = useRef(new Map<string, ComponentDetail>());

  useEffect(() => {
    const controller = new AbortController();
    details.current = new Map();
    resolved.current = new Map();
    setList((current) => (current.status === "ready" ? current : { status: "loading" }));
    fetchComponents(controller.signal).then(
      (components) => setList({ status: "ready", components }),
      (error: unknown) => {
        if (!controller.signal.aborted) setList({ status: "error", message: (error as Error).message });
      },
    );
    return () => controller.abort();
  }, [language, attempt]);

  const loadDetail = useCallback((name: string) => {
    const cache = details.current;
    let request = cache.get(name);
    if (!request) {
      request = fetchComponent(name);
      cache.set(name, request);
      request.then(
        (detail) => {
          if (details.current === cache) resolved.current.set(name, detail);
        },
        () => cache.delete(name),
      );
    }
    return request;
  }, []);

  const byName = useMemo(
    () => new Map(list.status === "ready" ? list.components.map((component) => [component.name, component]) : []),
    [list],
  );

  const value = useMemo<CatalogValue>(
    () => ({
      list,
      byName,
      reload: () => setAttempt((count) => count + 1),
      loadDetail,
      peekDetail: (name) => resolved.current.get(name),
    }),
    // `language` renews the value so that details are looked up again in the new language.
    [list, byName, loadDetail, language],
  );

  return <CatalogContext.Provider value={value}>{children}</CatalogContext.Provider>;
}

export function useCatalog(): CatalogValue {
  const catalog = useContext(CatalogContext);
  if (!catalog) throw new Error("Trellis: useCatalog needs a <CatalogProvider>.");
  return catalog;
}

/** A component's name in the UI's language when the catalog has it, else its registry name. */
export function useComponentName(): (name: string) => string {
  const catalog = useContext(CatalogContext);
  return (name) => catalog?.byName.get(name)?.display_name ?? name;
}

/** The details of `names`, as they arrive; `failed` names the ones that could not be loaded. */
export function useComponentDetails(names: readonly string[]): {
  details: ReadonlyMap<string, ComponentDetail>;
  failed: string | null;
} {
  const { loadDetail, peekDetail } = useCatalog();
  const [, setArrivals] = useState(0);
  const [failed, setFailed] = useState<string | null>(null);
  const key = [...new Set(names)].sort().join("\n");

  useEffect(() => {
    let live = true;
    setFailed(null);
    for (const name of key ? key.split("\n") : []) {
      if (peekDetail(name)) continue;
      loadDetail(name).then(
        () => live && setArrivals((count) => count + 1),
        (error: unknown) => live && setFailed((error as Error).message),
      );
    }
    return () => {
      live = false;
    };
  }, [key, loadDetail, peekDetail]);

  const details = new Map<string, ComponentDetail>();
  for (const name of names) {
    const detail = peekDetail(name);
    if (detail) details.set(name, detail);
  }
  return { details, failed };
}
