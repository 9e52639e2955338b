import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { EvaluationDetail } from "../../api/evaluation";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { FakeWebSocket } from "../../test/fakes";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { applySnapshot } from "./evaluationFeed";
import { EvaluationDetailPage } from "./EvaluationDetailPage";
import { COMPARISON, evaluation, finished } from "./fixtures";

const progress = (done: number, status = "running", extra: Record<string, unknown> = {}) => ({
  type: "evaluation.progress",
  evaluation: { id: 7, status, done, total: 48, error: null, ...extra },
});

/** The detail endpoint answers `current()` at each call. */
function serve(current: () => EvaluationDetail) {
  return mockApi({
    ...catalogRoutes(),
    "GET /api/v1/evaluations/7/": () => jsonResponse(current()),
    "GET /api/v1/evaluations/7/comparison/": COMPARISON,
  });
}

const progressBar = () => screen.getByRole("progressbar", { name: "Evaluation progress" });
const metricsTable = () => screen.getByRole("table", { name: "Retrieval metrics" });

beforeEach(() => {
  FakeWebSocket.instances = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("applySnapshot", () => {
  it("takes status, progress and error from the websocket and keeps the rest", () => {
    const updated = applySnapshot(evaluation(), progress(12, "failed", { error: "boom" }).evaluation as never);
    expect(updated).toMatchObject({ status: "failed", progress: { done: 12, total: 48 }, error: "boom", dataset_name: "Cranfield head" });
  });

  it("ignores another evaluation's snapshot", () => {
    const current = evaluation();
    expect(applySnapshot(current, { ...progress(3).evaluation, id: 8 } as never)).toBe(current);
  });
});

describe("EvaluationDetailPage", () => {
  it("moves the progress bar as the websocket reports, then shows the results with their intervals", async () => {
    let current = evaluation();
    const api = serve(() => current);
    renderWithProviders(<EvaluationDetailPage id={7} />);
    expect(await screen.findByRole("heading", { level: 1, name: "Evaluation 7" })).toBeInTheDocument();
    expect(screen.getByText("On the dataset “Cranfield head”")).toBeInTheDocument();
    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));
    const socket = FakeWebSocket.latest();
    expect(socket.url).toBe("ws://localhost:3000/ws/evaluation/7/");
    socket.open();
    expect(screen.getByText("Live")).toBeInTheDocument();

    socket.receive(progress(0));
    expect(progressBar()).toHaveAttribute("aria-valuenow", "0");
    socket.receive(progress(12));
    expect(progressBar()).toHaveAttribute("aria-valuenow", "25");
    expect(screen.getByText("24 queries × 2 pipelines: 12 of 48 runs")).toBeInTheDocument();
    socket.receive(progress(36));
    expect(progressBar()).toHaveAttribute("aria-valuenow", "75");
    expect(screen.getByText("Running", { selector: ".badge" })).toBeInTheDocument();
    expect(screen.getByText("Running the queries through each pipeline…")).toBeInTheDocument();
    socket.receive(progress(48));
    expect(screen.getByText("Writing the report…")).toBeInTheDocument();

    current = finished();
    socket.receive(progress(48, "done"));
    // Done: the socket is closed and the results are read once.
    expect(await screen.findByRole("table", { name: "Retrieval metrics" })).toBeInTheDocument();
    expect(socket.closed).toBe(true);
    expect(progressBar()).toHaveAttribute("aria-valuenow", "100");
    expect(screen.getByText("Done", { selector: ".badge" })).toBeInTheDocument();
    expect(screen.queryByText("Live")).not.toBeInTheDocument();
    expect(api.mock.calls.filter(([url]) => url === "/api/v1/evaluations/7/")).toHaveLength(2);

    const keyword = within(metricsTable()).getByRole("row", { name: /^Keyword/ });
    const ndcg = keyword.querySelector<HTMLElement>('[data-metric="ndcg@10"]')!;
    // The mean, ± half the 95% interval, and the interval's bounds.
    expect(ndcg).toHaveTextContent("0.475 ± 0.063");
    expect(ndcg).toHaveTextContent("0.412 – 0.538");
    expect(ndcg).toHaveClass("is-best");
    const semantic = within(metricsTable()).getByRole("row", { name: /^Semantic/ });
    expect(semantic.querySelector('[data-metric="ndcg@10"]')).toHaveTextContent("0.301 ± 0.050");
    expect(semantic.querySelector('[data-metric="ndcg@10"]')).toHaveTextContent("0.250 – 0.350");
    expect(semantic.querySelector('[data-metric="ndcg@10"]')).not.toHaveClass("is-best");
    expect(within(metricsTable()).getAllByRole("columnheader").map((cell) => cell.textContent)).toEqual([
      "Pipeline", "Queries", "nDCG@10", "R@1", "R@5", "R@10", "R@100", "MRR@10", "MAP",
    ]);

    const cost = screen.getByRole("table", { name: "Speed and cost" });
    expect(within(cost).getByRole("row", { name: /^Keyword/ })).toHaveTextContent("3.312.50.00");

    // The comparison comes from its own endpoint; the significant pair is highlighted.
    const comparison = await screen.findByRole("table", { name: "Comparison" });
    const pair = within(comparison).getByRole("row", { name: /Keyword vs Semantic/ });
    expect(pair).toHaveClass("is-significant");
    expect(pair).toHaveTextContent("+0.174");
    expect(pair).toHaveTextContent("< 0.001");
    expect(within(pair).getByText("Keyword is better")).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText("Metric"), { target: { value: "recall@10" } });
    expect(within(comparison).getByRole("row", { name: /Keyword vs Semantic/ })).not.toHaveClass("is-significant");
    expect(within(comparison).getByText("No significant difference")).toBeInTheDocument();

    expect(screen.getByRole("img", { name: /Bar chart of each retrieval metric/ })).toHaveAttribute(
      "src", "http://localhost:3000/api/v1/evaluations/7/report/metrics.png");
    expect(screen.getByRole("img", { name: /recall at k/ })).toHaveAttribute("src", expect.stringMatching(/recall\.png$/));
    expect(screen.getByRole("link", { name: "report.md" })).toHaveAttribute("href", expect.stringMatching(/report\/report\.md$/));
    expect(screen.getByRole("link", { name: "results.json" })).toHaveAttribute("href", expect.stringMatching(/report\/results\.json$/));
  });

  it("names presets by the display names the server sends in the interface language", async () => {
    const detail = finished();
    detail.pipelines = [
      { name: "keyword", pipeline_id: null, preset: "keyword", display_name: "Palabras clave" },
      { name: "semantic", pipeline_id: null, preset: "semantic", display_name: "Semántico" },
    ];
    serve(() => detail);
    renderWithProviders(<EvaluationDetailPage id={7} />);
    const table = await screen.findByRole("table", { name: "Retrieval metrics" });
    expect(within(table).getAllByRole("rowheader").map((cell) => cell.textContent)).toEqual(["Palabras clave", "Semántico"]);
    expect(within(screen.getByRole("table", { name: "Speed and cost" })).getAllByRole("rowheader").map((cell) => cell.textContent))
      .toEqual(["Palabras clave", "Semántico"]);
    const comparison = await screen.findByRole("table", { name: "Comparison" });
    expect(within(comparison).getByRole("row", { name: /Palabras clave vs Semántico/ })).toHaveTextContent("Palabras clave is better");
    expect(document.querySelector(".card__meta")).toHaveTextContent("Palabras claveSemántico");
    expect(screen.queryByText(/\bkeyword\b/)).not.toBeInTheDocument();
  });

  it("sorts the per-query rows by the first pipeline's nDCG@10", async () => {
    serve(finished);
    renderWithProviders(<EvaluationDetailPage id={7} />);
    fireEvent.click(await screen.findByRole("button", { name: "Per-query scores (3 queries)" }));
    const table = screen.getByRole("table", { name: "Per-query scores" });
    const order = () => within(table).getAllByRole("row").slice(1).map((row) => row.querySelector("th code")!.textContent);
    expect(order()).toEqual(["1", "2", "3"]);
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("question number 1");
    const sort = within(table).getByRole("button", { name: /nDCG@10 · Keyword/ });
    fireEvent.click(sort);
    expect(order()).toEqual(["1", "3", "2"]);
    expect(sort.closest("th")).toHaveAttribute("aria-sort", "descending");
    fireEvent.click(sort);
    expect(order()).toEqual(["2", "3", "1"]);
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("0.2000.400");
  });

  it("reads the evaluation again when the websocket drops, polls until it reconnects, and shows a failure", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let current = evaluation({ progress: { done: 6, total: 48, queries: 24, answers: 0 } });
    const api = serve(() => current);
    renderWithProviders(<EvaluationDetailPage id={7} />);
    await screen.findByText("24 queries × 2 pipelines: 6 of 48 runs");
    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));

    current = evaluation({ progress: { done: 24, total: 48, queries: 24, answers: 0 } });
    FakeWebSocket.latest().drop();
    expect(screen.getByText("Refreshing")).toBeInTheDocument();
    expect(await screen.findByText("24 queries × 2 pipelines: 24 of 48 runs")).toBeInTheDocument();

    current = evaluation({ progress: { done: 30, total: 48, queries: 24, answers: 0 } });
    await act(() => vi.advanceTimersByTimeAsync(2100));
    expect(await screen.findByText("24 queries × 2 pipelines: 30 of 48 runs")).toBeInTheDocument();

    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(2));
    FakeWebSocket.latest().open();
    expect(screen.getByText("Live")).toBeInTheDocument();
    const calls = api.mock.calls.length;
    await act(() => vi.advanceTimersByTimeAsync(4100));
    // Live again: no more polling.
    expect(api.mock.calls.length).toBe(calls);

    const error = "RuntimeError: the vector index failed to build";
    current = evaluation({ status: "failed", error, progress: { done: 30, total: 48 }, finished_at: "2025-03-01T10:05:13Z" });
    FakeWebSocket.latest().receive(progress(30, "failed", { error }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The evaluation failed");
    expect(alert).toHaveTextContent(error);
    expect(screen.getByText("Failed", { selector: ".badge" })).toBeInTheDocument();
    // Read once more for what only the REST API has: how long it ran.
    expect(await screen.findByText("12 sec")).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });

  it("asks before deleting, then goes back to the list", async () => {
    let deleted = false;
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/7/": finished(),
      "GET /api/v1/evaluations/7/comparison/": COMPARISON,
      "DELETE /api/v1/evaluations/7/": () => {
        deleted = true;
        return new Response(null, { status: 204 });
      },
    });
    renderWithProviders(<EvaluationDetailPage id={7} />);
    fireEvent.click(await screen.findByRole("button", { name: "Delete" }));
    const dialog = screen.getByRole("dialog", { name: "Delete this evaluation?" });
    expect(dialog).toHaveTextContent("Evaluation 7 on “Cranfield head” and its report are deleted for good.");
    fireEvent.click(within(dialog).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(window.location.pathname).toBe("/evaluation"));
    expect(deleted).toBe(true);
    expect(screen.getByText("Evaluation 7 deleted.")).toBeInTheDocument();
  });
});
