import { CircleAlert, FileText, Layers, RotateCw, Trash2 } from "lucide-react";
import { useTranslation } from "react-i18next";

import { DOCUMENT_STAGES, type DocumentStatus, type KnowledgeDocument } from "../../api/knowledge";
import { ProgressBar } from "../../components/StatusViews";
import { formatBytes } from "../../lib/format";

/** The stages a document goes through after waiting in the queue. */
const WORK_STAGES = DOCUMENT_STAGES.filter((stage) => stage !== "queued");

interface DocumentListProps {
  documents: readonly KnowledgeDocument[];
  onRetry: (document: KnowledgeDocument) => void;
  onDelete: (document: KnowledgeDocument) => void;
  onBrowse: (document: KnowledgeDocument) => void;
}

function StatusBadge({ status }: { status: DocumentStatus }) {
  const { t } = useTranslation();
  return <span className={`badge badge--${status}`}>{t(`documents.status.${status}`)}</span>;
}

function StageProgress({ document }: { document: KnowledgeDocument }) {
  const { t } = useTranslation();
  const current = WORK_STAGES.indexOf(document.status as (typeof WORK_STAGES)[number]);
  const { done, total } = document.progress;
  const fraction = total > 0 ? done / total : 0;
  const stage = t(`documents.status.${document.status}`);
  return (
    <div className="stages">
      <ol className="stages__steps" aria-label={t("documents.stages")}>
        {WORK_STAGES.map((name, index) => (
          <li
            key={name}
            className={`stages__step${index < current ? " is-done" : ""}${index === current ? " is-current" : ""}`}
            aria-current={index === current ? "step" : undefined}
          >
            {t(`documents.status.${name}`)}
          </li>
        ))}
      </ol>
      <ProgressBar value={fraction} label={t("documents.stageProgress", { stage, name: document.name })} />
      <span className="stages__count">{total > 0 ? t("documents.stageCount", { done, total }) : stage}</span>
    </div>
  );
}

/** Every document of a knowledge base, where it stands, and what can be done with it. */
export function DocumentList({ documents, onRetry, onDelete, onBrowse }: DocumentListProps) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  return (
    <ul className="document-list" aria-label={t("documents.title")}>
      {documents.map((document) => (
        <li key={document.id} className={`document document--${document.status}`} data-document-name={document.name}>
          <FileText aria-hidden="true" size={20} className="document__icon" />
          <div className="document__body">
            <div className="document__head">
              <span className="document__name">{document.name}</span>
              <StatusBadge status={document.status} />
            </div>
            <p className="document__meta">
              {[
                document.size ? formatBytes(document.size, language) : null,
                document.page_count ? t("documents.pages", { count: document.page_count }) : null,
                document.status === "ready" ? t("documents.chunks", { count: document.chunk_count }) : null,
              ]
                .filter(Boolean)
                .join(" · ")}
            </p>
            {document.status === "queued" && <p className="document__note">{t("documents.queued")}</p>}
            {WORK_STAGES.includes(document.status as (typeof WORK_STAGES)[number]) && <StageProgress document={document} />}
            {document.status === "failed" && (
              <>
                <p className="document__error">
                  <CircleAlert aria-hidden="true" size={15} />
                  {document.error ?? t("documents.failedUnknown")}
                </p>
                {document.error_detail && <p className="document__note">{t("documents.errorDetail", { detail: document.error_detail })}</p>}
              </>
            )}
          </div>
          <div className="document__actions">
            {document.status === "ready" && (
              <button type="button" className="button button--small" onClick={() => onBrowse(document)}>
                <Layers aria-hidden="true" size={14} />
                {t("documents.browse")}
                <span className="visually-hidden">{document.name}</span>
              </button>
            )}
            {document.status === "failed" && (
              <button type="button" className="button button--small" onClick={() => onRetry(document)}>
                <RotateCw aria-hidden="true" size={14} />
                {t("documents.retry")}
                <span className="visually-hidden">{document.name}</span>
              </button>
            )}
            <button
              type="button"
              className="icon-button icon-button--danger"
              aria-label={t("documents.deleteNamed", { name: document.name })}
              title={t("common.delete")}
              onClick={() => onDelete(document)}
            >
              <Trash2 aria-hidden="true" size={16} />
            </button>
          </div>
        </li>
      ))}
    </ul>
  );
}
