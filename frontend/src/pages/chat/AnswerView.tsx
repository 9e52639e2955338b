import { CircleAlert, Copy, ListTree, RotateCw } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { ChatMessage, Citation } from "../../api/chat";
import { formatDuration } from "../../components/TraceView/format";
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
  onShowTrace: () => void;
  onRetry?: () => void;
  onCopy?: () => void;
  onCitation: (citation: Citation) => void;
}

export function AnswerView({ message, selected, disabled, streaming, phase, onShowTrace, onRetry, onCopy, onCitation }: AnswerProps) {
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
        <p className="bubble__status">
          {phase === "lost" ? t("chat.connectionLost") : phase === "starting" ? t("chat.starting") : t("chat.searching")}
          <span className="typing-cursor" aria-hidden="true" />
        </p>
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
                className="citation"
                onClick={() => onCitation(citation)}
                aria-label={t("chat.openCitation", { n, document: citation.document_name ?? citation.document_id })}
                title={citation.preview}
              >
                {n}
              </button>
            );
          }}
        />
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
