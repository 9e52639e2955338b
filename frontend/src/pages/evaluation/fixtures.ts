/** API answers shaped like the server's (see tests/integration/evaluation), for the page tests. */
import type {
  Evaluation,
  EvaluationComparison,
  EvaluationDataset,
  EvaluationDetail,
  PipelineResult,
} from "../../api/evaluation";

export const dataset = (overrides: Partial<EvaluationDataset> = {}): EvaluationDataset => ({
  id: 3,
  name: "Cranfield head",
  source: "upload:cranfield-head.zip",
  language: "en",
  knowledge_base: 11,
  document_count: 30,
  query_count: 24,
  has_answers: false,
  promoted: false,
  status: "ready",
  documents: { uploaded: 30, ready: 30, failed: 0, in_progress: 0 },
  error: "",
  created_at: "2025-03-01T10:00:00Z",
  ...overrides,
});

const perQuery = (ndcg: number[]) =>
  ndcg.map((value, index) => ({
    query_id: String(index + 1),
    query: `question number ${index + 1}`,
    "ndcg@10": value,
    "recall@1": value > 0.5 ? 1 : 0,
    "recall@5": value,
    "recall@10": value,
    "recall@100": 1,
    "mrr@10": value,
    map: value,
    latency_ms: 2.5,
    llm_calls: 0,
    retrieved: [`${index + 1}`, "29", "7"],
  }));

export const pipelineResult = (name: string, ndcg: number, ci: [number, number], rows: number[]): PipelineResult => ({
  name,
  queries: rows.length,
  planned_queries: rows.length,
  truncated: false,
  failures: 0,
  errors: [],
  metrics: { "ndcg@10": ndcg, "recall@1": 0.25, "recall@5": 0.5, "recall@10": 0.625, "recall@100": 0.9, "mrr@10": 0.55, map: 0.41 },
  ci: {
    "ndcg@10": ci,
    "recall@1": [0.1, 0.4],
    "recall@5": [0.3, 0.7],
    "recall@10": [0.45, 0.8],
    "recall@100": [0.8, 1],
    "mrr@10": [0.4, 0.7],
    map: [0.3, 0.52],
  },
  recall_curve: { "1": 0.25, "10": 0.625, "100": 0.9 },
  latency_ms: { p50: 3.25, p95: 12.5, mean: 4 },
  llm_calls_per_query: 0,
  answers: null,
  per_query: perQuery(rows),
});

const REPORT = "http://localhost:3000/api/v1/evaluations/7/report/";

export const evaluation = (overrides: Partial<EvaluationDetail> = {}): EvaluationDetail => ({
  id: 7,
  dataset: 3,
  dataset_name: "Cranfield head",
  pipelines: [
    { name: "keyword", pipeline_id: null, preset: "keyword", display_name: "Keyword" },
    { name: "semantic", pipeline_id: null, preset: "semantic", display_name: "Semantic" },
  ],
  status: "running",
  progress: { done: 0, total: 48, queries: 24, answers: 0 },
  query_limit: null,
  depth: 100,
  answer_queries: 0,
  seed: 0,
  summary: [],
  report: null,
  error: "",
  created_at: "2025-03-01T10:05:00Z",
  started_at: "2025-03-01T10:05:01Z",
  finished_at: null,
  results: null,
  ...overrides,
});

const KEYWORD = pipelineResult("keyword", 0.475, [0.412, 0.538], [0.9, 0.2, 0.6]);
const SEMANTIC = pipelineResult("semantic", 0.301, [0.25, 0.35], [0.1, 0.4, 0.3]);

export const finished = (): EvaluationDetail =>
  evaluation({
    status: "done",
    progress: { done: 48, total: 48, queries: 24, answers: 0 },
    finished_at: "2025-03-01T10:05:13Z",
    summary: [KEYWORD, SEMANTIC].map(({ per_query: _, recall_curve: __, errors: ___, planned_queries: ____, ...summary }) => summary),
    report: { markdown: `${REPORT}report.md`, metrics: `${REPORT}metrics.png`, recall: `${REPORT}recall.png`, json: `${REPORT}results.json` },
    results: {
      dataset: { name: "Cranfield head", documents: 30, queries: 3, judgements: 40, language: "en" },
      settings: { depth: 100, seed: 0 },
      pipelines: [KEYWORD, SEMANTIC],
      comparisons: [],
    },
  });

export const listed = (detail: EvaluationDetail): Evaluation => {
  const { results: _, ...rest } = detail;
  return rest;
};

export const COMPARISON: EvaluationComparison = {
  evaluation: 7,
  pipelines: [],
  comparisons: [
    {
      a: "keyword",
      b: "semantic",
      queries: 3,
      metrics: {
        "ndcg@10": { n: 3, mean_a: 0.475, mean_b: 0.301, difference: 0.174, ci: [0.05, 0.3], p_randomization: 0.0004, p_bootstrap: 0.012 },
        "recall@10": { n: 3, mean_a: 0.625, mean_b: 0.625, difference: 0, ci: [-0.1, 0.1], p_randomization: 1, p_bootstrap: 0.97 },
      },
    },
  ],
};
