import { CircleAlert } from "lucide-react";
import { useId, useMemo } from "react";
import { useTranslation } from "react-i18next";

import type { CatalogComponent, ComponentDetail, ComponentRef } from "../../api/components";
import { ComponentIcon } from "../../components/ComponentIcon";
import { InstallModelLink } from "../../components/InstallModelLink";
import { sortNodeErrors, type NodeError } from "../../components/RetrieverTree/errors";
import type { Slot } from "../../components/RetrieverTree/tree";
import { toErrorSchema } from "../../components/SchemaForm/errors";
import { SchemaForm } from "../../components/SchemaForm/SchemaForm";
import type { Params } from "../../components/SchemaForm/schemaUi";
import { Playground } from "../../components/Playground/Playground";
import { Loading } from "../../components/StatusViews";

interface NodeInspectorProps {
  node: ComponentRef;
  entry: CatalogComponent | undefined;
  detail: ComponentDetail | undefined;
  slots: readonly Slot[];
  errors: readonly NodeError[];
  /** The knowledge base a retriever node is tried over ("Try this node"); none: no playground. */
  knowledgeBaseId: number | null;
  onParams: (params: Params, edited: boolean) => void;
}

/** The selected node: what it is, what is wrong with it, and its params' form. */
export function NodeInspector({ node, entry, detail, slots, errors, knowledgeBaseId, onParams }: NodeInspectorProps) {
  const { t } = useTranslation();
  const titleId = useId();
  const formId = useId().replace(/[^a-zA-Z0-9_-]/g, "");
  const slotNames = useMemo(() => slots.map((slot) => slot.name), [slots]);
  const problems = sortNodeErrors(errors, slotNames, detail ? Object.keys(detail.schema.properties ?? {}) : []);
  const extraErrors = useMemo(() => toErrorSchema(problems.form), [problems.form]);

  return (
    <section className="inspector" aria-labelledby={titleId}>
      <header className="inspector__header">
        <span className="inspector__icon">
          <ComponentIcon name={entry?.icon} size={20} />
        </span>
        <div>
          <h2 id={titleId} className="inspector__title">
            {entry?.display_name ?? node.component}
          </h2>
          <code className="inspector__name">{node.component}</code>
        </div>
      </header>
      {entry?.description && <p className="inspector__description">{entry.description}</p>}
      {problems.node.length > 0 && (
        <div role="alert" className="notice notice--error notice--compact">
          <CircleAlert aria-hidden="true" className="notice__icon" size={18} />
          <ul className="plain-list">
            {problems.node.map((message) => (
              <li key={message}>{message}</li>
            ))}
          </ul>
          {problems.actions.map((action) => (
            <InstallModelLink key={JSON.stringify(action)} action={action} />
          ))}
        </div>
      )}
      {slotNames.length > 0 && <p className="form-field__hint">{t("inspector.slotsInTree", { slots: slots.map((slot) => slot.title).join(", ") })}</p>}
      {detail ? (
        <SchemaForm
          key={node.component}
          schema={detail.schema}
          value={node.params ?? {}}
          onChange={onParams}
          idPrefix={`node${formId}`}
          hidden={slotNames}
          extraErrors={extraErrors}
        />
      ) : (
        <Loading label={t("inspector.loading")} />
      )}
      {entry?.kind === "retriever" && knowledgeBaseId !== null && (
        <details className="inspector__try">
          <summary title={t("playground.tryNodeHint")}>{t("playground.tryNode")}</summary>
          <Playground knowledgeBaseId={knowledgeBaseId} retriever={node} title={t("playground.tryNodeHint")} />
        </details>
      )}
    </section>
  );
}
