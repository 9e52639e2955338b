import { api } from "./client";

/** Where a conversation was started: the chat page, the OpenAI-compatible API or an MCP tool. */
export type ConversationOrigin = "web" | "api" | "mcp";

export interface Conversation {
  id: number;
  title: string;
  origin: ConversationOrigin;
  pipeline: number | null;
  pipeline_name: string | null;
  created_at: string;
  updated_at: string;
}

/** A chunk an answer cites as `[n]`. */
export interface Citation {
  n: number;
  chunk_id: number;
  document_id: number;
  document_name: string | null;
  position: number;
  /** The first and last page the chunk covers (equal for one page); null for a document without pages. */
  page: number | null;
  last_page?: number | null;
  url: string | null;
  preview: string;
  /** False when the passage does not hold the sentence that cites it (the answer check). */
  supported?: boolean;
}

/** Why an answer says the documents do not hold it, and the passages that came closest. */
export interface Declined {
  /** `answer`: the model said the passages do not say; `support`: nothing its draft said was supported. */
  by: "answer" | "support" | string;
  why: string;
  closest: Citation[];
}

/** A chunk given to the model, numbered as the answer cites it. */
export interface SentChunk {
  n: number;
  chunk_id: number;
  document_id: number;
  position: number;
  score: number;
  text: string;
  metadata: { page?: number; window?: [number, number]; [key: string]: unknown };
}

/** One row of a trace node's results. */
export interface ResultRow {
  chunk_id: number;
  document_id: number;
  position: number;
  score: number;
  rank: number;
  /** The positions an expanded chunk covers. */
  window?: [number, number];
  /** Which children (by index) returned a fused chunk, at which rank and score, and what that added to its score. */
  sources?: { child: number; rank: number; score: number; contribution?: number }[];
}

export interface Operation {
  child: number;
  top_k: number;
  /** Whose top_k it is: the model gave it, or the child's own applied (absent in older traces). */
  top_k_from?: "model" | "child";
  /** The text the child searched; null or absent: the user's question. */
  query?: string | null;
  /** The child's name in the question's language, as the planner saw it (absent in older traces). */
  child_name?: string;
}

export interface DroppedOperation {
  child?: unknown;
  top_k?: unknown;
  query?: unknown;
  /** Why, in English (what the model was told). */
  why: string;
  /** Why, as a code the view words in the reader's language. */
  code?: "unknown_child" | "top_k_below_1" | "repeated" | "off_question" | string;
}

export interface Attempt {
  raw: string;
  problems: string[];
}

export interface PlanRecord {
  reason: string | null;
  /** What round 1 consults (absent in older traces). */
  operations?: Operation[];
  attempts: number;
  dropped: DroppedOperation[];
  fallback: string | null;
  /** "rule": the question asks one thing and was searched whole by child 0, with no planning call. */
  decided_by?: "model" | "rule";
  attempt_log?: Attempt[];
}

/** One agentic round (DESIGN §5). */
export interface RoundSummary {
  round: number;
  operations: Operation[];
  added: number[];
  pool_size: number;
  verdict: { sufficient: boolean; reason: string } | null;
  /** What the next round consults, when the verdict goes on. */
  next_operations?: Operation[];
  attempts: number;
  dropped?: DroppedOperation[];
  attempt_log?: Attempt[];
  fallback?: string;
  plan?: PlanRecord;
}

/** One retriever invocation (DESIGN §4). */
export interface TraceNode {
  id: string;
  class: string;
  params: Record<string, unknown>;
  query: string;
  top_k: number | null;
  elapsed_ms: number;
  results: ResultRow[];
  children: TraceNode[];
  rounds: RoundSummary[];
  error: string | null;
  /** What the results' scores measure: bm25, cosine, rrf, weighted, … (absent in older traces). */
  score_scale?: string;
  details?: { plan?: PlanRecord; [key: string]: unknown };
}

/** A strategy step; the fields beyond `step` and `elapsed_ms` depend on the step. */
export interface TraceStep {
  step: string;
  elapsed_ms?: number;
  /** Still running when the answer was stopped; `elapsed_ms` runs until then. */
  interrupted?: boolean;
  [key: string]: unknown;
}

