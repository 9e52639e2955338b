import { ArrowLeft, FileStack, Pencil, Trash2 } from "lucide-react";
import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

import {
  deleteDocument,
  deleteKnowledgeBase,
  fetchKnowledgeBase,
  retryDocument,
  type KnowledgeBase,
  type KnowledgeDocument,
} from "../../api/knowledge";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ConnectionChip } from "../../components/ConnectionChip";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { Link, useLocation, useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { ChunkBrowser } from "./ChunkBrowser";
import { DocumentList } from "./DocumentList";
import { addDocuments, useDocumentFeed } from "./documentFeed";
import { KnowledgeBaseDialog } from "./KnowledgeBaseDialog";
import { TryRetrieval } from "./TryRetrieval";
import { UploadPanel } from "./UploadPanel";
import { useUploads } from "./uploads";

type Dialog =
  | { kind: "edit" }
  | { kind: "delete" }
  | { kind: "deleteDocument"; document: KnowledgeDocument }
  | { kind: "chunks"; document: KnowledgeDocument; position?: number }
  | null;

export function KnowledgeBasePage({ id }: { id: number }) {
  const { t } = useTranslation();
  const { state, reload, update } = useLoad((signal) => fetchKnowledgeBase(id, signal), [id]);
  useDocumentTitle(state.status === "ready" ? state.data.name : t("knowledge.title"));

  if (state.status === "loading") return <Loading label={t("knowledge.loadingOne")} />;
  if (state.status === "error") return <ErrorNotice title={t("knowledge.loadOneFailed")} message={state.message} onRetry={reload} />;
  return <KnowledgeBaseView base={state.data} onChanged={(base) => update(() => base)} />;
}

function KnowledgeBaseView({ base, onChanged }: { base: KnowledgeBase; onChanged: (base: KnowledgeBase) => void }) {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<Dialog>(null);
  const feed = useDocumentFeed(base.id, i18n.resolvedLanguage ?? "en");
  const { setDocuments } = feed;
  const onAccepted = useCallback((documents: KnowledgeDocument[]) => setDocuments((current) => addDocuments(current ?? [], documents)), [setDocuments]);
  const uploads = useUploads(base.id, onAccepted);
  const { search } = useLocation();
  const linked = useRef(false);

  // `?document=<id>&position=<p>` (a citation's link) opens that document's chunks at that chunk, once.
  useEffect(() => {
    if (linked.current || !feed.documents) return;
    const query = new URLSearchParams(search);
    const documentId = Number(query.get("document"));
    const document = feed.documents.find((item) => item.id === documentId);
    if (!document) return;
    linked.current = true;
    const position = query.get("position");
    setDialog({ kind: "chunks", document, position: position !== null && position !== "" ? Number(position) : undefined });
  }, [feed.documents, search]);

  const retry = async (document: KnowledgeDocument) => {
    try {
      const queued = await retryDocument(base.id, document.id);
      setDocuments((current) => (current ?? []).map((item) => (item.id === queued.id ? queued : item)));
    } catch (error) {
      toast.error(t("documents.retryFailed", { name: document.name }), error);
    }
  };

  const removeDocument = async (document: KnowledgeDocument) => {
    setDialog(null);
    try {
      await deleteDocument(base.id, document.id);
      setDocuments((current) => (current ?? []).filter((item) => item.id !== document.id));
      toast.success(t("documents.deleted", { name: document.name }));
    } catch (error) {
      toast.error(t("documents.deleteFailed", { name: document.name }), error);
    }
  };

  const removeBase = async () => {
    setDialog(null);
    try {
      await deleteKnowledgeBase(base.id);
      toast.success(t("knowledge.deleted", { name: base.name }));
      navigate("/knowledge-bases");
    } catch (error) {
      toast.error(t("knowledge.deleteFailed"), error);
    }
  };

  const documents = feed.documents;
  return (
    <section className="page">
      <Link to="/knowledge-bases" className="back-link">
        <ArrowLeft aria-hidden="true" size={16} />
        {t("knowledge.back")}
      </Link>
      <header className="page__header">
        <div>
          <h1 className="page__title">{base.name}</h1>
          {base.description && <p className="page__subtitle">{base.description}</p>}
          <div className="card__meta">
            <span className="chip">{t(`knowledge.languages.${base.language}`)}</span>
            <ConnectionChip connection={feed.connection} subject="documents" />
          </div>
        </div>
        <div className="page__actions">
          <button type="button" className="button" onClick={() => setDialog({ kind: "edit" })}>
            <Pencil aria-hidden="true" size={16} />
            {t("knowledge.rename")}
          </button>
          <button type="button" className="button button--danger-outline" onClick={() => setDialog({ kind: "delete" })}>
            <Trash2 aria-hidden="true" size={16} />
            {t("common.delete")}
          </button>
        </div>
      </header>

      <UploadPanel
        uploads={uploads.uploads}
        onFiles={uploads.add}
        onForce={uploads.force}
        onRetry={uploads.retry}
        onDismiss={uploads.dismiss}
      />

      <section className="section" aria-labelledby="documents-title">
        <div className="section__header">
          <h2 id="documents-title" className="section__title">
            {t("documents.title")}
          </h2>
          {documents && documents.length > 0 && <span className="muted">{t("knowledge.documentCount", { count: documents.length })}</span>}
        </div>
        {documents === null && !feed.error && <Loading label={t("documents.loading")} />}
        {documents === null && feed.error && <ErrorNotice title={t("documents.loadFailed")} message={feed.error} onRetry={() => void feed.refresh()} />}
        {documents?.length === 0 && (
          <EmptyState icon={<FileStack aria-hidden="true" size={28} />} title={t("documents.empty")}>
            <p className="muted">{t("documents.emptyHint")}</p>
          </EmptyState>
        )}
        {documents && documents.length > 0 && (
          <DocumentList
            documents={documents}
            onRetry={retry}
            onDelete={(document) => setDialog({ kind: "deleteDocument", document })}
            onBrowse={(document) => setDialog({ kind: "chunks", document })}
          />
        )}
      </section>

      {documents && documents.length > 0 && <TryRetrieval knowledgeBaseId={base.id} />}

      {dialog?.kind === "edit" && (
        <KnowledgeBaseDialog
          editing={base}
          onClose={() => setDialog(null)}
          onDone={(saved) => {
            setDialog(null);
            onChanged(saved);
          }}
        />
      )}
      {dialog?.kind === "delete" && (
        <ConfirmDialog
          title={t("knowledge.deleteTitle")}
          message={t("knowledge.deleteMessage", { name: base.name })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void removeBase()}
          onCancel={() => setDialog(null)}
        />
      )}
      {dialog?.kind === "deleteDocument" && (
        <ConfirmDialog
          title={t("documents.deleteTitle")}
          message={t("documents.deleteMessage", { name: dialog.document.name })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void removeDocument(dialog.document)}
          onCancel={() => setDialog(null)}
        />
      )}
      {dialog?.kind === "chunks" && (
        <ChunkBrowser knowledgeBaseId={base.id} document={dialog.document} position={dialog.position} onClose={() => setDialog(null)} />
      )}
    </section>
  );
}
