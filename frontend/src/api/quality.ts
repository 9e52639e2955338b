import { api } from "./client";
import type { ComponentRef } from "./components";

/** What the builder scores a tree on: an evaluation dataset over the same knowledge base, or golden questions. */
export type TestSet = { dataset: number } | { questions: GoldenQuestion[] };

export interface GoldenQuestion {
  question: string;
  /** The knowledge base's documents that should come back. */
  documents: number[];
}

export type QualityMetric = "ndcg_at_10" | "recall_at_10";

export interface MetricValue {
  value: number | null;
  /** The 95% bootstrap interval of the mean. */
  ci: [number, number] | null;
}

export interface MetricChange {
  difference: number;
  ci: [number, number];
  p_value: number;
  /** The interval of the change holds 0: the test set cannot tell the versions apart. */
  within_noise: boolean;
}

export interface QualityScore {
  questions: number;
  metrics: Record<QualityMetric, MetricValue>;
  /** Against the saved tree, when one was given. */
  change: Record<QualityMetric, MetricChange> | null;
  baseline: Record<QualityMetric, MetricValue> | null;
  llm_calls: number;
  elapsed_ms: number;
}

export interface QualityRequest {
  knowledge_base: number;
  retriever: ComponentRef;
  baseline?: ComponentRef | null;
  test_set: TestSet;
  limit?: number;
  allow_llm?: boolean;
}

/** Score a retriever tree on a test set (and its change against `baseline`); nothing is saved. */
export const scoreTree = (request: QualityRequest, signal?: AbortSignal) =>
  api.post<QualityScore>("/api/v1/evaluations/live/", request, { signal });

const testSetUrl = (pipelineId: number) => `/api/v1/pipelines/${pipelineId}/test-set/`;

export const fetchTestSet = (pipelineId: number, signal?: AbortSignal) =>
  api.get<{ test_set: TestSet | null }>(testSetUrl(pipelineId), { signal });

export const saveTestSet = (pipelineId: number, testSet: TestSet) =>
  api.put<{ test_set: TestSet }>(testSetUrl(pipelineId), { test_set: testSet });

export const removeTestSet = (pipelineId: number) => api.delete<void>(testSetUrl(pipelineId));
