import type { Citation, Operation, PlanRecord, RoundSummary, SentChunk, StrategyTrace, TraceNode, TraceStep } from "../../api/chat";

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
  /** Parts of the question the retrieval searched on their own; the default budget is read once per part. */
  parts?: number;
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
  /** Each agentic node's plan, by node id, from the moment it is decided. */
  plans: Record<string, PlanRecord>;
  /** The round whose pool each agentic node is judging now (its verdict has not come yet). */
  judging: Record<string, number>;
}

export const EMPTY_LIVE: LiveRetrieval = { nodes: [], rounds: {}, plans: {}, judging: {} };

export function addLiveNode(live: LiveRetrieval, node: TraceNode): LiveRetrieval {
  return { ...live, nodes: [...live.nodes.filter((known) => known.id !== node.id), node] };
}

export function addLiveRound(live: LiveRetrieval, nodeId: string, round: RoundSummary): LiveRetrieval {
  const known = live.rounds[nodeId] ?? [];
  return { ...live, rounds: { ...live.rounds, [nodeId]: [...known.filter((item) => item.round !== round.round), round] } };
}

export function addLivePlan(live: LiveRetrieval, nodeId: string, plan: PlanRecord): LiveRetrieval {
  return { ...live, plans: { ...live.plans, [nodeId]: plan } };
}

export function addLiveJudging(live: LiveRetrieval, nodeId: string, round: number): LiveRetrieval {
  return { ...live, judging: { ...live.judging, [nodeId]: round } };
}

/** An agentic node still running: its plan and rounds so far. */
export interface RunningAgentic {
  id: string;
  rounds: RoundSummary[];
}

function completedRoots(live: LiveRetrieval): { roots: TraceNode[]; inside: Set<string> } {
  const inside = new Set<string>();
  live.nodes.forEach((node) => descendants(node, inside));
  const roots = live.nodes.filter((node) => !inside.has(node.id)).sort((a, b) => nodeNumber(a.id) - nodeNumber(b.id));
  return { roots, inside };
}

/**
 * What to draw while retrieval runs: completed nodes not yet inside a completed parent (nodes
 * complete children first, so a parent arriving takes its children with it), and agentic nodes
 * that have planned, judged or finished a round but not completed themselves. In start order.
 */
export function liveRoots(live: LiveRetrieval): { nodes: TraceNode[]; running: RunningAgentic[] } {
  const { roots, inside } = completedRoots(live);
  const done = new Set(live.nodes.map((node) => node.id));
  const ids = [...new Set([...Object.keys(live.plans), ...Object.keys(live.judging), ...Object.keys(live.rounds)])];
  const running = ids
    .filter((id) => !done.has(id) && !inside.has(id))
    .sort((a, b) => nodeNumber(a) - nodeNumber(b))
    .map((id) => ({ id, rounds: [...(live.rounds[id] ?? [])].sort((a, b) => a.round - b.round) }));
  return { nodes: roots, running };
}

/** One round of an agentic search as the timeline shows it. */
export interface TimelineRound {
  round: number;
  /** What the round consults: the plan's operations (round 1) or the previous verdict's. */
  planned: Operation[];
  /** The child nodes completed so far, in start order. */
  consulted: TraceNode[];
  /** The round's summary (pool, verdict) once it has come. */
  summary: RoundSummary | null;
  /** Its pool is being judged now. */
  judging: boolean;
}

/** An agentic search as it unfolds: the plan, then each round's children and verdict. */
export interface AgenticTimeline {
  id: string;
  plan: PlanRecord | null;
  rounds: TimelineRound[];
  /** The node has completed: nothing more comes. */
  done: boolean;
}

function planOf(node: TraceNode): PlanRecord | null {
  return node.details?.plan ?? node.rounds[0]?.plan ?? null;
}

/** The timeline of a completed (or stored) agentic node: the same as it was live. */
export function agenticTimeline(node: TraceNode): AgenticTimeline {
  const consulted = roundChildren(node);
  return {
    id: node.id,
    plan: planOf(node),
    rounds: node.rounds.map((round, index) => ({
      round: round.round, planned: round.operations, consulted: consulted[index] ?? [], summary: round, judging: false,
    })),
    done: true,
  };
}

/** Does the search go on after this round? Older traces have no `next_operations`: a verdict that is not sufficient goes on. */
function goesOn(round: RoundSummary): boolean {
  if (round.next_operations) return round.next_operations.length > 0;
  return !!round.verdict && !round.verdict.sufficient && !round.fallback;
}

/**
 * The timeline of an agentic node still running, from the events so far. Its children are the
 * completed nodes started after it and not inside another completed node; each finished round
 * takes as many as it has operations (as `roundChildren` does for the stored node), and the
 * round running now takes the rest.
 */
export function liveAgenticTimeline(live: LiveRetrieval, id: string): AgenticTimeline {
  const completed = live.nodes.find((node) => node.id === id);
  if (completed) return agenticTimeline(completed);
  const summaries = [...(live.rounds[id] ?? [])].sort((a, b) => a.round - b.round);
  const plan = live.plans[id] ?? summaries[0]?.plan ?? null;
  const children = completedRoots(live).roots.filter((node) => nodeNumber(node.id) > nodeNumber(id));
  let offset = 0;
  const rounds: TimelineRound[] = summaries.map((summary) => {
    const consulted = children.slice(offset, offset + summary.operations.length);
    offset += summary.operations.length;
    return { round: summary.round, planned: summary.operations, consulted, summary, judging: false };
  });
  const rest = children.slice(offset);
  const last = summaries[summaries.length - 1];
  const next = last ? last.round + 1 : 1;
  const judging = live.judging[id] === next;
  if (rest.length > 0 || judging || (last ? goesOn(last) : plan !== null)) {
    const planned = last ? last.next_operations ?? [] : plan?.operations ?? [];
    rounds.push({ round: next, planned, consulted: rest, summary: null, judging });
  }
  return { id, plan, rounds, done: false };
}

/** Every agentic search of a run so far, running or completed, in start order. */
export function liveAgenticTimelines(live: LiveRetrieval): AgenticTimeline[] {
  const { nodes, running } = liveRoots(live);
  const found: TraceNode[] = [];
  const visit = (node: TraceNode) => {
    if (isAgentic(node)) found.push(node);
    node.children.forEach(visit);
  };
  nodes.forEach(visit);
  return [...running.map((item) => liveAgenticTimeline(live, item.id)), ...found.map(agenticTimeline)]
    .sort((a, b) => nodeNumber(a.id) - nodeNumber(b.id));
}
