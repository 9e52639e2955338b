import { CircleAlert, LoaderCircle, RotateCw } from "lucide-react";
import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchComponents, type CatalogComponent } from "../api/components";
import { ComponentIcon } from "./ComponentIcon";

type CatalogState =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; components: CatalogComponent[] };

export interface KindGroup {
  kind: string;
  components: CatalogComponent[];
}

/** Group by `kind`, keeping the server's order of kinds and of components within a kind. */
export function groupByKind(components: CatalogComponent[]): KindGroup[] {
  const groups = new Map<string, CatalogComponent[]>();
  for (const component of components) {
    const group = groups.get(component.kind);
    if (group) group.push(component);
    else groups.set(component.kind, [component]);
  }
  return Array.from(groups, ([kind, members]) => ({ kind, components: members }));
}

/** "relevance_evaluator" → "Relevance evaluator": the label of a kind no locale names yet. */
function humanize(key: string): string {
  const words = key.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function ComponentCatalog() {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? i18n.language;
  const [state, setState] = useState<CatalogState>({ status: "loading" });
  const [attempt, setAttempt] = useState(0);
  const titleId = useId();

  useEffect(() => {
    const controller = new AbortController();
    setState({ status: "loading" });
    fetchComponents(controller.signal).then(
      (components) => setState({ status: "ready", components }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setState({
          status: "error",
          message: error instanceof Error ? error.message : String(error),
        });
      },
    );
    return () => controller.abort();
  }, [language, attempt]);

  return (
    <section className="catalog" aria-labelledby={titleId}>
      <header className="catalog__header">
        <h1 id={titleId} className="catalog__title">
          {t("catalog.title")}
        </h1>
        <p className="catalog__subtitle">{t("catalog.subtitle")}</p>
      </header>

      {state.status === "loading" && (
        <p role="status" className="catalog__status">
          <LoaderCircle aria-hidden="true" className="spin" size={18} />
          {t("catalog.loading")}
        </p>
      )}

      {state.status === "error" && (
        <div role="alert" className="notice notice--error">
          <CircleAlert aria-hidden="true" className="notice__icon" size={20} />
          <div className="notice__body">
            <p className="notice__title">{t("catalog.errorTitle")}</p>
            <p className="notice__detail">{state.message}</p>
            <button
              type="button"
              className="button"
              onClick={() => setAttempt((value) => value + 1)}
            >
              <RotateCw aria-hidden="true" size={16} />
              {t("catalog.retry")}
            </button>
          </div>
        </div>
      )}

      {state.status === "ready" && state.components.length === 0 && (
        <p className="catalog__status catalog__status--empty">{t("catalog.empty")}</p>
      )}

      {state.status === "ready" &&
        groupByKind(state.components).map((group) => (
          <KindSection key={group.kind} group={group} />
        ))}
    </section>
  );
}

function KindSection({ group }: { group: KindGroup }) {
  const { t } = useTranslation();
  const headingId = useId();

  return (
    <section className="kind-group" aria-labelledby={headingId}>
      <div className="kind-group__header">
        <h2 id={headingId} className="kind-group__title">
          {t(`kinds.${group.kind}`, { defaultValue: humanize(group.kind) })}
        </h2>
        <span className="kind-group__count">
          {t("catalog.count", { count: group.components.length })}
        </span>
      </div>
      <ul className="card-grid">
        {group.components.map((component) => (
          <ComponentCard key={component.name} component={component} />
        ))}
      </ul>
    </section>
  );
}

function childrenLabel(
  t: ReturnType<typeof useTranslation>["t"],
  min: number | null,
  max: number | null,
): string | null {
  const lower = min ?? 0;
  if (max === null) return lower > 0 ? t("catalog.childrenAtLeast", { count: lower }) : null;
  if (lower === max) return t("catalog.childrenExactly", { count: max });
  return t("catalog.childrenRange", { min: lower, max });
}

function ComponentCard({ component }: { component: CatalogComponent }) {
  const { t } = useTranslation();
  const limits = component.composite
    ? childrenLabel(t, component.min_children, component.max_children)
    : null;

  return (
    <li className="card">
      <span className="card__icon">
        <ComponentIcon name={component.icon} size={22} strokeWidth={1.75} />
      </span>
      <div className="card__body">
        <h3 className="card__title">{component.display_name}</h3>
        {component.description && <p className="card__description">{component.description}</p>}
        <div className="card__meta">
          <code className="card__name">{component.name}</code>
          {component.category && (
            <span className="chip">
              {t(`categories.${component.category}`, { defaultValue: humanize(component.category) })}
            </span>
          )}
          {component.composite && <span className="chip chip--accent">{t("catalog.composite")}</span>}
          {limits && <span className="chip">{limits}</span>}
        </div>
      </div>
    </li>
  );
}
