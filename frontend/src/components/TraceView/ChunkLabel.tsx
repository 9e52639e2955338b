import { useTranslation } from "react-i18next";

import { clip } from "./format";
import type { ChunkFacts } from "./model";

/**
 * A chunk in the trace: its text (as the model was given it, else the start the trace carries),
 * then which document and position it is; and its fate.
 */
export function ChunkLabel({ id, documentId, position, facts, length = 180 }: {
  id: number;
  documentId?: number;
  position?: number;
  facts: ChunkFacts;
  length?: number;
}) {
  const { t } = useTranslation();
  const sent = facts.sent.get(id);
  const known = facts.known.get(id);
  const document = documentId ?? known?.document_id;
  const at = position ?? known?.position;
  const documentName = document !== undefined ? (facts.documentNames.get(document) ?? known?.document_name) : undefined;
  const text = sent?.text ?? known?.preview;
  const source =
    document !== undefined && at !== undefined ? t("trace.chunkSource", { document: documentName ?? document, position: at }) : null;
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
      {text ? (
        <>
          <span className="trace-chunk__text" title={text}>
            {clip(text, length)}
          </span>{" "}
          {source && <span className="trace-chunk__ref">{source}</span>}
        </>
      ) : (
        <span className="trace-chunk__ref">{source ? t("trace.chunkRef", { id, source }) : t("trace.chunkId", { id })}</span>
      )}
    </span>
  );
}
