import type { Citation, RoundSummary, SentChunk, StrategyTrace, TraceNode, TraceStep } from "../../api/chat";

/** What the trace view knows about a chunk: its text (when it was sent to the model) and its fate. */
export interface ChunkFacts {
  /** Chunks given to the model, by id. */
  sent: ReadonlyMap<number, SentChunk>;
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

export function chunkFacts(
  trace: StrategyTrace | null,
  chunks: readonly SentChunk[],
  citations: readonly Citation[] = [],
): ChunkFacts {
  const dropped = new Set<number>();
  let truncated: number | null = null;
  for (const step of trace ? allSteps(trace) : []) {
    if (step.step === "generate" && isBudget(step.budget)) {
      step.budget.dropped.forEach((id) => dropped.add(id));
      truncated = step.budget.truncated ?? truncated;
    }
  }
  const documentNames = new Map<number, string>();
  for (const citation of citations) if (citation.document_name) documentNames.set(citation.document_id, citation.document_name);
  return { sent: new Map(chunks.map((chunk) => [chunk.chunk_id, chunk])), dropped, truncated, documentNames };
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
