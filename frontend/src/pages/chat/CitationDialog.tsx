import { ExternalLink, FileText } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { ChatMessage, Citation } from "../../api/chat";
import { Modal } from "../../components/Modal";
import { safeHref } from "../../lib/links";
import { pageRangeLabel } from "../../lib/pages";
import { Link } from "../../router/Router";

/** The chunk an answer cites: its document, page and whole text, and where to read it in context. */
export function CitationDialog({ citation, message, knowledgeBaseId, onClose }: {
  citation: Citation;
  message: ChatMessage | null;
  knowledgeBaseId: number | null;
  onClose: () => void;
}) {
  const { t, i18n } = useTranslation();
  const sent = message?.chunks.find((chunk) => chunk.chunk_id === citation.chunk_id);
  const window = sent?.metadata.window;
  const source = safeHref(citation.url);
  const pages = pageRangeLabel(citation.page, citation.last_page, i18n.resolvedLanguage);
  const browser = knowledgeBaseId !== null
    ? `/knowledge-bases/${knowledgeBaseId}?document=${citation.document_id}&position=${citation.position}`
    : null;
  return (
    <Modal title={t("citation.title", { n: citation.n })} onClose={onClose} size="medium">
      <div className="citation-detail">
        <p className="citation-detail__document">
          <FileText aria-hidden="true" size={16} />
          <strong>{citation.document_name ?? t("citation.document", { id: citation.document_id })}</strong>
        </p>
        <div className="card__meta">
          {pages && <span className="chip">{pages}</span>}
          <span className="chip chip--accent">{t("chunks.position", { position: citation.position })}</span>
          {window && <span className="chip chip--info">{t("trace.window", { first: window[0], last: window[1] })}</span>}
        </div>
        <blockquote className="citation-detail__text">{sent?.text ?? citation.preview}</blockquote>
        <p className="citation-detail__links">
          {browser && (
            <Link to={browser} className="button">
              {t("citation.openInBrowser")}
            </Link>
          )}
          {source && (
            <a href={source} className="button" target="_blank" rel="noreferrer noopener">
              <ExternalLink aria-hidden="true" size={15} />
              {t("citation.openSource")}
            </a>
          )}
        </p>
      </div>
    </Modal>
  );
}
