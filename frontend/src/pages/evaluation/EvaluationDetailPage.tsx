import { ArrowLeft, Trash2 } from "lucide-react";
import { useState } from "react";
import { useTranslation } from "react-i18next";

import { deleteEvaluation, isActive, type EvaluationDetail } from "../../api/evaluation";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ConnectionChip } from "../../components/ConnectionChip";
import { ErrorNotice, Loading, ProgressBar } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import type { Connection } from "../../lib/liveFeed";
import { Link, useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { EvaluationStatusBadge } from "./badges";
import { useEvaluationFeed } from "./evaluationFeed";
import { formatDate } from "./format";
import { progressText } from "./progress";
import { ResultsView } from "./ResultsView";

/** One evaluation: its live progress while it runs, then its results and report. */
export function EvaluationDetailPage({ id }: { id: number }) {
  const { t } = useTranslation();
  const feed = useEvaluationFeed(id);
  const title = t("evaluation.detailTitle", { id });
  useDocumentTitle(title);

  if (feed.evaluation === null) {
    if (feed.error) return <ErrorNotice title={t("evaluation.loadOneFailed")} message={feed.error} onRetry={() => void feed.refresh()} />;
    return <Loading label={t("evaluation.loadingOne")} />;
  }
  return <EvaluationView evaluation={feed.evaluation} connection={feed.connection} />;
}

function duration(evaluation: EvaluationDetail, language: string): string | null {
  if (!evaluation.started_at || !evaluation.finished_at) return null;
  const seconds = (Date.parse(evaluation.finished_at) - Date.parse(evaluation.started_at)) / 1000;
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  const [value, unit] = seconds >= 120 ? [seconds / 60, "minute"] : [seconds, "second"];
  return new Intl.NumberFormat(language, { style: "unit", unit, unitDisplay: "short", maximumFractionDigits: value < 10 ? 1 : 0 }).format(value);
}

function EvaluationView({ evaluation, connection }: { evaluation: EvaluationDetail; connection: Connection }) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  const toast = useToast();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const { done, total } = evaluation.progress;
  const active = isActive(evaluation.status);
  const took = duration(evaluation, language);

  const remove = async () => {
    setConfirming(false);
    try {
      await deleteEvaluation(evaluation.id);
      toast.success(t("evaluation.deleted", { id: evaluation.id }));
      navigate("/evaluation");
    } catch (error) {
      toast.error(t("evaluation.deleteFailed"), error);
    }
  };

  return (
    <section className="page evaluation-page">
      <Link to="/evaluation" className="back-link">
        <ArrowLeft aria-hidden="true" size={16} />
        {t("evaluation.back")}
      </Link>
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("evaluation.detailTitle", { id: evaluation.id })}</h1>
          <p className="page__subtitle">{t("evaluation.onDataset", { dataset: evaluation.dataset_name })}</p>
          <div className="card__meta">
            <EvaluationStatusBadge status={evaluation.status} />
            <ConnectionChip connection={connection} subject="evaluation" />
            {evaluation.pipelines.map((pipeline) => (
              <span key={pipeline.name} className="chip" title={pipeline.preset ? t("evaluation.presetTitle") : t("evaluation.pipelineTitle")}>
                {pipeline.display_name || pipeline.name}
              </span>
            ))}
          </div>
          <dl className="evaluation-settings">
            <div>
              <dt>{t("evaluation.settings.queries")}</dt>
              <dd>{evaluation.query_limit ? t("evaluation.settings.firstQueries", { count: evaluation.query_limit }) : t("evaluation.settings.allQueries")}</dd>
            </div>
            <div>
              <dt>{t("evaluation.settings.depth")}</dt>
              <dd>{evaluation.depth ?? t("evaluation.settings.ownDepth")}</dd>
            </div>
            <div>
              <dt>{t("evaluation.settings.answered")}</dt>
              <dd>{evaluation.answer_queries || t("evaluation.settings.noAnswers")}</dd>
            </div>
            <div>
              <dt>{t("evaluation.settings.created")}</dt>
              <dd>{formatDate(evaluation.created_at, language)}</dd>
            </div>
            {took && (
              <div>
                <dt>{t("evaluation.settings.took")}</dt>
                <dd>{took}</dd>
              </div>
            )}
          </dl>
        </div>
        <div className="page__actions">
          <button type="button" className="button button--danger-outline" onClick={() => setConfirming(true)}>
            <Trash2 aria-hidden="true" size={16} />
            {t("common.delete")}
          </button>
        </div>
      </header>

      <section className="section" aria-label={t("evaluation.progress.title")}>
        <div className="evaluation-progress">
          <ProgressBar
            value={total ? done / total : evaluation.status === "done" ? 1 : 0}
            label={t("evaluation.progress.label")}
            tone={evaluation.status === "failed" ? "failed" : evaluation.status === "done" ? "done" : undefined}
          />
          <span className="stages__count" aria-live="polite">
            {progressText(t, evaluation)}
          </span>
        </div>
        {active && (
          <p className="muted">
            {evaluation.status === "running" && total > 0 && done >= total ? t("evaluation.progress.report") : t(`evaluation.progress.${evaluation.status}`)}
          </p>
        )}
      </section>

      {evaluation.status === "failed" && (
        <ErrorNotice title={t("evaluation.failedTitle")} message={evaluation.error || t("evaluation.failedUnknown")} />
      )}
      {evaluation.status === "done" && !evaluation.results && <Loading label={t("evaluation.loadingResults")} />}
      {evaluation.status === "done" && evaluation.results && <ResultsView evaluation={evaluation} results={evaluation.results} />}

      {confirming && (
        <ConfirmDialog
          title={t("evaluation.deleteTitle")}
          message={t("evaluation.deleteMessage", { id: evaluation.id, dataset: evaluation.dataset_name })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        />
      )}
    </section>
  );
}
