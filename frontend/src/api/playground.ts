import type { TraceNode } from "./chat";
import { api, ApiError } from "./client";
import type { ComponentRef } from "./components";

/** A BM25 query term's part of one hit's score; the parts add up to the score. */
export interface TermPart {
  term: string;
  query_count: number;
  term_frequency: number;
  idf: number;
  contribution: number;
}

/** A fusion child that returned the hit: its rank and score there, and what that added. */
export interface SourcePart {
  child: number;
  component: string;
  score_scale: string | null;
  rank: number;
  score: number;
  contribution: number;
  weight?: number;
  normalised?: number;
}

export interface PlaygroundHit {
  rank: number;
  chunk_id: number;
  document_id: number;
  document_name: string;
  position: number;
  page: number | null;
  text: string;
  score: number;
  explanation: { terms?: TermPart[]; sources?: SourcePart[] };
}

export interface PlaygroundResult {
  score_scale: string | null;
  elapsed_ms: number;
  results: PlaygroundHit[];
  trace: TraceNode;
}

/** A node of the tried tree that is a language model. */
export interface LanguageModelNode {
  path: string;
  component: string;
}

export interface PlaygroundRequest {
  question: string;
  /** The retriever tree to try; the knowledge base's default preset when absent. */
  retriever?: ComponentRef;
  top_k?: number;
  allow_llm?: boolean;
}

/** Run one retriever tree over a knowledge base; nothing is saved. */
export const tryRetriever = (knowledgeBaseId: number, request: PlaygroundRequest, signal?: AbortSignal) =>
  api.post<PlaygroundResult>(`/api/v1/knowledge-bases/${knowledgeBaseId}/playground/`, request, { signal });

/** The language models a refused run would call (a 409), or null for any other failure. */
export function consentNeeded(error: unknown): LanguageModelNode[] | null {
  if (!(error instanceof ApiError) || error.status !== 409) return null;
  const models = (error.payload as { language_models?: unknown } | null)?.language_models;
  return Array.isArray(models) ? (models as LanguageModelNode[]) : null;
}
