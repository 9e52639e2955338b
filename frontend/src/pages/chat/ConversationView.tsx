import { CircleAlert, Radio, RefreshCw, Send, Square, Unplug } from "lucide-react";
import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";

import {
  askConversation,
  fetchMessages,
  hasTrace,
  type ChatMessage,
  type Citation,
  type Conversation,
  type Declined,
  type RunEvent,
  type ServerEvent,
  type StrategyTrace,
} from "../../api/chat";
import type { PipelineSummary } from "../../api/pipelines";
import { ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import {
  addLiveJudging, addLiveNode, addLivePlan, addLiveRound, chunkFacts, EMPTY_LIVE, liveAgenticTimelines, type LiveRetrieval,
} from "../../components/TraceView/model";
import { LiveTraceView, TraceView } from "../../components/TraceView/TraceView";
import { useLoad } from "../../lib/useLoad";
import { AnswerView, QuestionView } from "./AnswerView";
import { CitationDialog } from "./CitationDialog";
import { PipelinePicker } from "./PipelinePicker";
import { useChatSocket, type SocketState } from "./useChatSocket";

/** The question being answered now, as the socket (or the REST call) reports it. */
export interface Run {
  question: string;
  pipelineId: number | null;
  messageId: number | null;
  questionId: number | null;
  text: string;
  live: LiveRetrieval;
  phase: "starting" | "retrieving" | "reading" | "writing" | "finishing" | "lost";
  /** How many passages the model reads, once it starts reading them. */
  passages?: number;
  trace: StrategyTrace | null;
  citations: Citation[];
  declined?: Declined | null;
  unsupported?: string[];
  via: "socket" | "rest";
  /** The last event applied (`seq`): a socket that reopens gets the run's events again from the start. */
  seq: number;
}

const FINAL = new Set(["answer.completed", "run.cancelled", "run.failed"]);

/**
 * `run` after `event`. Whichever tab asked, every tab follows the conversation's run: a
 * `run.started` this tab did not ask for starts following it (a reload, another tab), and an
 * event already applied (replayed after a reconnect) changes nothing.
 */
export function advanceRun(run: Run | null, event: RunEvent & { seq?: number }): Run | null {
  const seq = event.seq ?? (run ? run.seq + 1 : 0);
  if (event.type === "run.started") {
    if (run && run.messageId === event.message_id) return run;
    const ids = { messageId: event.message_id, questionId: event.question_message_id, pipelineId: event.pipeline_id };
    if (run && run.messageId === null) return { ...run, ...ids, phase: "retrieving", seq };
    return {
      question: event.question ?? "", ...ids, text: "", live: EMPTY_LIVE, phase: "retrieving", trace: null, citations: [],
      via: "socket", seq,
    };
  }
  if (!run || (event.seq !== undefined && event.seq <= run.seq)) return run;
  switch (event.type) {
    case "retrieval.plan":
      return { ...run, seq, live: addLivePlan(run.live, event.node_id, event.plan) };
    case "retrieval.judging":
      return { ...run, seq, live: addLiveJudging(run.live, event.node_id, event.round) };
    case "retrieval.node":
      return { ...run, seq, live: addLiveNode(run.live, event.node) };
    case "retrieval.round":
      return { ...run, seq, live: addLiveRound(run.live, event.node_id, event.round) };
    case "generation.started":
      return { ...run, seq, passages: event.passages, phase: "reading" };
    case "generation.delta":
      return { ...run, seq, text: run.text + event.text, phase: "writing" };
    case "answer.completed":
      return {
        ...run, seq, text: event.answer, trace: event.trace, citations: event.citations, declined: event.declined ?? null,
        unsupported: event.unsupported ?? [], phase: "finishing",
      };
    case "run.cancelled":
      return { ...run, seq, text: event.answer, trace: hasTrace(event.trace ?? null) ? (event.trace as StrategyTrace) : null, phase: "finishing" };
    case "run.failed":
      return { ...run, seq, phase: "finishing" };
  }
}

type Selected = number | "live" | null;

interface OpenCitation {
  citation: Citation;
  message: ChatMessage | null;
}

export function ConversationView({ conversation, pipelines, onSwitchPipeline, onActivity, onReloadPipelines }: {
  conversation: Conversation;
  pipelines: PipelineSummary[];
  /** Save the conversation's pipeline; settles once the server answered (either way). */
  onSwitchPipeline: (pipeline: number) => Promise<void>;
  /** A question was answered: titles and order of the conversations may have changed. */
  onActivity: () => void;
  onReloadPipelines: () => void;
}) {
  const { t } = useTranslation();
  const toast = useToast();
  const { state, update, reload } = useLoad((signal) => fetchMessages(conversation.id, signal), [conversation.id]);
  const [run, setRun] = useState<Run | null>(null);
  const [draft, setDraft] = useState("");
  const [selected, setSelected] = useState<Selected>(null);
  const [citation, setCitation] = useState<OpenCitation | null>(null);
  const thread = useRef<HTMLOListElement>(null);
  const activity = useRef(onActivity);
  activity.current = onActivity;
  /** The question this tab asked and the server has not started yet. */
  const asked = useRef<string | null>(null);
  /** A question asked while the socket was still connecting, not sent yet: Stop withdraws it. */
  const unsent = useRef<string | null>(null);

  /** The pipeline just picked, until the server has saved it (or refused): a question asked
   * meanwhile goes to this one, not to the one the conversation had. */
  const [choosing, setChoosing] = useState<number | null>(null);
  useEffect(() => setChoosing(null), [conversation.id]);
  const pipelineId = choosing ?? conversation.pipeline;
  const pipeline = pipelines.find((item) => item.id === pipelineId) ?? null;
  const choosePipeline = (id: number) => {
    setChoosing(id);
    void onSwitchPipeline(id).finally(() => setChoosing((current) => (current === id ? null : current)));
  };
  const messages = state.status === "ready" ? state.data : [];

  /**
   * Read the stored conversation; the run that ended (`ended`), or after a reconnect any run
   * whose answer is no longer being written, gives way to its stored answer.
   */
  const settle = useCallback(async (ended: number | null) => {
    let fresh: ChatMessage[];
    try {
      fresh = await fetchMessages(conversation.id);
      update(() => fresh);
    } catch {
      reload();
      return;
    }
    const over = (current: Run) =>
      ended !== null ? current.messageId === ended : fresh.some((item) => item.id === current.messageId && item.status !== "streaming");
    setRun((current) => (current && over(current) ? null : current));
    if (ended !== null) {
      setSelected(null);
      activity.current();
    }
  }, [conversation.id, update, reload]);

  const onEvent = useCallback(
    (event: ServerEvent) => {
      if (event.type === "error") {
        toast.error(t("chat.serverError"), event.error);
        return;
      }
      if (event.type === "run.failed" && !event.message_id) {
        // Refused before it started (only the asking tab hears of it): a run another tab started goes on.
        toast.error(t("chat.askFailed"), event.error);
        setRun((current) => (current && current.messageId === null ? null : current));
        // The refused question goes back into the composer, to be shortened or asked later.
        const question = asked.current;
        asked.current = null;
        if (question) setDraft((draft) => draft || question);
        return;
      }
      if (event.type === "run.started") asked.current = null;
      setRun((current) => advanceRun(current, event));
      if (FINAL.has(event.type)) void settle((event as { message_id: number }).message_id);
    },
    [settle, t, toast],
  );

  const socket = useChatSocket(conversation.id, {
    onEvent,
    onReconnected: () => {
      // The server replays the run still being written; one that ended meanwhile is stored.
      setRun((current) => (current && current.phase === "lost" ? { ...current, phase: current.text ? "writing" : "retrieving" } : current));
      void settle(null);
    },
    onDropped: () => setRun((current) => (current && current.via === "socket" ? { ...current, phase: "lost" } : current)),
  });

  useEffect(() => {
    thread.current?.lastElementChild?.scrollIntoView?.({ block: "nearest" });
  }, [messages.length, run?.text, run?.phase]);

  const canAsk = !!pipeline && pipeline.ready && !run && socket.state !== "forbidden";

  const ask = async (question: string, pipelineId: number | null) => {
    const text = question.trim();
    if (!text || run) return;
    const fresh: Run = {
      question: text, pipelineId, messageId: null, questionId: null, text: "", live: EMPTY_LIVE, phase: "starting",
      trace: null, citations: [], via: "socket", seq: 0,
    };
    setSelected("live");
    asked.current = text;
    setRun(fresh);
    unsent.current = text;
    const open = await socket.opened();
    if (unsent.current !== text) return; // withdrawn meanwhile
    unsent.current = null;
    if (open && socket.send({ type: "ask", question: text, pipeline_id: pipelineId })) return;
    // No live connection: ask over REST and show the whole answer when it comes.
    asked.current = null;
    setRun({ ...fresh, via: "rest", phase: "retrieving" });
    let answered: number | null = null;
    try {
      answered = (await askConversation(conversation.id, text, pipelineId)).message_id;
    } catch (error) {
      toast.error(t("chat.askFailed"), error);
      // As when the socket refuses it: the question goes back into the composer.
      setDraft((draft) => draft || text);
    }
    await settle(answered);
    setRun((current) => (current && current.via === "rest" ? null : current));
  };

  const stop = () => {
    const withdrawn = unsent.current;
    if (withdrawn === null) {
      socket.send({ type: "cancel" });
      return;
    }
    unsent.current = null;
    asked.current = null;
    setRun(null);
    setDraft((draft) => draft || withdrawn);
  };

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (!canAsk || !draft.trim()) return;
    const question = draft;
    setDraft("");
    void ask(question, pipeline?.id ?? null);
  };

  const onComposerKey = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit();
    }
  };

  const retry = (message: ChatMessage) => {
    const index = messages.findIndex((item) => item.id === message.id);
    const question = [...messages.slice(0, index)].reverse().find((item) => item.role === "user");
    if (!question) return;
    const known = pipelines.some((item) => item.id === message.pipeline);
    void ask(question.text, known ? message.pipeline : pipeline?.id ?? null);
  };

  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      toast.success(t("chat.copied"));
    } catch (error) {
      toast.error(t("chat.copyFailed"), error);
    }
  };

  const shown = messages.filter((message) => !run || (message.id !== run.messageId && message.id !== run.questionId));
  const answers = shown.filter((message) => message.role === "assistant");
  const current: Selected = run ? (selected ?? "live") : selected !== null && selected !== "live" && answers.some((item) => item.id === selected) ? selected : answers[answers.length - 1]?.id ?? null;
  const selectedMessage = typeof current === "number" ? answers.find((item) => item.id === current) ?? null : null;
  const questionOf = (message: ChatMessage) => {
    const index = messages.findIndex((item) => item.id === message.id);
    return [...messages.slice(0, index)].reverse().find((item) => item.role === "user")?.text ?? "";
  };

  return (
    <div className="chat">
      <div className="chat__main">
        <header className="chat__header">
          <h2 className="chat__title">{conversation.title || t("chat.untitled")}</h2>
          <ConnectionChip state={socket.state} />
        </header>
        <PipelinePicker pipelines={pipelines} value={pipelineId} disabled={!!run} onChange={choosePipeline} onRecheck={onReloadPipelines} />

        {state.status === "loading" && <Loading label={t("chat.loadingMessages")} />}
        {state.status === "error" && <ErrorNotice title={t("chat.messagesFailed")} message={state.message} onRetry={reload} />}
        {socket.state === "forbidden" && <ErrorNotice title={t("chat.forbidden")} message={t("chat.forbiddenHint")} />}

        <ol className="thread" ref={thread} aria-label={t("chat.messages")} aria-live="polite">
          {shown.map((message) =>
            message.role === "user" ? (
              <QuestionView key={message.id} text={message.text} />
            ) : (
              <AnswerView
                key={message.id}
                message={message}
                selected={current === message.id}
                disabled={!canAsk}
                onShowTrace={() => setSelected(message.id)}
                onRetry={() => retry(message)}
                onCopy={() => void copy(message.text)}
                onCitation={(item) => setCitation({ citation: item, message })}
              />
            ),
          )}
          {run && (
            <>
              <QuestionView text={run.question} />
              <AnswerView
                message={{
                  id: -1, role: "assistant", text: run.text, citations: run.citations, status: run.phase === "finishing" ? "done" : "streaming", error: "",
                  pipeline: run.pipelineId, timings: {}, trace: run.trace, rounds: [], chunks: [], created_at: "",
                  declined: run.declined ?? null, unsupported: run.unsupported ?? [],
                }}
                passages={run.passages}
                searches={run.phase === "retrieving" ? liveAgenticTimelines(run.live) : []}
                streaming={run.phase !== "finishing"}
                phase={run.phase}
                selected={current === "live"}
                disabled
                onShowTrace={() => setSelected("live")}
                onCitation={(item) => setCitation({ citation: item, message: null })}
              />
            </>
          )}
        </ol>

        <form className="composer" onSubmit={submit}>
          <label className="visually-hidden" htmlFor="chat-question">
            {t("chat.question")}
          </label>
          <textarea
            id="chat-question"
            className="input composer__input"
            rows={2}
            value={draft}
            placeholder={pipeline && !pipeline.ready ? t("chat.notReadyPlaceholder") : t("chat.placeholder")}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onComposerKey}
            disabled={!pipeline || !pipeline.ready || socket.state === "forbidden"}
          />
          {run && run.via === "socket" && run.phase !== "finishing" && run.phase !== "lost" ? (
            <button type="button" className="button button--danger-outline" onClick={stop}>
              <Square aria-hidden="true" size={15} />
              {t("chat.stop")}
            </button>
          ) : (
            <button type="submit" className="button button--primary" disabled={!canAsk || !draft.trim()}>
              <Send aria-hidden="true" size={15} />
              {t("chat.ask")}
            </button>
          )}
        </form>
      </div>

      <aside className="trace-panel" aria-label={t("trace.title")}>
        <header className="trace-panel__header">
          <h2 className="trace-panel__title">{t("trace.title")}</h2>
          {(selectedMessage || (current === "live" && run)) && (
            <p className="trace-panel__question" title={selectedMessage ? questionOf(selectedMessage) : run?.question}>
              {selectedMessage ? questionOf(selectedMessage) : run?.question}
            </p>
          )}
        </header>
        <TracePanelBody run={current === "live" ? run : null} message={selectedMessage} />
      </aside>

      {citation && (
        <CitationDialog
          citation={citation.citation}
          message={citation.message}
          knowledgeBaseId={pipelines.find((item) => item.id === (citation.message?.pipeline ?? run?.pipelineId ?? conversation.pipeline))?.knowledge_base ?? null}
          onClose={() => setCitation(null)}
        />
      )}
    </div>
  );
}

