import { CircleAlert, FilePlus2 } from "lucide-react";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import type { KnowledgeBase } from "../../api/knowledge";
import { fetchPipelineTemplates } from "../../api/pipelines";
import { useCatalog } from "../../catalog/CatalogProvider";
import { ComponentIcon } from "../../components/ComponentIcon";
import { InstallModelLink } from "../../components/InstallModelLink";
import { Modal } from "../../components/Modal";
import { ErrorNotice, Loading } from "../../components/StatusViews";
import { useLoad } from "../../lib/useLoad";
import { ROOT_KIND } from "../../components/RetrieverTree/tree";
import { useNavigate } from "../../router/Router";
import { DEFAULT_STRATEGY, newPipelineUrl } from "./newPipeline";

const EMPTY = "";

/** Name the pipeline, pick its knowledge base and a starting point, then open the builder. */
export function NewPipelineDialog({ knowledgeBases, onClose }: { knowledgeBases: KnowledgeBase[]; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const { list } = useCatalog();
  const strategies = list.status === "ready" ? list.components.filter((component) => component.kind === ROOT_KIND) : [];
  const { state: templates, reload } = useLoad(fetchPipelineTemplates, [i18n.resolvedLanguage]);
  const [name, setName] = useState("");
  const [knowledgeBase, setKnowledgeBase] = useState<number | null>(knowledgeBases[0]?.id ?? null);
  const [template, setTemplate] = useState<string | null>(null);
  const [strategy, setStrategy] = useState(
    strategies.some((component) => component.name === DEFAULT_STRATEGY) ? DEFAULT_STRATEGY : (strategies[0]?.name ?? ""),
  );
  const nameId = useId();
  const baseId = useId();
  const strategyId = useId();

  const chosen = template ?? (templates.status === "ready" ? (templates.data.find((item) => item.default)?.name ?? EMPTY) : EMPTY);

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    navigate(
      newPipelineUrl({
        name: name.trim() || t("newPipeline.untitled"),
        knowledgeBase,
        template: chosen || null,
        strategy: chosen ? null : strategy,
      }),
    );
  };

  return (
    <Modal
      title={t("newPipeline.title")}
      onClose={onClose}
      size="large"
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form="new-pipeline" className="button button--primary" disabled={knowledgeBase === null}>
            {t("newPipeline.create")}
          </button>
        </>
      }
    >
      <form id="new-pipeline" className="stack" onSubmit={submit}>
        <div className="form-row">
          <div className="field field--grow">
            <label htmlFor={nameId} className="field__label">
              {t("newPipeline.name")}
            </label>
            <input
              id={nameId}
              className="input"
              value={name}
              placeholder={t("newPipeline.namePlaceholder")}
              onChange={(event) => setName(event.target.value)}
              data-autofocus
            />
          </div>
          <div className="field field--grow">
            <label htmlFor={baseId} className="field__label">
              {t("builder.knowledgeBase")}
            </label>
            <select
              id={baseId}
              className="input"
              value={knowledgeBase ?? ""}
              onChange={(event) => setKnowledgeBase(Number(event.target.value) || null)}
            >
              {knowledgeBases.map((base) => (
                <option key={base.id} value={base.id}>
                  {base.name}
                </option>
              ))}
            </select>
          </div>
        </div>

        <fieldset className="template-gallery">
          <legend className="field__label">{t("newPipeline.startFrom")}</legend>
          {templates.status === "loading" && <Loading label={t("newPipeline.loadingTemplates")} />}
          {templates.status === "error" && (
            <ErrorNotice title={t("newPipeline.templatesFailed")} message={templates.message} onRetry={reload} />
          )}
          {templates.status === "ready" && (
            <div className="template-grid">
              {templates.data.map((item) => (
                <label key={item.name} className={`template-card${chosen === item.name ? " is-selected" : ""}`}>
                  <input
                    type="radio"
                    name="template"
                    value={item.name}
                    checked={chosen === item.name}
                    onChange={() => setTemplate(item.name)}
                    className="visually-hidden"
                  />
                  <span className="template-card__icon">
                    <ComponentIcon name={item.icon} size={20} />
                  </span>
                  <span className="template-card__name">
                    {item.display_name}
                    {item.default && <span className="chip chip--accent">{t("newPipeline.recommended")}</span>}
                  </span>
                  <span className="template-card__description">{item.description}</span>
                  {!item.available && item.unavailable_reason && (
                    <span className="template-card__warning" title={item.unavailable_reason}>
                      <CircleAlert aria-hidden="true" size={14} />
                      {item.unavailable_reason}
                    </span>
                  )}
                  {!item.available && <InstallModelLink action={item.unavailable_action} />}
                </label>
              ))}
              <label className={`template-card${chosen === EMPTY ? " is-selected" : ""}`}>
                <input
                  type="radio"
                  name="template"
                  value={EMPTY}
                  checked={chosen === EMPTY}
                  onChange={() => setTemplate(EMPTY)}
                  className="visually-hidden"
                />
                <span className="template-card__icon">
                  <FilePlus2 aria-hidden="true" size={20} />
                </span>
                <span className="template-card__name">{t("newPipeline.empty")}</span>
                <span className="template-card__description">{t("newPipeline.emptyDescription")}</span>
              </label>
            </div>
          )}
        </fieldset>

        {chosen === EMPTY && strategies.length > 0 && (
          <div className="field">
            <label htmlFor={strategyId} className="field__label">
              {t("newPipeline.strategy")}
            </label>
            <select id={strategyId} className="input" value={strategy} onChange={(event) => setStrategy(event.target.value)}>
              {strategies.map((component) => (
                <option key={component.name} value={component.name}>
                  {component.display_name}
                </option>
              ))}
            </select>
          </div>
        )}
      </form>
    </Modal>
  );
}
