import { Database, Pencil, Plus, Trash2 } from "lucide-react";
import { useState } from "react";
import { useTranslation } from "react-i18next";

import { deleteKnowledgeBase, fetchKnowledgeBases, type KnowledgeBase } from "../../api/knowledge";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { Link, useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { KnowledgeBaseDialog } from "./KnowledgeBaseDialog";

type Dialog = { kind: "create" } | { kind: "edit"; base: KnowledgeBase } | { kind: "delete"; base: KnowledgeBase } | null;

export function KnowledgeBaseListPage() {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<Dialog>(null);
  // The demo's name and description come in the UI's language: ask again when it changes.
  const { state, reload, update } = useLoad(fetchKnowledgeBases, [i18n.resolvedLanguage]);
  useDocumentTitle(t("knowledge.title"));

  const remove = async (base: KnowledgeBase) => {
    setDialog(null);
    try {
      await deleteKnowledgeBase(base.id);
      update((bases) => bases.filter((item) => item.id !== base.id));
      toast.success(t("knowledge.deleted", { name: base.name }));
    } catch (error) {
      toast.error(t("knowledge.deleteFailed"), error);
    }
  };

  return (
    <section className="page">
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("knowledge.title")}</h1>
          <p className="page__subtitle">{t("knowledge.subtitle")}</p>
        </div>
        <div className="page__actions">
          <button type="button" className="button button--primary" onClick={() => setDialog({ kind: "create" })}>
            <Plus aria-hidden="true" size={16} />
            {t("knowledge.new")}
          </button>
        </div>
      </header>

      {state.status === "loading" && <Loading label={t("knowledge.loading")} />}
      {state.status === "error" && <ErrorNotice title={t("knowledge.loadFailed")} message={state.message} onRetry={reload} />}
      {state.status === "ready" && state.data.length === 0 && (
        <EmptyState icon={<Database aria-hidden="true" size={28} />} title={t("knowledge.empty")}>
          <p className="muted">{t("knowledge.emptyHint")}</p>
        </EmptyState>
      )}
      {state.status === "ready" && state.data.length > 0 && (
        <ul className="card-grid">
          {state.data.map((base) => (
            <li key={base.id} className="card card--link">
              <div className="card__body">
                <h2 className="card__title">
                  <Link to={`/knowledge-bases/${base.id}`} className="card__link">
                    {base.name}
                  </Link>
                </h2>
                {base.description && <p className="card__description">{base.description}</p>}
                <div className="card__meta">
                  <span className="chip">{t(`knowledge.languages.${base.language}`)}</span>
                  <span className="chip">{t("knowledge.documentCount", { count: base.document_count })}</span>
                  <span className="chip">{t("documents.chunks", { count: base.chunk_total })}</span>
                  {base.in_progress_count > 0 && <span className="badge badge--parsing">{t("knowledge.inProgress", { count: base.in_progress_count })}</span>}
                  {base.failed_count > 0 && <span className="badge badge--failed">{t("knowledge.failed", { count: base.failed_count })}</span>}
                </div>
              </div>
              <div className="card__actions">
                <button type="button" className="icon-button" aria-label={t("knowledge.renameNamed", { name: base.name })} title={t("knowledge.rename")} onClick={() => setDialog({ kind: "edit", base })}>
                  <Pencil aria-hidden="true" size={16} />
                </button>
                <button type="button" className="icon-button icon-button--danger" aria-label={t("knowledge.deleteNamed", { name: base.name })} title={t("common.delete")} onClick={() => setDialog({ kind: "delete", base })}>
                  <Trash2 aria-hidden="true" size={16} />
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}

      {dialog?.kind === "create" && (
        <KnowledgeBaseDialog
          onClose={() => setDialog(null)}
          onDone={(base) => {
            setDialog(null);
            toast.success(t("knowledge.created", { name: base.name }));
            navigate(`/knowledge-bases/${base.id}`);
          }}
        />
      )}
      {dialog?.kind === "edit" && (
        <KnowledgeBaseDialog
          editing={dialog.base}
          onClose={() => setDialog(null)}
          onDone={(base) => {
            setDialog(null);
            update((bases) => bases.map((item) => (item.id === base.id ? base : item)));
          }}
        />
      )}
      {dialog?.kind === "delete" && (
        <ConfirmDialog
          title={t("knowledge.deleteTitle")}
          message={t("knowledge.deleteMessage", { name: dialog.base.name })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void remove(dialog.base)}
          onCancel={() => setDialog(null)}
        />
      )}
    </section>
  );
}
