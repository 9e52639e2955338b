import { CircleAlert, FlaskConical, LoaderCircle, Search } from "lucide-react";
import { useEffect, useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

import type { ComponentRef } from "../../api/components";
import { consentNeeded, tryRetriever, type LanguageModelNode, type PlaygroundResult } from "../../api/playground";
import { useComponentName } from "../../catalog/CatalogProvider";
import { formatScore } from "../TraceView/format";
import { HitExplanation } from "./HitExplanation";

type Run =
  | { state: "idle" }
  | { state: "running" }
  | { state: "done"; result: PlaygroundResult; tried: string }
  | { state: "consent"; models: LanguageModelNode[] }
  | { state: "failed"; message: string };

interface PlaygroundProps {
  knowledgeBaseId: number;
  /** The tree to try; the knowledge base's default preset when absent. */
  retriever?: ComponentRef;
  /** Shown above the form: what is being tried. */
  title?: string;
}

/**
 * Ask one question of one retriever tree and see what it returns: rank, document, text, the
 * score on its named scale, and why each hit ranks where it does. A tree that calls a language
 * model asks before it runs.
 */
export function Playground({ knowledgeBaseId, retriever, title }: PlaygroundProps) {
  const { t, i18n } = useTranslation();
  const language = i18n.resolvedLanguage ?? "en";
  const name = useComponentName();
  const inputId = useId();
  const [question, setQuestion] = useState("");
  const [run, setRun] = useState<Run>({ state: "idle" });
  const running = useRef<AbortController | null>(null);
  const current = JSON.stringify(retriever ?? null);
  useEffect(() => () => running.current?.abort(), []);

  const start = async (allowLanguageModels: boolean) => {
    if (!question.trim()) return;
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    setRun({ state: "running" });
    try {
      const result = await tryRetriever(
        knowledgeBaseId,
        { question: question.trim(), ...(retriever ? { retriever } : {}), allow_llm: allowLanguageModels },
        controller.signal,
      );
      setRun({ state: "done", result, tried: current });
    } catch (error) {
      if (controller.signal.aborted) return;
      const models = consentNeeded(error);
      setRun(models ? { state: "consent", models } : { state: "failed", message: (error as Error).message });
    }
  };

  const scale = (key: string | null | undefined) => (key ? t(`trace.scale.${key}`) : t("playground.score"));

  return (
    <div className="playground">
      <form
        className="playground__form"
        onSubmit={(event) => {
          event.preventDefault();
          void start(false);
        }}
      >
        <label htmlFor={inputId} className="field__label">
          {title ?? t("playground.question")}
        </label>
        <div className="playground__row">
          <input id={inputId} className="input" value={question} placeholder={t("playground.placeholder")}
            onChange={(event) => setQuestion(event.target.value)} maxLength={2000} />
          <button type="submit" className="button button--primary" disabled={!question.trim() || run.state === "running"}>
            {run.state === "running" ? <LoaderCircle aria-hidden="true" size={16} className="spin" /> : <Search aria-hidden="true" size={16} />}
            {t("playground.run")}
          </button>
        </div>
      </form>

      {run.state === "consent" && (
        <div role="alertdialog" aria-label={t("playground.consentTitle")} className="notice notice--warning">
          <FlaskConical aria-hidden="true" className="notice__icon" size={18} />
          <div>
            <p className="notice__title">{t("playground.consentTitle")}</p>
            <p className="notice__detail">
              {t("playground.consentMessage", { models: [...new Set(run.models.map((model) => name(model.component)))].join(", ") })}
            </p>
            <div className="playground__row">
              <button type="button" className="button button--primary" onClick={() => void start(true)}>
                {t("playground.runAnyway")}
              </button>
              <button type="button" className="button" onClick={() => setRun({ state: "idle" })}>
                {t("common.cancel")}
              </button>
            </div>
          </div>
        </div>
      )}

      {run.state === "failed" && (
        <p role="alert" className="form-error playground__error">
          <CircleAlert aria-hidden="true" size={15} />
          {run.message}
        </p>
      )}

      {run.state === "done" && (
        <div className="playground__answer">
          <p className="muted" data-testid="playground-summary">
            {t("playground.summary", {
              count: run.result.results.length,
              ms: new Intl.NumberFormat(language, { maximumFractionDigits: 0 }).format(run.result.elapsed_ms),
              scale: scale(run.result.score_scale),
            })}
            {run.tried !== current && <span className="chip chip--warning playground__stale">{t("playground.stale")}</span>}
          </p>
          {run.result.results.length === 0 ? (
            <p className="muted">{t("playground.noResults")}</p>
          ) : (
            <ol className="playground__results">
              {run.result.results.map((hit) => (
                <li key={`${hit.chunk_id}-${hit.rank}`} className="playground-hit">
                  <header className="playground-hit__header">
                    <span className="trace-result__rank">#{hit.rank}</span>
                    <span className="playground-hit__where">
                      {hit.document_name}
                      <span className="muted">
                        {" · "}
                        {hit.page !== null ? t("playground.positionPage", { position: hit.position, page: hit.page }) : t("playground.position", { position: hit.position })}
                      </span>
                    </span>
                    <span className="chip" data-testid="hit-score">
                      {scale(run.result.score_scale)} {formatScore(language, hit.score)}
                    </span>
                  </header>
                  <p className="playground-hit__text">{hit.text}</p>
                  <HitExplanation hit={hit} language={language} scale={scale} />
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </div>
  );
}
