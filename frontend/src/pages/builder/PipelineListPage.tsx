import { Copy, FileUp, Plus, Trash2, Workflow } from "lucide-react";
import { useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchKnowledgeBases, type KnowledgeBase } from "../../api/knowledge";
import { deletePipeline, duplicatePipeline, fetchPipelines, type PipelineSummary } from "../../api/pipelines";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { Link, useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { ImportPipelineDialog } from "./ImportPipelineDialog";
import { NewPipelineDialog } from "./NewPipelineDialog";
import { ReadinessChip } from "./ReadinessChip";

interface ListData {
  pipelines: PipelineSummary[];
  knowledgeBases: KnowledgeBase[];
}

type Dialog = { kind: "new" } | { kind: "import" } | { kind: "delete"; pipeline: PipelineSummary } | null;

export function PipelineListPage() {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<Dialog>(null);
  const { state, reload, update } = useLoad<ListData>(
    async (signal) => {
      const [pipelines, knowledgeBases] = await Promise.all([fetchPipelines(signal), fetchKnowledgeBases(signal)]);
      return { pipelines, knowledgeBases };
    },
    [i18n.resolvedLanguage],
  );
  useDocumentTitle(t("pipelines.title"));

  const knowledgeBases = state.status === "ready" ? state.data.knowledgeBases : [];
  const noBases = state.status === "ready" && knowledgeBases.length === 0;

  const duplicate = async (pipeline: PipelineSummary) => {
    try {
      const copy = await duplicatePipeline(pipeline.id);
      toast.success(t("builder.duplicated", { name: copy.name }));
      navigate(`/pipelines/${copy.id}`);
    } catch (error) {
      toast.error(t("builder.duplicateFailed"), error);
    }
  };

  const remove = async (pipeline: PipelineSummary) => {
    setDialog(null);
    try {
      await deletePipeline(pipeline.id);
      update((data) => ({ ...data, pipelines: data.pipelines.filter((item) => item.id !== pipeline.id) }));
      toast.success(t("pipelines.deleted", { name: pipeline.name }));
    } catch (error) {
      toast.error(t("pipelines.deleteFailed"), error);
    }
  };

  return (
    <section className="page">
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("pipelines.title")}</h1>
          <p className="page__subtitle">{t("pipelines.subtitle")}</p>
        </div>
        <div className="page__actions">
          <button type="button" className="button" onClick={() => setDialog({ kind: "import" })} disabled={noBases || state.status !== "ready"}>
            <FileUp aria-hidden="true" size={16} />
            {t("pipelines.import")}
          </button>
          <button type="button" className="button button--primary" onClick={() => setDialog({ kind: "new" })} disabled={noBases || state.status !== "ready"}>
            <Plus aria-hidden="true" size={16} />
            {t("pipelines.new")}
          </button>
        </div>
      </header>

      {state.status === "loading" && <Loading label={t("pipelines.loading")} />}
      {state.status === "error" && <ErrorNotice title={t("pipelines.loadFailed")} message={state.message} onRetry={reload} />}
      {noBases && (
        <EmptyState icon={<Workflow aria-hidden="true" size={28} />} title={t("pipelines.needKnowledgeBase")}>
          <Link to="/knowledge-bases" className="button button--primary">
            {t("pipelines.goToKnowledgeBases")}
          </Link>
        </EmptyState>
      )}
      {state.status === "ready" && !noBases && state.data.pipelines.length === 0 && (
        <EmptyState icon={<Workflow aria-hidden="true" size={28} />} title={t("pipelines.empty")}>
          <p className="muted">{t("pipelines.emptyHint")}</p>
        </EmptyState>
      )}
      {state.status === "ready" && state.data.pipelines.length > 0 && (
        <ul className="card-grid">
          {state.data.pipelines.map((pipeline) => (
            <li key={pipeline.id} className="card card--link">
              <div className="card__body">
                <h2 className="card__title">
                  <Link to={`/pipelines/${pipeline.id}`} className="card__link">
                    {pipeline.name}
                  </Link>
                </h2>
                {pipeline.description && <p className="card__description">{pipeline.description}</p>}
                <p className="card__representation">{pipeline.representation}</p>
                <div className="card__meta">
                  <span className="chip">{pipeline.knowledge_base_name}</span>
                  <ReadinessChip ready={pipeline.ready} waitingFor={pipeline.waiting_for} />
                </div>
              </div>
              <div className="card__actions">
                <button type="button" className="icon-button" aria-label={t("pipelines.duplicateNamed", { name: pipeline.name })} title={t("builder.duplicate")} onClick={() => duplicate(pipeline)}>
                  <Copy aria-hidden="true" size={16} />
                </button>
                <button type="button" className="icon-button icon-button--danger" aria-label={t("pipelines.deleteNamed", { name: pipeline.name })} title={t("common.delete")} onClick={() => setDialog({ kind: "delete", pipeline })}>
                  <Trash2 aria-hidden="true" size={16} />
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}

      {dialog?.kind === "new" && <NewPipelineDialog knowledgeBases={knowledgeBases} onClose={() => setDialog(null)} />}
      {dialog?.kind === "import" && <ImportPipelineDialog knowledgeBases={knowledgeBases} onClose={() => setDialog(null)} />}
      {dialog?.kind === "delete" && (
        <ConfirmDialog
          title={t("pipelines.deleteTitle")}
          message={t("pipelines.deleteMessage", { name: dialog.pipeline.name })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void remove(dialog.pipeline)}
          onCancel={() => setDialog(null)}
        />
      )}
    </section>
  );
}
