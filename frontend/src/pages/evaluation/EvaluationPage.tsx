import { ChartColumn, DatabaseZap, Play, Plus } from "lucide-react";
import { useState } from "react";
import { useTranslation } from "react-i18next";

import {
  deleteDataset,
  deleteEvaluation,
  fetchDatasets,
  fetchEvaluations,
  isActive,
  promoteDataset,
  type Evaluation,
  type EvaluationDataset,
} from "../../api/evaluation";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { usePolling } from "../../lib/liveFeed";
import { useLoad } from "../../lib/useLoad";
import { useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { DatasetDialog } from "./DatasetDialog";
import { DatasetList } from "./DatasetList";
import { EvaluationList } from "./EvaluationList";
import { NewEvaluationDialog } from "./NewEvaluationDialog";

type Dialog =
  | { kind: "dataset" }
  | { kind: "evaluate"; dataset?: number }
  | { kind: "deleteDataset"; dataset: EvaluationDataset }
  | { kind: "promoteDataset"; dataset: EvaluationDataset }
  | { kind: "deleteEvaluation"; evaluation: Evaluation }
  | null;

/**
 * The evaluation section: the user's datasets (imported from the shared folder or uploaded as
 * BEIR zips, followed while they are indexed), and their evaluations with their progress.
 */
export function EvaluationPage() {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<Dialog>(null);
  const datasets = useLoad(fetchDatasets, []);
  // Presets are named in the UI's language by the server: read again when it changes.
  const evaluations = useLoad(fetchEvaluations, [i18n.resolvedLanguage]);
  useDocumentTitle(t("evaluation.title"));

  const datasetList = datasets.state.status === "ready" ? datasets.state.data : [];
  const evaluationList = evaluations.state.status === "ready" ? evaluations.state.data : [];
  const importing = datasetList.some((dataset) => dataset.status === "importing" || dataset.status === "indexing");
  const running = evaluationList.some((evaluation) => isActive(evaluation.status));
  const { update: updateDatasets } = datasets;
  const { update: updateEvaluations } = evaluations;
  usePolling(importing, async (signal) => {
    const fresh = await fetchDatasets(signal);
    updateDatasets(() => fresh);
  });
  usePolling(running, async (signal) => {
    const fresh = await fetchEvaluations(signal);
    updateEvaluations(() => fresh);
  });

  const removeDataset = async (dataset: EvaluationDataset) => {
    setDialog(null);
    try {
      await deleteDataset(dataset.id);
      updateDatasets((list) => list.filter((item) => item.id !== dataset.id));
      updateEvaluations((list) => list.filter((item) => item.dataset !== dataset.id));
      toast.success(t("evaluation.datasets.deleted", { name: dataset.name }));
    } catch (error) {
      toast.error(t("evaluation.datasets.deleteFailed"), error);
    }
  };

  const promote = async (dataset: EvaluationDataset) => {
    setDialog(null);
    try {
      const promoted = await promoteDataset(dataset.id);
      updateDatasets((list) => list.map((item) => (item.id === promoted.id ? promoted : item)));
      toast.success(t("evaluation.datasets.promoted", { name: dataset.name }));
    } catch (error) {
      toast.error(t("evaluation.datasets.promoteFailed"), error);
    }
  };

  const removeEvaluation = async (evaluation: Evaluation) => {
    setDialog(null);
    try {
      await deleteEvaluation(evaluation.id);
      updateEvaluations((list) => list.filter((item) => item.id !== evaluation.id));
      toast.success(t("evaluation.deleted", { id: evaluation.id }));
    } catch (error) {
      toast.error(t("evaluation.deleteFailed"), error);
    }
  };

  const anyReady = datasetList.some((dataset) => dataset.status === "ready");

  return (
    <section className="page">
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("evaluation.title")}</h1>
          <p className="page__subtitle">{t("evaluation.subtitle")}</p>
        </div>
        <div className="page__actions">
          <button type="button" className="button" onClick={() => setDialog({ kind: "dataset" })}>
            <Plus aria-hidden="true" size={16} />
            {t("evaluation.datasets.add")}
          </button>
          <button
            type="button"
            className="button button--primary"
            disabled={!anyReady}
            title={anyReady ? undefined : t("evaluation.new.noReadyDataset")}
            onClick={() => setDialog({ kind: "evaluate" })}
          >
            <Play aria-hidden="true" size={16} />
            {t("evaluation.new.open")}
          </button>
        </div>
      </header>

      <section className="section" aria-labelledby="datasets-title">
        <div className="section__header">
          <h2 id="datasets-title" className="section__title">
            {t("evaluation.datasets.title")}
          </h2>
          <span className="muted">{t("evaluation.datasets.subtitle")}</span>
        </div>
        {datasets.state.status === "loading" && <Loading label={t("evaluation.datasets.loading")} />}
        {datasets.state.status === "error" && (
          <ErrorNotice title={t("evaluation.datasets.loadFailed")} message={datasets.state.message} onRetry={datasets.reload} />
        )}
        {datasets.state.status === "ready" && datasetList.length === 0 && (
          <EmptyState icon={<DatabaseZap aria-hidden="true" size={28} />} title={t("evaluation.datasets.empty")}>
            <p className="muted">{t("evaluation.datasets.emptyHint")}</p>
          </EmptyState>
        )}
        {datasetList.length > 0 && (
          <DatasetList
            datasets={datasetList}
            onEvaluate={(dataset) => setDialog({ kind: "evaluate", dataset: dataset.id })}
            onPromote={(dataset) => setDialog({ kind: "promoteDataset", dataset })}
            onDelete={(dataset) => setDialog({ kind: "deleteDataset", dataset })}
          />
        )}
      </section>

      <section className="section" aria-labelledby="evaluations-title">
        <div className="section__header">
          <h2 id="evaluations-title" className="section__title">
            {t("evaluation.list.title")}
          </h2>
        </div>
        {evaluations.state.status === "loading" && <Loading label={t("evaluation.list.loading")} />}
        {evaluations.state.status === "error" && (
          <ErrorNotice title={t("evaluation.list.loadFailed")} message={evaluations.state.message} onRetry={evaluations.reload} />
        )}
        {evaluations.state.status === "ready" && evaluationList.length === 0 && (
          <EmptyState icon={<ChartColumn aria-hidden="true" size={28} />} title={t("evaluation.list.empty")}>
            <p className="muted">{t("evaluation.list.emptyHint")}</p>
          </EmptyState>
        )}
        {evaluationList.length > 0 && (
          <EvaluationList evaluations={evaluationList} onDelete={(evaluation) => setDialog({ kind: "deleteEvaluation", evaluation })} />
        )}
      </section>

      {dialog?.kind === "dataset" && (
        <DatasetDialog
          onClose={() => setDialog(null)}
          onDone={(dataset) => {
            setDialog(null);
            updateDatasets((list) => [...list.filter((item) => item.id !== dataset.id), dataset].sort(byName));
            toast.success(t("evaluation.datasets.added", { name: dataset.name }));
          }}
        />
      )}
      {dialog?.kind === "evaluate" && (
        <NewEvaluationDialog
          datasets={datasetList}
          initialDataset={dialog.dataset}
          onClose={() => setDialog(null)}
          onCreated={(evaluation) => {
            setDialog(null);
            toast.success(t("evaluation.new.started", { id: evaluation.id }));
            navigate(`/evaluation/${evaluation.id}`);
          }}
        />
      )}
      {dialog?.kind === "deleteDataset" && (
        <ConfirmDialog
          title={t("evaluation.datasets.deleteTitle")}
          message={t(dialog.dataset.promoted ? "evaluation.datasets.deleteMessagePromoted" : "evaluation.datasets.deleteMessage", {
            name: dialog.dataset.name,
          })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void removeDataset(dialog.dataset)}
          onCancel={() => setDialog(null)}
        />
      )}
      {dialog?.kind === "promoteDataset" && (
        <ConfirmDialog
          title={t("evaluation.datasets.promoteTitle")}
          message={t("evaluation.datasets.promoteMessage", { name: dialog.dataset.name })}
          confirmLabel={t("evaluation.datasets.promote")}
          onConfirm={() => void promote(dialog.dataset)}
          onCancel={() => setDialog(null)}
        />
      )}
      {dialog?.kind === "deleteEvaluation" && (
        <ConfirmDialog
          title={t("evaluation.deleteTitle")}
          message={t("evaluation.deleteMessage", { id: dialog.evaluation.id, dataset: dialog.evaluation.dataset_name })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void removeEvaluation(dialog.evaluation)}
          onCancel={() => setDialog(null)}
        />
      )}
    </section>
  );
}

/** The server lists datasets by name. */
function byName(a: EvaluationDataset, b: EvaluationDataset): number {
  return a.name.localeCompare(b.name) || a.id - b.id;
}
