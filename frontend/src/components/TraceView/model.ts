import type { Citation, RoundSummary, SentChunk, StrategyTrace, TraceNode, TraceStep } from "../../api/chat";

/** Where a chunk is and how it starts, as the trace's result rows tell it. */
export interface KnownChunk {
  document_id: number;
  position: number;
  document_name?: string;
  preview?: string;
}

/** What the trace view knows about a chunk: its text (when it was sent to the model), where it is, and its fate. */
export interface ChunkFacts {
  /** Chunks given to the model, by id. */
  sent: ReadonlyMap<number, SentChunk>;
  /** Every chunk a result row or a citation told about, by id: document, position, preview. */
  known: ReadonlyMap<number, KnownChunk>;
  /** Chunks the token budget left out. */
  dropped: ReadonlySet<number>;
  /** A chunk cut to fit the budget. */
  truncated: number | null;
  /** Document names the citations told. */
  documentNames: ReadonlyMap<number, string>;
}

interface Budget {
  max_input_tokens: number;
  used_tokens: number;
  sent: number[];
  dropped: number[];
  truncated: number | null;
  /** Earlier question–answer pairs the model was given (older traces lack it). */
  history_turns?: number;
  /** Retrieved chunks left out because another passage already held their text. */
  duplicates?: { chunk_id: number; of: number | null }[];
  /** Chunks shortened: their overlap with a neighbour removed, or cut to fit the budget. */
  trimmed?: { chunk_id: number; reason: "overlap" | "budget"; characters: number; of: number }[];
  /** Which limit set the passages' room: max_input_tokens, context_tokens or reading_tokens. */
  limited_by?: string;
  /** New prompt tokens sent (passages, question, conversation). */
  new_tokens?: number;
  /** What the model bounds: its reading budget (new prompt tokens). */
  model_limits?: { reading_tokens?: number };
  /** Whether the reading budget is the model's fixed default or its own setting. */
  reading_tokens_set_by?: "model default" | "model" | null;
}

export function isBudget(value: unknown): value is Budget {
  return typeof value === "object" && value !== null && Array.isArray((value as Budget).dropped);
}

/** Every step of the trace, those of a routed strategy's branch included. */
export function allSteps(trace: StrategyTrace): TraceStep[] {
  return trace.steps.flatMap((step) => {
    const nested = step.trace as StrategyTrace | undefined;
    return nested && Array.isArray(nested.steps) ? [step, ...allSteps(nested)] : [step];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Every result row anywhere below `value` (trace nodes nest in steps, children and branches). */
function collectRows(value: unknown, into: Map<number, KnownChunk>): void {
  if (Array.isArray(value)) {
    value.forEach((item) => collectRows(item, into));
    return;
  }
  if (!isRecord(value)) return;
  const { chunk_id: id, document_id: documentId, position } = value;
  if (typeof id === "number" && typeof documentId === "number" && typeof position === "number") {
    const known = into.get(id) ?? { document_id: documentId, position };
    if (typeof value.document_name === "string") known.document_name = value.document_name;
    if (typeof value.preview === "string" && value.preview) known.preview = value.preview;
    into.set(id, known);
  }
  Object.values(value).forEach((item) => collectRows(item, into));
}

/**
 * What the view knows about the chunks of an answer: the trace's rows (or, while it runs, the
 * live nodes'), the chunks sent to the model and the citations.
 */
export function chunkFacts(
  trace: StrategyTrace | null,
  chunks: readonly SentChunk[],
  citations: readonly Citation[] = [],
  live: readonly TraceNode[] = [],
): ChunkFacts {
  const dropped = new Set<number>();
  let truncated: number | null = null;
  for (const step of trace ? allSteps(trace) : []) {
    if (step.step === "generate" && isBudget(step.budget)) {
      step.budget.dropped.forEach((id) => dropped.add(id));
      truncated = step.budget.truncated ?? truncated;
    }
  }
  const known = new Map<number, KnownChunk>();
  collectRows(trace, known);
  collectRows(live, known);
  const documentNames = new Map<number, string>();
  for (const chunk of known.values()) if (chunk.document_name) documentNames.set(chunk.document_id, chunk.document_name);
  for (const citation of citations) if (citation.document_name) documentNames.set(citation.document_id, citation.document_name);
  for (const chunk of chunks) if (!known.has(chunk.chunk_id)) known.set(chunk.chunk_id, { document_id: chunk.document_id, position: chunk.position });
  return { sent: new Map(chunks.map((chunk) => [chunk.chunk_id, chunk])), known, dropped, truncated, documentNames };
}

export function isAgentic(node: TraceNode): boolean {
  return node.rounds.length > 0 || node.class === "AgenticEnsembleRetriever";
}

/** The component name of each child a composite node was configured with, by catalog index. */
export function childComponents(node: TraceNode): string[] {
  const children = node.params.children;
  if (!Array.isArray(children)) return [];
  return children.map((child) => (typeof child === "object" && child && "component" in child ? String(child.component) : "?"));
}

/**
 * The nodes each round consulted: an agentic node appends one child node per operation, round
 * after round, so round r owns the slice after the earlier rounds' operations.
 */
export function roundChildren(node: TraceNode, rounds: readonly RoundSummary[] = node.rounds): TraceNode[][] {
  let offset = 0;
  return rounds.map((round) => {
    const slice = node.children.slice(offset, offset + round.operations.length);
    offset += round.operations.length;
    return slice;
  });
}

function nodeNumber(id: string): number {
  const match = /(\d+)$/.exec(id);
  return match ? Number(match[1]) : 0;
}

function descendants(node: TraceNode, into: Set<string>): void {
  for (const child of node.children) {
    into.add(child.id);
    descendants(child, into);
  }
}

/** A run's retrieval as the websocket has told it so far. */
export interface LiveRetrieval {
  nodes: TraceNode[];
  rounds: Record<string, RoundSummary[]>;
}

export const EMPTY_LIVE: LiveRetrieval = { nodes: [], rounds: {} };

export function addLiveNode(live: LiveRetrieval, node: TraceNode): LiveRetrieval {
  return { ...live, nodes: [...live.nodes.filter((known) => known.id !== node.id), node] };
}

export function addLiveRound(live: LiveRetrieval, nodeId: string, round: RoundSummary): LiveRetrieval {
  const known = live.rounds[nodeId] ?? [];
  return { ...live, rounds: { ...live.rounds, [nodeId]: [...known.filter((item) => item.round !== round.round), round] } };
}

/** An agentic node still running: its rounds so far. */
export interface RunningAgentic {
  id: string;
  rounds: RoundSummary[];
}

/**
 * What to draw while retrieval runs: completed nodes not yet inside a completed parent (nodes
 * complete children first, so a parent arriving takes its children with it), and agentic nodes
 * whose rounds have arrived but not the node itself. In start order.
 */
export function liveRoots(live: LiveRetrieval): { nodes: TraceNode[]; running: RunningAgentic[] } {
  const inside = new Set<string>();
  live.nodes.forEach((node) => descendants(node, inside));
  const nodes = live.nodes.filter((node) => !inside.has(node.id)).sort((a, b) => nodeNumber(a.id) - nodeNumber(b.id));
  const done = new Set(live.nodes.map((node) => node.id));
  const running = Object.entries(live.rounds)
    .filter(([id]) => !done.has(id) && !inside.has(id))
    .map(([id, rounds]) => ({ id, rounds: [...rounds].sort((a, b) => a.round - b.round) }));
  return { nodes, running };
}
