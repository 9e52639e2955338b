import { useTranslation } from "react-i18next";

import { clip } from "./format";
import type { ChunkFacts } from "./model";

/** A chunk in the trace: its text when the model was given it, else where it is; and its fate. */
export function ChunkLabel({ id, documentId, position, facts, length = 180 }: {
  id: number;
  documentId?: number;
  position?: number;
  facts: ChunkFacts;
  length?: number;
}) {
  const { t } = useTranslation();
  const sent = facts.sent.get(id);
  const documentName = documentId !== undefined ? facts.documentNames.get(documentId) : undefined;
  return (
    <span className="trace-chunk" data-chunk-id={id}>
      {sent && (
        <span className="chip chip--accent trace-chunk__n" title={t("trace.sentHint")}>
          [{sent.n}]
        </span>
      )}
      {facts.dropped.has(id) && (
        <span className="chip chip--warning" title={t("trace.droppedHint")}>
          {t("trace.droppedByBudget")}
        </span>
      )}
      {facts.truncated === id && <span className="chip chip--warning">{t("trace.truncated")}</span>}
      {sent ? (
        <span className="trace-chunk__text" title={sent.text}>
          {clip(sent.text, length)}
        </span>
      ) : (
        <span className="trace-chunk__ref">
          {documentId !== undefined && position !== undefined
            ? t("trace.chunkRef", { id, document: documentName ?? documentId, position })
            : t("trace.chunkId", { id })}
        </span>
      )}
    </span>
  );
}