export interface StrategyTrace {
  strategy: string;
  params: Record<string, unknown>;
  steps: TraceStep[];
  llm_calls: number;
  elapsed_ms: number;
  error?: string;
  /** The answer was stopped: the trace holds what ran until then. */
  cancelled?: boolean;
  /** Tokens read and written over every LLM call of the run, as the model servers reported them. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; responses_without_usage: number };
}

export type MessageStatus = "streaming" | "done" | "failed" | "cancelled";

export interface ChatMessage {
  id: number;
  role: "user" | "assistant";
  text: string;
  citations: Citation[];
  status: MessageStatus;
  error: string;
  pipeline: number | null;
  timings: { first_token_ms?: number | null; total_ms?: number | null };
  /** The full trace; empty (`{}`) or null when the answer never got one. */
  trace: StrategyTrace | Record<string, never> | null;
  rounds: (RoundSummary & { node_id: string })[];
  chunks: SentChunk[];
  /** Set when the documents do not hold the answer. */
  declined?: Declined | null;
  /** Sentences the passage they cite does not support. */
  unsupported?: string[];
  created_at: string;
}

export interface AnswerCompleted {
  message_id: number;
  answer: string;
  citations: Citation[];
  declined?: Declined | null;
  unsupported?: string[];
  trace: StrategyTrace;
}

/**
 * What `ws/chat/<id>/` sends (DESIGN §8). The events of a run carry `seq`, numbered from 1 at
 * `run.started`: a socket that opens mid-run gets the events so far again, then the rest live.
 * A refused ask (`message_id: null`) goes to the asking socket only. An agentic retriever also
 * sends its plan before round 1 (`retrieval.plan`) and says when it starts judging its pool
 * (`retrieval.judging`), so a long search reads as work being done.
 */
export type RunEvent =
  | { type: "run.started"; message_id: number; question_message_id: number; pipeline_id: number; question?: string }
  | { type: "retrieval.plan"; node_id: string; class?: string; plan: PlanRecord }
  | { type: "retrieval.node"; node: TraceNode }
  | { type: "retrieval.judging"; node_id: string; class?: string; round: number }
  | { type: "retrieval.round"; node_id: string; round: RoundSummary }
  | { type: "generation.started"; passages: number; tokens?: number | null }
  | { type: "generation.delta"; text: string }
  | ({ type: "answer.completed" } & AnswerCompleted)
  | { type: "run.failed"; error: string; code?: string; message_id?: number | null }
  | { type: "run.cancelled"; message_id: number; answer: string; trace?: StrategyTrace | Record<string, never> };

export type ServerEvent = (RunEvent & { seq?: number }) | { type: "error"; error: string };

/** What `ws/conversations/` sends: the user's conversation list as it changes, in every tab. */
export type ConversationEvent =
  | { type: "conversation.created" | "conversation.updated"; conversation: Conversation }
  | { type: "conversation.deleted"; conversation_id: number };

export function hasTrace(trace: ChatMessage["trace"]): trace is StrategyTrace {
  return !!trace && Array.isArray((trace as StrategyTrace).steps);
}

const CONVERSATIONS_URL = "/api/v1/conversations/";
const conversationUrl = (id: number) => `${CONVERSATIONS_URL}${id}/`;

export const fetchConversations = (signal?: AbortSignal) => api.get<Conversation[]>(CONVERSATIONS_URL, { signal });

export const createConversation = (input: { title?: string; pipeline?: number | null }) =>
  api.post<Conversation>(CONVERSATIONS_URL, input);

export const updateConversation = (id: number, input: { title?: string; pipeline?: number }) =>
  api.patch<Conversation>(conversationUrl(id), input);

export const deleteConversation = (id: number) => api.delete<void>(conversationUrl(id));

export const fetchMessages = (id: number, signal?: AbortSignal) =>
  api.get<ChatMessage[]>(`${conversationUrl(id)}messages/`, { signal });

/** Ask without a websocket: the whole answer at once. */
export const askConversation = (id: number, question: string, pipelineId: number | null) =>
  api.post<AnswerCompleted>(`${conversationUrl(id)}ask/`, { question, pipeline_id: pipelineId });

function socketUrl(path: string): string {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}${path}`;
}

export const chatSocketUrl = (conversationId: number) => socketUrl(`/ws/chat/${conversationId}/`);

export const conversationsSocketUrl = () => socketUrl("/ws/conversations/");
