import { ChevronLeft, ChevronRight } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchChunks, type KnowledgeDocument } from "../../api/knowledge";
import { Modal } from "../../components/Modal";
import { ErrorNotice, Loading } from "../../components/StatusViews";
import { chunkPagesLabel } from "../../lib/pages";
import { useLoad } from "../../lib/useLoad";

const PAGE_SIZE = 20;

/**
 * A document's chunks in order, a page at a time: position, page, heading and text. `position`
 * opens the page holding that chunk and marks it.
 */
export function ChunkBrowser({ knowledgeBaseId, document, position, onClose }: {
  knowledgeBaseId: number;
  document: KnowledgeDocument;
  position?: number;
  onClose: () => void;
}) {
  const { t, i18n } = useTranslation();
  const [offset, setOffset] = useState(position !== undefined ? Math.floor(position / PAGE_SIZE) * PAGE_SIZE : 0);
  const marked = useRef<HTMLLIElement>(null);
  const { state, reload } = useLoad(
    (signal) => fetchChunks(knowledgeBaseId, document.id, { limit: PAGE_SIZE, offset }, signal),
    [knowledgeBaseId, document.id, offset],
  );
  const count = state.status === "ready" ? state.data.count : 0;
  useEffect(() => {
    if (state.status === "ready") marked.current?.scrollIntoView?.({ block: "center" });
  }, [state.status]);

  return (
    <Modal
      title={t("chunks.title", { name: document.name })}
      onClose={onClose}
      size="large"
      footer={
        <nav className="pager" aria-label={t("chunks.pagination")}>
          <button type="button" className="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
            <ChevronLeft aria-hidden="true" size={16} />
            {t("chunks.previous")}
          </button>
          <span className="pager__status" aria-live="polite">
            {count > 0 && t("chunks.range", { from: offset + 1, to: Math.min(offset + PAGE_SIZE, count), count })}
          </span>
          <button type="button" className="button" disabled={offset + PAGE_SIZE >= count} onClick={() => setOffset(offset + PAGE_SIZE)}>
            {t("chunks.next")}
            <ChevronRight aria-hidden="true" size={16} />
          </button>
        </nav>
      }
    >
      {state.status === "loading" && <Loading label={t("chunks.loading")} />}
      {state.status === "error" && <ErrorNotice title={t("chunks.loadFailed")} message={state.message} onRetry={reload} />}
      {state.status === "ready" && state.data.results.length === 0 && <p className="muted">{t("chunks.empty")}</p>}
      {state.status === "ready" && (
        <ol className="chunk-list">
          {state.data.results.map((chunk) => {
            const page = chunkPagesLabel(chunk.metadata, i18n.resolvedLanguage);
            return (
              <li
                key={chunk.id}
                ref={chunk.position === position ? marked : undefined}
                className={`chunk${chunk.position === position ? " chunk--marked" : ""}`}
                aria-current={chunk.position === position ? "true" : undefined}
              >
                <div className="chunk__meta">
                  <span className="chip chip--accent">{t("chunks.position", { position: chunk.position })}</span>
                  {page && <span className="chip">{page}</span>}
                  {chunk.metadata.heading && <span className="chunk__heading">{chunk.metadata.heading}</span>}
                </div>
                <p className="chunk__text">{chunk.text}</p>
              </li>
            );
          })}
        </ol>
      )}
    </Modal>
  );
}
