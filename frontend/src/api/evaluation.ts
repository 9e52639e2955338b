import { api, uploadForm, type UploadResult } from "./client";
import type { ComponentRef } from "./components";
import type { ErrorAction } from "./models";

// -- datasets ------------------------------------------------------------------------------------

/** `importing` (the corpus is being stored), `indexing` (its documents are being ingested), `ready` or `failed`. */
export type DatasetStatus = "importing" | "indexing" | "ready" | "failed";

export interface EvaluationDataset {
  id: number;
  name: string;
  /** `shared:<name>` or `upload:<file name>`. */
  source: string;
  language: string;
  knowledge_base: number;
  /** Corpus documents (empty ones are not uploaded). */
  document_count: number;
  /** Queries with at least one relevant judgement. */
  query_count: number;
  has_answers: boolean;
  /** Whether its corpus was promoted to an ordinary knowledge base; until then it stays under Evaluation. */
  promoted: boolean;
  status: DatasetStatus;
  /** The knowledge base's documents by ingestion state. */
  documents: { uploaded: number; ready: number; failed: number; in_progress: number };
  error: string;
  created_at: string;
}

/** A dataset of the server's shared folder, importable by name. */
export interface SharedDataset {
  name: string;
  title: string;
}

/** A chunker reference; `null` keeps each corpus document as one chunk. */
export type ChunkerReference = { component: string; params: Record<string, unknown> } | null;

/** Keep only part of a large dataset, and how its documents are cut. */
export interface DatasetLimits {
  max_queries: number | null;
  max_documents: number | null;
  chunker: ChunkerReference;
}

export interface DatasetImportInput extends DatasetLimits {
  dataset: string;
  name: string;
}

export interface DatasetUploadInput extends DatasetLimits {
  name: string;
  file: File;
}

// -- evaluations ---------------------------------------------------------------------------------

export type EvaluationStatus = "queued" | "running" | "done" | "failed";

/** What was evaluated: a saved pipeline (`pipeline_id`) or a preset. */
export interface EvaluatedPipeline {
  /** What the results, the summary and the comparisons call it (a preset's slug). */
  name: string;
  pipeline_id: number | null;
  preset: string | null;
  /** How to show it: a preset's display name in the UI's language. */
  display_name: string;
}

/** How to show the pipeline the results call `name`: its display name, else the name itself. */
export function pipelineLabels(pipelines: readonly EvaluatedPipeline[]): (name: string) => string {
  const labels = new Map(pipelines.map((pipeline) => [pipeline.name, pipeline.display_name || pipeline.name]));
  return (name) => labels.get(name) ?? name;
}

/** An evaluation's progress: steps over every pipeline, each pipeline searching `queries` and answering `answers` of them. */
export interface EvaluationProgress {
  done: number;
  total: number;
  queries?: number;
  answers?: number;
}

/** The retrieval metrics, in the order tables show them. */
export const RETRIEVAL_METRICS = ["ndcg@10", "recall@1", "recall@5", "recall@10", "recall@100", "mrr@10", "map"] as const;
export type RetrievalMetric = (typeof RETRIEVAL_METRICS)[number];

/** The answer metrics, measured on the answered subset of the queries. */
export const ANSWER_METRICS = [
  "exact_match",
  "f1",
  "contains",
  "concise_contains",
  "verbatim_copy",
  "citation_precision",
  "faithfulness",
] as const;
export type AnswerMetric = (typeof ANSWER_METRICS)[number];

/** A 95 % bootstrap interval; bounds are null when they could not be computed. */
export type Interval = [number | null, number | null];

export interface Latency {
  p50: number | null;
  p95: number | null;
  mean: number | null;
}

export type AnswerSummary = {
  queries: number;
  latency_ms: Latency;
  llm_calls_per_query: number | null;
} & { [metric in AnswerMetric]: number | null } & { [key: `${string}_queries`]: number };

/** One pipeline's averaged result, as the list and the comparison give it. */
export interface PipelineSummary {
  name: string;
  queries: number;
  metrics: Partial<Record<RetrievalMetric, number | null>>;
  ci: Partial<Record<RetrievalMetric, Interval>>;
  latency_ms: Latency;
  llm_calls_per_query: number | null;
  failures: number;
  truncated: boolean;
  answers: AnswerSummary | null;
}

/** One query's scores for one pipeline. */
export type PerQueryRow = {
  query_id: string;
  /** The query's text (its first 300 characters). */
  query?: string;
  latency_ms: number;
  llm_calls: number;
  /** The corpus ids retrieved first. */
  retrieved: string[];
  error?: string;
  answer?: string;
} & Partial<Record<RetrievalMetric | AnswerMetric, number>>;

export interface PipelineResult extends PipelineSummary {
  planned_queries: number;
  errors: string[];
  recall_curve: Record<string, number | null>;
  per_query: PerQueryRow[];
}

/** One metric of a pair of pipelines: `difference` is A − B. */
export interface MetricComparison {
  n: number;
  mean_a: number | null;
  mean_b: number | null;
  difference: number | null;
  ci: Interval;
  p_randomization: number | null;
  p_bootstrap: number | null;
}

