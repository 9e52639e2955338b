import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { QualityRequest, QualityScore } from "../../api/quality";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { QualityPanel, SCORE_AFTER_MS } from "./QualityPanel";

const BM25 = (k1: number) => ({ component: "BM25Retriever", params: { k1, top_k: 10 } });
const GOLDEN = { questions: [{ question: "What makes ATP?", documents: [3] }] };

function scoreFor(value: number, difference: number | null): QualityScore {
  const metric = { value, ci: [value - 0.1, value + 0.1] as [number, number] };
  const change = (noise: boolean) => ({ difference: difference ?? 0, ci: [(difference ?? 0) - 0.05, (difference ?? 0) + 0.05] as [number, number], p_value: 0.01, within_noise: noise });
  return {
    questions: 20,
    metrics: { ndcg_at_10: metric, recall_at_10: metric },
    change: difference === null ? null : { ndcg_at_10: change(false), recall_at_10: change(true) },
    baseline: null,
    llm_calls: 0,
    elapsed_ms: 812,
  };
}

beforeEach(() => vi.useFakeTimers({ shouldAdvanceTime: true }));
afterEach(() => vi.useRealTimers());

describe("QualityPanel", () => {
  it("scores the edited tree after a pause, shows the change against the saved one, and a newer edit cancels the older score", async () => {
    const asked: QualityRequest[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/pipelines/7/test-set/": { test_set: GOLDEN },
      "POST /api/v1/evaluations/live/": (body) => {
        asked.push(body as QualityRequest);
        const k1 = ((body as QualityRequest).retriever.params as { k1: number }).k1;
        return jsonResponse(scoreFor(k1 === 1.2 ? 0.5 : 0.62, k1 === 1.2 ? 0 : 0.12));
      },
    });
    const view = renderWithProviders(
      <QualityPanel pipelineId={7} knowledgeBaseId={2} retriever={BM25(1.2)} saved={BM25(1.2)} valid />,
    );
    expect(await screen.findByTestId("test-set-summary")).toHaveTextContent("1 golden question");
    await act(() => vi.advanceTimersByTimeAsync(SCORE_AFTER_MS + 10));
    await waitFor(() => expect(screen.getByTestId("quality-ndcg_at_10")).toHaveTextContent("0.500"));
    expect(asked[0]).toMatchObject({ knowledge_base: 2, baseline: BM25(1.2), test_set: GOLDEN, allow_llm: false });

    // Two quick edits: only the last is scored.
    view.rerender(<QualityPanel pipelineId={7} knowledgeBaseId={2} retriever={BM25(1.5)} saved={BM25(1.2)} valid />);
    await act(() => vi.advanceTimersByTimeAsync(100));
    view.rerender(<QualityPanel pipelineId={7} knowledgeBaseId={2} retriever={BM25(1.6)} saved={BM25(1.2)} valid />);
    await act(() => vi.advanceTimersByTimeAsync(SCORE_AFTER_MS + 10));
    await waitFor(() => expect(screen.getByTestId("quality-ndcg_at_10")).toHaveTextContent("0.620"));
    expect(asked.map((request) => (request.retriever.params as { k1: number }).k1)).toEqual([1.2, 1.6]);
    expect(screen.getByTestId("change-ndcg_at_10")).toHaveTextContent("+0.120 vs saved");
    expect(screen.getByTestId("change-recall_at_10")).toHaveTextContent("+0.120 vs saved · within noise");
  });

  it("does not score a tree the live check refused, nor one with a language model until asked", async () => {
    const allowed: boolean[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/pipelines/7/test-set/": { test_set: GOLDEN },
      "POST /api/v1/evaluations/live/": (body) => {
        const { allow_llm } = body as QualityRequest;
        allowed.push(Boolean(allow_llm));
        return allow_llm
          ? jsonResponse(scoreFor(0.7, null))
          : jsonResponse({ errors: [{ path: "allow_llm", message: "m", code: "llm_consent" }],
            language_models: [{ path: "retriever.params.llm_model", component: "LocalLLM" }] }, 409);
      },
    });
    const tree = { component: "LLMRerankRetriever", params: {} };
    const view = renderWithProviders(<QualityPanel pipelineId={7} knowledgeBaseId={2} retriever={tree} saved={undefined} valid={false} />);
    await screen.findByTestId("test-set-summary");
    await act(() => vi.advanceTimersByTimeAsync(SCORE_AFTER_MS * 3));
    expect(allowed).toEqual([]);
    expect(screen.getByText("Fix the tree's problems to score it.")).toBeInTheDocument();

    view.rerender(<QualityPanel pipelineId={7} knowledgeBaseId={2} retriever={tree} saved={undefined} valid />);
    await act(() => vi.advanceTimersByTimeAsync(SCORE_AFTER_MS + 10));
    expect(await screen.findByText(/scoring it asks it 1 question,/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Score it" }));
    await act(() => vi.advanceTimersByTimeAsync(SCORE_AFTER_MS + 10));
    await waitFor(() => expect(screen.getByTestId("quality-ndcg_at_10")).toHaveTextContent("0.700"));
    expect(allowed).toEqual([false, true]);
  });

  it("asks a new pipeline to be saved before a test set is attached", () => {
    mockApi({ ...catalogRoutes() });
    renderWithProviders(<QualityPanel pipelineId={null} knowledgeBaseId={2} retriever={BM25(1.2)} saved={undefined} valid />);
    expect(screen.getByText(/Save the pipeline to attach a test set/)).toBeInTheDocument();
  });
});
