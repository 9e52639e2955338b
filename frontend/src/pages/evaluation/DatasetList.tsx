import { CircleAlert, Database, Play, Trash2 } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { EvaluationDataset } from "../../api/evaluation";
import { ProgressBar } from "../../components/StatusViews";
import { Link } from "../../router/Router";
import { DatasetStatusBadge } from "./badges";
import { languageName } from "./format";

interface DatasetListProps {
  datasets: readonly EvaluationDataset[];
  onEvaluate: (dataset: EvaluationDataset) => void;
  /** Make its corpus an ordinary knowledge base. */
  onPromote: (dataset: EvaluationDataset) => void;
  onDelete: (dataset: EvaluationDataset) => void;
}

/** The source as people say it: the shared dataset's name or the uploaded file's. */
function sourceLabel(source: string): { kind: "shared" | "upload" | "other"; name: string } {
  const [kind, ...rest] = source.split(":");
  if (kind === "shared" || kind === "upload") return { kind, name: rest.join(":") };
  return { kind: "other", name: source };
}

export function DatasetList({ datasets, onEvaluate, onPromote, onDelete }: DatasetListProps) {
  const { t, i18n } = useTranslation();
  return (
    <ul className="dataset-list" aria-label={t("evaluation.datasets.title")}>
      {datasets.map((dataset) => {
        const { documents } = dataset;
        const source = sourceLabel(dataset.source);
        const indexing = dataset.status === "indexing" || dataset.status === "importing";
        const total = Math.max(dataset.document_count, documents.uploaded);
        return (
          <li key={dataset.id} className={`document dataset${dataset.status === "failed" ? " document--failed" : ""}`} data-dataset-name={dataset.name}>
            <div className="document__body">
              <div className="document__head">
                <span className="document__name">{dataset.name}</span>
                <DatasetStatusBadge status={dataset.status} />
              </div>
              <div className="card__meta">
                <span className="chip" title={t("evaluation.datasets.languageTitle")}>
                  {languageName(dataset.language, i18n.resolvedLanguage ?? "en")}
                </span>
                <span className="chip">{t("evaluation.datasets.queries", { count: dataset.query_count })}</span>
                <span className="chip">{t("evaluation.datasets.documentsReady", { ready: documents.ready, count: dataset.document_count })}</span>
                {documents.failed > 0 && <span className="badge badge--failed">{t("evaluation.datasets.documentsFailed", { count: documents.failed })}</span>}
                {dataset.has_answers && <span className="chip chip--info">{t("evaluation.datasets.hasAnswers")}</span>}
                {dataset.promoted && (
                  <Link to={`/knowledge-bases/${dataset.knowledge_base}`} className="chip chip--accent" title={t("evaluation.datasets.promotedTitle")}>
                    {t("evaluation.datasets.promotedChip")}
                  </Link>
                )}
                <span className="document__note">
                  {source.kind === "other" ? source.name : t(`evaluation.datasets.from.${source.kind}`, { name: source.name })}
                </span>
              </div>
              {indexing && total > 0 && (
                <div className="stages">
                  <ProgressBar value={documents.ready / total} label={t("evaluation.datasets.indexingLabel", { name: dataset.name })} />
                  <span className="stages__count">{t("evaluation.datasets.indexedCount", { done: documents.ready + documents.failed, total })}</span>
                </div>
              )}
              {dataset.error && (
                <p className="document__error">
                  <CircleAlert aria-hidden="true" size={14} />
                  {dataset.error}
                </p>
              )}
            </div>
            <div className="document__actions">
              {dataset.status === "ready" && (
                <button type="button" className="button button--small" onClick={() => onEvaluate(dataset)} aria-label={t("evaluation.datasets.evaluateNamed", { name: dataset.name })}>
                  <Play aria-hidden="true" size={14} />
                  {t("evaluation.datasets.evaluate")}
                </button>
              )}
              {!dataset.promoted && dataset.status !== "failed" && (
                <button
                  type="button"
                  className="button button--small"
                  onClick={() => onPromote(dataset)}
                  aria-label={t("evaluation.datasets.promoteNamed", { name: dataset.name })}
                  title={t("evaluation.datasets.promoteHint")}
                >
                  <Database aria-hidden="true" size={14} />
                  {t("evaluation.datasets.promote")}
                </button>
              )}
              <button
                type="button"
                className="icon-button icon-button--danger"
                aria-label={t("evaluation.datasets.deleteNamed", { name: dataset.name })}
                title={t("common.delete")}
                onClick={() => onDelete(dataset)}
              >
                <Trash2 aria-hidden="true" size={16} />
              </button>
            </div>
          </li>
        );
      })}
    </ul>
  );
}