function TracePanelBody({ run, message }: { run: Run | null; message: ChatMessage | null }) {
  const { t } = useTranslation();
  if (run) {
    if (run.trace) return <TraceView trace={run.trace} facts={chunkFacts(run.trace, [], run.citations)} />;
    if (run.via === "rest") return <p className="muted">{t("trace.restPending")}</p>;
    return <LiveTraceView live={run.live} facts={chunkFacts(null, [], [], run.live.nodes)} writing={run.phase === "writing"} />;
  }
  if (!message) return <p className="muted">{t("trace.none")}</p>;
  if (!hasTrace(message.trace)) return <p className="muted">{t("trace.notRecorded")}</p>;
  return <TraceView trace={message.trace} facts={chunkFacts(message.trace, message.chunks, message.citations)} />;
}

function ConnectionChip({ state }: { state: SocketState }) {
  const { t } = useTranslation();
  if (state === "live") {
    return (
      <span className="chip chip--accent" title={t("chat.liveHint")}>
        <Radio aria-hidden="true" size={13} />
        {t("chat.live")}
      </span>
    );
  }
  if (state === "reconnecting") {
    return (
      <span className="chip chip--warning" role="status">
        <RefreshCw aria-hidden="true" size={13} className="spin" />
        {t("chat.reconnecting")}
      </span>
    );
  }
  if (state === "offline") {
    return (
      <span className="chip" title={t("chat.offlineHint")}>
        <Unplug aria-hidden="true" size={13} />
        {t("chat.offline")}
      </span>
    );
  }
  if (state === "forbidden") {
    return (
      <span className="chip chip--danger">
        <CircleAlert aria-hidden="true" size={13} />
        {t("chat.forbidden")}
      </span>
    );
  }
  return null;
}
