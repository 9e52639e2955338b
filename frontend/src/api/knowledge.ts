import { api, uploadForm, type UploadResult } from "./client";
import type { ComponentRef } from "./components";

export const KNOWLEDGE_LANGUAGES = ["en", "es", "zh-Hant", "multilingual"] as const;
export type KnowledgeLanguage = (typeof KNOWLEDGE_LANGUAGES)[number];

export interface KnowledgeBase {
  id: number;
  name: string;
  description: string;
  language: KnowledgeLanguage;
  chunker: ComponentRef;
  embedding_model: ComponentRef;
  document_count: number;
  ready_count: number;
  failed_count: number;
  in_progress_count: number;
  chunk_total: number;
  /** The corpus of an evaluation dataset not promoted yet: listed under Evaluation, not with the others. */
  evaluation_only: boolean;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeBaseInput {
  name: string;
  description: string;
  language: KnowledgeLanguage;
  chunker?: ComponentRef | null;
  embedding_model?: ComponentRef | null;
}

export const DOCUMENT_STAGES = ["queued", "parsing", "chunking", "embedding", "indexing"] as const;
export type DocumentStatus = (typeof DOCUMENT_STAGES)[number] | "ready" | "failed";

/** A document as the REST API returns it. */
export interface KnowledgeDocument {
  id: number;
  name: string;
  mime: string;
  size: number;
  status: DocumentStatus;
  progress: { done: number; total: number };
  chunk_count: number;
  page_count: number | null;
  /** Why ingestion failed, in the UI's language. */
  error: string | null;
  /** What the parsing library said, in its own words (never translated). */
  error_detail: string | null;
  error_code: string | null;
  created_at: string;
}

/** A document as `ws/knowledge/<id>/` reports it. */
export interface DocumentProgress {
  id: number;
  name: string;
  status: DocumentStatus;
  done: number;
  total: number;
  chunk_count: number;
  error: string | null;
  error_detail: string | null;
  error_code: string | null;
}

export interface Rejection {
  name: string;
  code: "too_large" | "duplicate";
  reason: string;
  document_id: number | null;
}

export interface UploadOutcome {
  documents: KnowledgeDocument[];
  rejected: Rejection[];
}

export interface Chunk {
  id: number;
  position: number;
  text: string;
  metadata: { page?: number; pages?: number[]; heading?: string; [key: string]: unknown };
}

export interface ChunkPage {
  count: number;
  results: Chunk[];
}

const BASES_URL = "/api/v1/knowledge-bases/";
const baseUrl = (id: number) => `${BASES_URL}${id}/`;
const documentsUrl = (id: number) => `${baseUrl(id)}documents/`;

export const fetchKnowledgeBases = (signal?: AbortSignal) =>
  api.get<KnowledgeBase[]>(BASES_URL, { signal });

export const fetchKnowledgeBase = (id: number, signal?: AbortSignal) =>
  api.get<KnowledgeBase>(baseUrl(id), { signal });

export const createKnowledgeBase = (input: KnowledgeBaseInput) =>
  api.post<KnowledgeBase>(BASES_URL, input);

export const updateKnowledgeBase = (id: number, input: Partial<Pick<KnowledgeBase, "name" | "description">>) =>
  api.patch<KnowledgeBase>(baseUrl(id), input);

export const deleteKnowledgeBase = (id: number) => api.delete<void>(baseUrl(id));

export const fetchDocuments = (knowledgeBaseId: number, signal?: AbortSignal) =>
  api.get<KnowledgeDocument[]>(documentsUrl(knowledgeBaseId), { signal });

export const deleteDocument = (knowledgeBaseId: number, documentId: number) =>
  api.delete<void>(`${documentsUrl(knowledgeBaseId)}${documentId}/`);

export const retryDocument = (knowledgeBaseId: number, documentId: number) =>
  api.post<KnowledgeDocument>(`${documentsUrl(knowledgeBaseId)}${documentId}/retry/`);

export function fetchChunks(
  knowledgeBaseId: number,
  documentId: number,
  page: { limit: number; offset: number },
  signal?: AbortSignal,
): Promise<ChunkPage> {
  const query = new URLSearchParams({ limit: String(page.limit), offset: String(page.offset) });
  return api.get<ChunkPage>(`${documentsUrl(knowledgeBaseId)}${documentId}/chunks/?${query}`, { signal });
}

/** Upload one file (its own request, so its progress is its own). */
export function uploadDocument(
  knowledgeBaseId: number,
  file: File,
  options: { force: boolean; onProgress: (fraction: number) => void; signal?: AbortSignal },
): Promise<UploadResult> {
  const form = new FormData();
  form.append("files", file);
  if (options.force) form.append("force", "true");
  return uploadForm(documentsUrl(knowledgeBaseId), form, options.onProgress, options.signal);
}

/** Where the knowledge base's live progress is published. */
export function knowledgeSocketUrl(knowledgeBaseId: number, language: string): string {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}/ws/knowledge/${knowledgeBaseId}/?lang=${encodeURIComponent(language)}`;
}
