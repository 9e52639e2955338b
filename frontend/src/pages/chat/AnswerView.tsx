import { CircleAlert, Copy, FileSearch, ListTree, RotateCw, TriangleAlert } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { ChatMessage, Citation } from "../../api/chat";
import { AgenticTimelineView } from "../../components/TraceView/AgenticTimelineView";
import { formatDuration } from "../../components/TraceView/format";
import type { AgenticTimeline } from "../../components/TraceView/model";
import { Markdown } from "./Markdown";

export function QuestionView({ text }: { text: string }) {
  const { t } = useTranslation();
  return (
    <li className="bubble bubble--question" aria-label={t("chat.yourQuestion")}>
      <p className="bubble__text">{text}</p>
    </li>
  );
}

interface AnswerProps {
  message: ChatMessage;
  selected: boolean;
  disabled: boolean;
  /** The answer is being written now. */
  streaming?: boolean;
  phase?: string;
  /** How many passages the model is reading (the run's `generation.started`). */
  passages?: number;
  /** Agentic searches while retrieval runs: shown as they unfold, gone into the trace once the model reads. */
  searches?: AgenticTimeline[];
  onShowTrace: () => void;
  onRetry?: () => void;
  onCopy?: () => void;
  onCitation: (citation: Citation) => void;
}

function waitingStatus(t: ReturnType<typeof useTranslation>["t"], phase: string | undefined, passages: number | undefined, searches: AgenticTimeline[]) {
  if (phase === "lost") return t("chat.connectionLost");
  if (phase === "starting") return t("chat.starting");
  if (phase === "reading" && passages !== undefined) return t("chat.reading", { count: passages });
  return searchStatus(t, searches) ?? t("chat.searching");
}

/** What the agentic search running now is doing, in one line (the one a screen reader hears). */
function searchStatus(t: ReturnType<typeof useTranslation>["t"], searches: AgenticTimeline[]): string | null {
  const search = [...searches].reverse().find((item) => !item.done);
  if (!search) return null;
  const round = search.rounds[search.rounds.length - 1];
  if (!round || round.summary) return search.plan || round ? null : t("chat.agentic.planning");
  return round.judging ? t("chat.agentic.judging", { n: round.round }) : t("chat.agentic.searching", { n: round.round });
}

export function AnswerView({ message, selected, disabled, streaming, phase, passages, searches = [], onShowTrace, onRetry, onCopy, onCitation }: AnswerProps) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  const byNumber = new Map(message.citations.map((citation) => [citation.n, citation]));
  const waiting = streaming && !message.text;
  const { first_token_ms: firstToken, total_ms: total } = message.timings;

  return (
    <li
      className={`bubble bubble--answer${selected ? " is-selected" : ""}${message.status === "failed" ? " bubble--failed" : ""}`}
      aria-label={t("chat.answer")}
      aria-busy={streaming || undefined}
      data-status={streaming ? "streaming" : message.status}
    >
      {waiting ? (
        <>
          <p className="bubble__status" role="status">
            {waitingStatus(t, phase, passages, searches)}
            <span className="typing-cursor" aria-hidden="true" />
          </p>
          {searches.map((search) => <AgenticTimelineView key={search.id} timeline={search} />)}
        </>
      ) : message.declined ? (
        <section className="declined" aria-label={t("chat.notFoundTitle")} data-testid="declined">
          <p className="declined__title">
            <FileSearch aria-hidden="true" size={16} />
            {message.text}
          </p>
          {message.declined.closest.length > 0 && (
            <>
              <p className="declined__lead">{t("chat.closestPassages")}</p>
              <ul className="declined__passages">
                {message.declined.closest.map((passage) => (
                  <li key={passage.chunk_id}>
                    <button type="button" className="declined__source" onClick={() => onCitation(passage)}>
                      {passage.document_name ?? passage.document_id}
                    </button>
                    <span className="declined__preview">{passage.preview}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      ) : (
        <Markdown
          text={message.text}
          trailing={streaming ? <span className="typing-cursor" aria-hidden="true" data-testid="typing-cursor" /> : null}
          renderCitation={(n, key) => {
            const citation = byNumber.get(n);
            if (!citation) return null;
            return (
              <button
                key={key}
                type="button"
                className={`citation${citation.supported === false ? " citation--unsupported" : ""}`}
                onClick={() => onCitation(citation)}
                aria-label={t(citation.supported === false ? "chat.openUnsupportedCitation" : "chat.openCitation",
                  { n, document: citation.document_name ?? citation.document_id })}
                title={citation.supported === false ? t("chat.unsupportedCitation") : citation.preview}
              >
                {n}
              </button>
            );
          }}
        />
      )}
      {!message.declined && (message.unsupported?.length ?? 0) > 0 && (
        <div className="bubble__warning" role="note" data-testid="unsupported">
          <TriangleAlert aria-hidden="true" size={15} />
          <span>
            {t("chat.unsupported", { count: message.unsupported!.length })}
            <ul>
              {message.unsupported!.map((sentence) => <li key={sentence}>{sentence}</li>)}
            </ul>
          </span>
        </div>
      )}
      {phase === "lost" && message.text && <p className="bubble__status">{t("chat.connectionLost")}</p>}
      {message.status === "failed" && (
        <p className="bubble__error" role="note">
          <CircleAlert aria-hidden="true" size={15} />
          {message.error ? t("chat.failedBecause", { error: message.error }) : t("chat.failed")}
        </p>
      )}
      {message.status === "cancelled" && <p className="bubble__status">{t("chat.stopped")}</p>}
      {message.status === "streaming" && !streaming && <p className="bubble__status">{t("chat.stillWriting")}</p>}
      <footer className="bubble__footer">
        {(firstToken || total) && (
          <span className="bubble__timing">
            {t("chat.timings", { first: formatDuration(t, language, firstToken), total: formatDuration(t, language, total) })}
          </span>
        )}
        <span className="bubble__actions">
          <button type="button" className={`button button--small${selected ? " is-active" : ""}`} onClick={onShowTrace} aria-pressed={selected}>
            <ListTree aria-hidden="true" size={14} />
            {t("chat.showTrace")}
          </button>
          {onCopy && (
            <button type="button" className="button button--small" onClick={onCopy} disabled={!message.text}>
              <Copy aria-hidden="true" size={14} />
              {t("chat.copy")}
            </button>
          )}
          {onRetry && (
            <button type="button" className="button button--small" onClick={onRetry} disabled={disabled}>
              <RotateCw aria-hidden="true" size={14} />
              {t("chat.retry")}
            </button>
          )}
        </span>
      </footer>
    </li>
  );
}
