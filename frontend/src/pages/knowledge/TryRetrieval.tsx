import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import type { ComponentRef } from "../../api/components";
import { fetchPipelineTemplates } from "../../api/pipelines";
import { Playground } from "../../components/Playground/Playground";
import { useLoad } from "../../lib/useLoad";

/** The knowledge base's "Try retrieval": one of the retriever presets, asked one question. */
export function TryRetrieval({ knowledgeBaseId }: { knowledgeBaseId: number }) {
  const { t } = useTranslation();
  const selectId = useId();
  const { state } = useLoad(fetchPipelineTemplates, []);
  const templates = state.status === "ready" ? state.data.filter((template) => template.available) : [];
  const [chosen, setChosen] = useState<string | null>(null);
  const template = templates.find((item) => item.name === chosen) ?? templates.find((item) => item.default) ?? templates[0];
  const retriever = (template?.document.strategy.params as { retriever?: ComponentRef } | undefined)?.retriever;

  return (
    <section className="section" aria-labelledby="try-retrieval-title">
      <div className="section__header">
        <h2 id="try-retrieval-title" className="section__title">
          {t("playground.title")}
        </h2>
      </div>
      <p className="muted">{t("playground.sectionHint")}</p>
      {templates.length > 0 && (
        <div className="field">
          <label htmlFor={selectId} className="field__label">
            {t("playground.presetLabel")}
          </label>
          <select id={selectId} className="input" value={template?.name ?? ""} onChange={(event) => setChosen(event.target.value)}>
            {templates.map((item) => (
              <option key={item.name} value={item.name}>
                {item.display_name}
              </option>
            ))}
          </select>
          {template?.description && <p className="form-field__hint">{template.description}</p>}
        </div>
      )}
      <Playground knowledgeBaseId={knowledgeBaseId} retriever={retriever} />
    </section>
  );
}