export interface PipelineComparison {
  a: string;
  b: string;
  queries: number;
  metrics: Partial<Record<RetrievalMetric, MetricComparison>>;
}

export interface EvaluationResults {
  dataset: { name: string; documents?: number; queries?: number; judgements?: number; language?: string };
  settings: Record<string, unknown>;
  pipelines: PipelineResult[];
  comparisons: PipelineComparison[];
}

/** Where the finished report's files are served. */
export interface ReportLinks {
  markdown: string;
  metrics: string;
  recall: string;
  json: string;
}

export interface Evaluation {
  id: number;
  dataset: number;
  dataset_name: string;
  pipelines: EvaluatedPipeline[];
  status: EvaluationStatus;
  progress: EvaluationProgress;
  query_limit: number | null;
  depth: number | null;
  answer_queries: number;
  seed: number;
  /** Per pipeline, once done. */
  summary: PipelineSummary[];
  report: ReportLinks | null;
  error: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface EvaluationDetail extends Evaluation {
  results: EvaluationResults | null;
}

export interface EvaluationComparison {
  evaluation: number;
  pipelines: Pick<PipelineSummary, "name" | "queries" | "metrics" | "ci">[];
  comparisons: PipelineComparison[];
}

export interface EvaluationInput {
  dataset: number;
  pipelines: number[];
  presets: string[];
  query_limit: number | null;
  depth: number | null;
  answer_queries: number;
  judge: ComponentRef | null;
  seed: number;
}

/** What `ws/evaluation/<id>/` sends, on connect and at every step. */
export interface ProgressSnapshot {
  id: number;
  status: EvaluationStatus;
  done: number;
  total: number;
  error: string | null;
}

export interface ProgressMessage {
  type: "evaluation.progress";
  evaluation: ProgressSnapshot;
}

/** A retriever preset of the catalog (the evaluation runs it with NaiveRAG). */
export interface RetrieverPreset {
  name: string;
  display_name: string;
  description: string;
  icon: string;
  default: boolean;
  available: boolean;
  unavailable_reason: string | null;
  /** What the user can do about it in the application (install the model it needs), or null. */
  unavailable_action: ErrorAction | null;
}

const EVALUATIONS_URL = "/api/v1/evaluations/";
const DATASETS_URL = `${EVALUATIONS_URL}datasets/`;
const evaluationUrl = (id: number) => `${EVALUATIONS_URL}${id}/`;

export const fetchDatasets = (signal?: AbortSignal) => api.get<EvaluationDataset[]>(DATASETS_URL, { signal });

export const fetchSharedDatasets = (signal?: AbortSignal) =>
  api.get<SharedDataset[]>(`${DATASETS_URL}available/`, { signal });

export const importSharedDataset = (input: DatasetImportInput) => api.post<EvaluationDataset>(DATASETS_URL, input);

export const deleteDataset = (id: number) => api.delete<void>(`${DATASETS_URL}${id}/`);

/** Make the dataset's corpus an ordinary knowledge base (listed, offered to pipelines, an MCP tool). */
export const promoteDataset = (id: number) => api.post<EvaluationDataset>(`${DATASETS_URL}${id}/promote/`);

/** Upload a BEIR zip with progress; resolves whatever the status (400 carries `{"errors": [...]}`). */
export function uploadDataset(
  input: DatasetUploadInput,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<UploadResult> {
  const form = new FormData();
  form.append("name", input.name);
  form.append("file", input.file);
  if (input.max_queries !== null) form.append("max_queries", String(input.max_queries));
  if (input.max_documents !== null) form.append("max_documents", String(input.max_documents));
  if (input.chunker !== null) form.append("chunker", JSON.stringify(input.chunker));
  return uploadForm(`${DATASETS_URL}upload/`, form, onProgress, signal);
}

export const fetchEvaluations = (signal?: AbortSignal) => api.get<Evaluation[]>(EVALUATIONS_URL, { signal });

export const fetchEvaluation = (id: number, signal?: AbortSignal) =>
  api.get<EvaluationDetail>(evaluationUrl(id), { signal });

export const createEvaluation = (input: EvaluationInput) => api.post<Evaluation>(EVALUATIONS_URL, input);

export const deleteEvaluation = (id: number) => api.delete<void>(evaluationUrl(id));

export const fetchComparison = (id: number, signal?: AbortSignal) =>
  api.get<EvaluationComparison>(`${evaluationUrl(id)}comparison/`, { signal });

export const fetchPresets = (signal?: AbortSignal) =>
  api.get<RetrieverPreset[]>("/api/v1/components/presets/", { signal });

/** Whether the evaluation may still change (its progress is worth following). */
export function isActive(status: EvaluationStatus): boolean {
  return status === "queued" || status === "running";
}

/** Where the evaluation's live progress is published. */
export function evaluationSocketUrl(id: number): string {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}/ws/evaluation/${id}/`;
}
