import { ArrowLeft, Columns2, LoaderCircle } from "lucide-react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";

import { askConversation, createConversation, fetchMessages, hasTrace, type ChatMessage, type Citation } from "../../api/chat";
import { fetchPipelines, type PipelineSummary } from "../../api/pipelines";
import { ErrorNotice, Loading } from "../../components/StatusViews";
import { chunkFacts } from "../../components/TraceView/model";
import { TraceView } from "../../components/TraceView/TraceView";
import { useLoad } from "../../lib/useLoad";
import { Link } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { CitationDialog } from "./CitationDialog";
import { Markdown } from "./Markdown";

type Side =
  | { status: "idle" }
  | { status: "asking" }
  | { status: "failed"; error: string }
  | { status: "done"; message: ChatMessage; conversationId: number };

/**
 * The same question through two pipelines, side by side: each asks in a conversation of its own
 * (kept, so either can be continued in the chat), and shows its answer and its trace.
 */
export function ComparePage() {
  const { t, i18n } = useTranslation();
  useDocumentTitle(t("compare.title"));
  const { state, reload } = useLoad((signal) => fetchPipelines(signal), [i18n.resolvedLanguage]);
  const [chosen, setChosen] = useState<[number | null, number | null]>([null, null]);
  const [question, setQuestion] = useState("");
  const [sides, setSides] = useState<[Side, Side]>([{ status: "idle" }, { status: "idle" }]);
  const [citation, setCitation] = useState<{ citation: Citation; message: ChatMessage; knowledgeBase: number } | null>(null);

  if (state.status === "loading") return <Loading label={t("compare.loading")} />;
  if (state.status === "error") return <ErrorNotice title={t("compare.loadFailed")} message={state.message} onRetry={reload} />;
  const pipelines = state.data;
  const ready = pipelines.filter((pipeline) => pipeline.ready);
  const picks: [number | null, number | null] = [chosen[0] ?? ready[0]?.id ?? null, chosen[1] ?? ready[1]?.id ?? ready[0]?.id ?? null];
  const busy = sides.some((side) => side.status === "asking");

  const askOne = async (pipeline: PipelineSummary, text: string): Promise<Side> => {
    try {
      const conversation = await createConversation({ title: `${text.slice(0, 60)} · ${pipeline.name}`, pipeline: pipeline.id });
      await askConversation(conversation.id, text, pipeline.id).catch(() => undefined);
      const messages = await fetchMessages(conversation.id);
      const answer = [...messages].reverse().find((message) => message.role === "assistant");
      if (!answer) return { status: "failed", error: t("compare.noAnswer") };
      return { status: "done", message: answer, conversationId: conversation.id };
    } catch (error) {
      return { status: "failed", error: (error as Error).message };
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = question.trim();
    const both = picks.map((id) => pipelines.find((pipeline) => pipeline.id === id));
    if (!text || busy || !both[0] || !both[1]) return;
    setSides([{ status: "asking" }, { status: "asking" }]);
    ([0, 1] as const).forEach((index) => {
      void askOne(both[index]!, text).then((side) =>
        setSides((current) => (index === 0 ? [side, current[1]] : [current[0], side])),
      );
    });
  };

  return (
    <section className="page compare">
      <Link to="/chat" className="back-link">
        <ArrowLeft aria-hidden="true" size={16} />
        {t("compare.back")}
      </Link>
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("compare.title")}</h1>
          <p className="page__subtitle">{t("compare.subtitle")}</p>
        </div>
      </header>
      <form className="compare__form" onSubmit={submit}>
        {([0, 1] as const).map((index) => (
          <label key={index} className="field">
            <span className="field__label">{t("compare.pipeline", { n: index + 1 })}</span>
            <select
              className="input"
              value={picks[index] ?? ""}
              onChange={(event) => setChosen((current) => (index === 0 ? [Number(event.target.value), current[1]] : [current[0], Number(event.target.value)]))}
            >
              {pipelines.map((pipeline) => (
                <option key={pipeline.id} value={pipeline.id} disabled={!pipeline.ready}>
                  {pipeline.ready
                    ? t("chat.pipelineOption", { name: pipeline.name, base: pipeline.knowledge_base_name })
                    : t("chat.pipelineOptionWaiting", { name: pipeline.name, base: pipeline.knowledge_base_name })}
                </option>
              ))}
            </select>
          </label>
        ))}
        <label className="field compare__question">
          <span className="field__label">{t("chat.question")}</span>
          <input className="input" value={question} onChange={(event) => setQuestion(event.target.value)} />
        </label>
        <button type="submit" className="button button--primary" disabled={busy || !question.trim() || picks.includes(null)}>
          <Columns2 aria-hidden="true" size={16} />
          {t("compare.run")}
        </button>
      </form>
      <div className="compare__sides">
        {([0, 1] as const).map((index) => {
          const side = sides[index];
          const pipeline = pipelines.find((item) => item.id === picks[index]);
          return (
            <section key={index} className="compare__side" aria-label={t("compare.side", { n: index + 1, name: pipeline?.name ?? "" })}>
              <h2 className="compare__side-title">{pipeline?.name}</h2>
              {side.status === "asking" && (
                <p className="status-line">
                  <LoaderCircle aria-hidden="true" className="spin" size={16} />
                  {t("compare.asking")}
                </p>
              )}
              {side.status === "failed" && <ErrorNotice title={t("chat.askFailed")} message={side.error} />}
              {side.status === "done" && (
                <>
                  <div className="bubble bubble--answer">
                    <Markdown
                      text={side.message.text}
                      renderCitation={(n, key) => {
                        const cited = side.message.citations.find((item) => item.n === n);
                        if (!cited || !pipeline) return null;
                        return (
                          <button key={key} type="button" className="citation" onClick={() => setCitation({ citation: cited, message: side.message, knowledgeBase: pipeline.knowledge_base })} aria-label={t("chat.openCitation", { n, document: cited.document_name ?? cited.document_id })}>
                            {n}
                          </button>
                        );
                      }}
                    />
                    {side.message.status === "failed" && <p className="bubble__error">{t("chat.failedBecause", { error: side.message.error })}</p>}
                    <footer className="bubble__footer">
                      <Link to={`/chat/${side.conversationId}`}>{t("compare.continue")}</Link>
                    </footer>
                  </div>
                  {hasTrace(side.message.trace) && (
                    <div className="trace-panel compare__trace">
                      <TraceView trace={side.message.trace} facts={chunkFacts(side.message.trace, side.message.chunks, side.message.citations)} />
                    </div>
                  )}
                </>
              )}
            </section>
          );
        })}
      </div>
      {citation && (
        <CitationDialog citation={citation.citation} message={citation.message} knowledgeBaseId={citation.knowledgeBase} onClose={() => setCitation(null)} />
      )}
    </section>
  );
}
