import { CircleAlert, Trash2 } from "lucide-react";
import { useTranslation } from "react-i18next";

import { isActive, pipelineLabels, type Evaluation } from "../../api/evaluation";
import { ProgressBar } from "../../components/StatusViews";
import { Link } from "../../router/Router";
import { EvaluationStatusBadge } from "./badges";
import { formatDate, formatScore } from "./format";
import { progressText } from "./progress";

interface EvaluationListProps {
  evaluations: readonly Evaluation[];
  onDelete: (evaluation: Evaluation) => void;
}

/** Evaluations newest first: what ran on which dataset, how far it got, and nDCG@10 once done. */
export function EvaluationList({ evaluations, onDelete }: EvaluationListProps) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  return (
    <ul className="evaluation-list" aria-label={t("evaluation.list.title")}>
      {evaluations.map((evaluation) => {
        const { done, total } = evaluation.progress;
        const label = pipelineLabels(evaluation.pipelines);
        const title = t("evaluation.list.name", { id: evaluation.id, dataset: evaluation.dataset_name });
        const scores = new Map(evaluation.summary.map((entry) => [entry.name, entry.metrics["ndcg@10"]]));
        return (
          <li key={evaluation.id} className={`document evaluation-item${evaluation.status === "failed" ? " document--failed" : ""}`} data-evaluation-id={evaluation.id}>
            <div className="document__body">
              <div className="document__head">
                <Link to={`/evaluation/${evaluation.id}`} className="document__name evaluation-item__link">
                  {title}
                </Link>
                <EvaluationStatusBadge status={evaluation.status} />
                <span className="document__note">{formatDate(evaluation.created_at, language)}</span>
              </div>
              <div className="card__meta">
                {evaluation.pipelines.map((pipeline) => (
                  <span key={pipeline.name} className="chip">
                    {label(pipeline.name)}
                    {scores.get(pipeline.name) != null && (
                      <span className="evaluation-item__score" title={t("evaluation.list.ndcgTitle")}>
                        {t("evaluation.list.ndcg", { value: formatScore(scores.get(pipeline.name), language) })}
                      </span>
                    )}
                  </span>
                ))}
              </div>
              {isActive(evaluation.status) && (
                <div className="stages">
                  <ProgressBar value={total ? done / total : 0} label={t("evaluation.progress.labelNamed", { name: title })} />
                  <span className="stages__count">{progressText(t, evaluation)}</span>
                </div>
              )}
              {evaluation.status === "failed" && evaluation.error && (
                <p className="document__error">
                  <CircleAlert aria-hidden="true" size={14} />
                  <span className="evaluation-item__error">{evaluation.error}</span>
                </p>
              )}
            </div>
            <div className="document__actions">
              <button
                type="button"
                className="icon-button icon-button--danger"
                aria-label={t("evaluation.list.deleteNamed", { name: title })}
                title={t("common.delete")}
                onClick={() => onDelete(evaluation)}
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
