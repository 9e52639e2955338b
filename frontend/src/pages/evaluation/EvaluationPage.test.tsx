import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { EvaluationDataset, EvaluationInput } from "../../api/evaluation";
import type { PipelineSummary } from "../../api/pipelines";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { FakeXHR } from "../../test/fakes";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { EvaluationPage } from "./EvaluationPage";
import { dataset, evaluation, finished, listed } from "./fixtures";
import { placeErrors } from "./NewEvaluationDialog";
import { progressText } from "./progress";

const PRESETS = [
  { name: "keyword", display_name: "Keyword", description: "BM25 alone.", icon: "text-search", default: false, available: true, unavailable_reason: null, tree: {} },
  { name: "semantic", display_name: "Semantic", description: "Dense embeddings alone.", icon: "sparkles", default: false, available: true, unavailable_reason: null, tree: {} },
  { name: "hybrid", display_name: "Hybrid", description: "BM25 and dense fused.", icon: "merge", default: true, available: true, unavailable_reason: null, tree: {} },
  { name: "hybrid-cross-encoder", display_name: "Hybrid + cross-encoder", description: "Re-scored.", icon: "list-ordered", default: false, available: false, unavailable_reason: "no local copy of the cross-encoder", tree: {} },
];

const PIPELINE: PipelineSummary = {
  id: 4, name: "BM25 k1 1.2", description: "", knowledge_base: 2, knowledge_base_name: "Guide", representation: "", ready: true,
  waiting_for: [], documents_reading: 0, created_at: "", updated_at: "",
};

function row(name: string): HTMLElement {
  const item = document.querySelector<HTMLElement>(`.dataset-list li[data-dataset-name="${name}"]`);
  if (!item) throw new Error(`no dataset row named ${name}`);
  return item;
}

beforeEach(() => {
  FakeXHR.instances = [];
  vi.stubGlobal("XMLHttpRequest", FakeXHR);
  window.history.replaceState(null, "", "/evaluation");
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("placeErrors", () => {
  it("puts each error where the form shows it, naming presets and pipelines by what was sent", () => {
    const placed = placeErrors(
      [
        { path: "presets[1]", message: "no preset named 'nope'", code: "unknown_preset" },
        { path: "presets[0].params.retriever.params.top_k", message: "must be ≥ 1", code: "minimum" },
        { path: "pipelines[0]", message: "no such pipeline", code: "not_found" },
        { path: "pipelines", message: "choose at least one pipeline or preset", code: "required" },
        { path: "judge.params.model", message: "required", code: "required" },
        { path: "depth", message: "Ensure this value is less than or equal to 1000.", code: "max_value" },
        { path: "surprise", message: "odd", code: "invalid" },
      ],
      { presets: ["keyword", "nope"], pipelines: [9] },
    );
    expect(placed.presets).toEqual({ nope: ["no preset named 'nope'"], keyword: ["params.retriever.params.top_k: must be ≥ 1"] });
    expect(placed.pipelines).toEqual({ 9: ["no such pipeline"] });
    expect(placed.fields).toEqual({ pipelines: ["choose at least one pipeline or preset"], depth: ["Ensure this value is less than or equal to 1000."] });
    expect(placed.judge).toEqual([{ path: ["params", "model"], message: "required" }]);
    expect(placed.unplaced.map((error) => error.path)).toEqual(["surprise"]);
  });
});

describe("EvaluationPage", () => {
  it("lists datasets and evaluations, polling an indexing dataset until it is ready", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let polls = 0;
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": () => {
        polls++;
        return jsonResponse([
          polls === 1
            ? dataset({ status: "indexing", documents: { uploaded: 30, ready: 12, failed: 1, in_progress: 17 } })
            : dataset(),
          dataset({ id: 4, name: "Broken", status: "failed", error: "the import was interrupted by a restart", source: "shared:scifact" }),
        ]);
      },
      "GET /api/v1/evaluations/": [listed(evaluation({ id: 8, progress: { done: 12, total: 48, queries: 24, answers: 0 } })), listed(finished())],
    });
    renderWithProviders(<EvaluationPage />);
    expect(await screen.findByRole("heading", { level: 1, name: "Evaluation" })).toBeInTheDocument();
    await screen.findByText("Cranfield head", { selector: ".document__name" });

    const head = row("Cranfield head");
    expect(within(head).getByText("Indexing")).toBeInTheDocument();
    expect(within(head).getByText("24 queries")).toBeInTheDocument();
    expect(within(head).getByText("12 of 30 documents ready")).toBeInTheDocument();
    expect(within(head).getByText("1 failed")).toBeInTheDocument();
    expect(within(head).getByText("English")).toBeInTheDocument();
    expect(within(head).getByText("Uploaded: cranfield-head.zip")).toBeInTheDocument();
    expect(within(head).getByRole("progressbar", { name: "Indexing Cranfield head" })).toHaveAttribute("aria-valuenow", "40");
    expect(within(head).queryByRole("button", { name: "Evaluate Cranfield head" })).not.toBeInTheDocument();
    expect(within(row("Broken")).getByText("the import was interrupted by a restart")).toBeInTheDocument();
    expect(within(row("Broken")).getByText("Shared: scifact")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "New evaluation" })).toBeDisabled();

    await act(() => vi.advanceTimersByTimeAsync(2100));
    await waitFor(() => expect(within(row("Cranfield head")).getByText("Ready")).toBeInTheDocument());
    expect(screen.getByRole("button", { name: "New evaluation" })).toBeEnabled();
    // Nothing is importing any more: the polling stops.
    await act(() => vi.advanceTimersByTimeAsync(4100));
    expect(polls).toBe(2);

    const evaluations = screen.getByRole("list", { name: "Evaluations" });
    const running = evaluations.querySelector<HTMLElement>('li[data-evaluation-id="8"]')!;
    expect(within(running).getByRole("link", { name: "Evaluation 8 · Cranfield head" })).toHaveAttribute("href", "/evaluation/8");
    expect(within(running).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "25");
    expect(within(running).getByText("24 queries × 2 pipelines: 12 of 48 runs")).toBeInTheDocument();
    const done = evaluations.querySelector<HTMLElement>('li[data-evaluation-id="7"]')!;
    expect(within(done).getByText("Done")).toBeInTheDocument();
    expect(within(done).getByText("nDCG@10 0.475")).toBeInTheDocument();
    // Presets by their display names, not their slugs.
    expect(within(done).getByText(/^Keyword/)).toHaveClass("chip");
    expect(within(done).queryByText(/^keyword/)).not.toBeInTheDocument();
    expect(within(done).queryByRole("progressbar")).not.toBeInTheDocument();
  });

  it("uploads a BEIR zip with its limits and shows the server's errors by field", async () => {
    let datasets: EvaluationDataset[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": () => jsonResponse(datasets),
      "GET /api/v1/evaluations/datasets/available/": [{ name: "scifact", title: "SciFact" }],
      "GET /api/v1/evaluations/": [],
    });
    renderWithProviders(<EvaluationPage />);
    expect(await screen.findByText("No datasets yet")).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Add dataset" }));
    const dialog = screen.getByRole("dialog", { name: "Add a dataset" });
    await within(dialog).findByRole("option", { name: "scifact — SciFact" });

    fireEvent.click(within(dialog).getByRole("radio", { name: "A BEIR zip from this computer" }));
    const archive = new File(["PK"], "cranfield-head.zip", { type: "application/zip" });
    fireEvent.change(within(dialog).getByLabelText("BEIR zip archive"), { target: { files: [archive] } });
    expect(within(dialog).getByLabelText("Name")).toHaveValue("cranfield-head");
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "Cranfield head" } });
    fireEvent.change(within(dialog).getByLabelText("Most queries to keep"), { target: { value: "20" } });
    expect(within(dialog).queryByLabelText("Chunk size (characters)")).not.toBeInTheDocument();
    fireEvent.click(within(dialog).getByRole("checkbox", { name: "Cut documents into chunks" }));
    expect(within(dialog).getByLabelText("Chunk size (characters)")).toHaveValue(1000);
    fireEvent.change(within(dialog).getByLabelText("Chunk size (characters)"), { target: { value: "400" } });
    fireEvent.change(within(dialog).getByLabelText("Overlap (characters)"), { target: { value: "40" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Import" }));

    await waitFor(() => expect(FakeXHR.instances).toHaveLength(1));
    const upload = FakeXHR.instances[0]!;
    expect(upload.url).toBe("/api/v1/evaluations/datasets/upload/");
    expect(upload.body?.get("name")).toBe("Cranfield head");
    expect(upload.body?.get("file")).toBe(archive);
    expect(upload.body?.get("max_queries")).toBe("20");
    expect(upload.body?.has("max_documents")).toBe(false);
    expect(JSON.parse(upload.body?.get("chunker") as string)).toEqual({
      component: "RecursiveCharacterChunker", params: { chunk_size: 400, chunk_overlap: 40 } });
    upload.progress(0.5);
    expect(within(dialog).getByRole("progressbar", { name: "Uploading cranfield-head.zip" })).toHaveAttribute("aria-valuenow", "50");

    await upload.respond(400, {
      errors: [
        { path: "name", message: "you already have an evaluation dataset named 'Cranfield head'", code: "duplicate" },
        { path: "file", message: "no qrels/test.tsv in the archive", code: "invalid_dataset" },
        { path: "chunker.params.chunk_overlap", message: "the overlap must be smaller than the chunk size", code: "invalid" },
      ],
    });
    const name = within(dialog).getByLabelText("Name");
    expect(name).toHaveAttribute("aria-invalid", "true");
    expect(name.closest(".field")).toHaveTextContent("you already have an evaluation dataset named 'Cranfield head'");
    expect(within(dialog).getByLabelText("BEIR zip archive").closest(".field")).toHaveTextContent("no qrels/test.tsv in the archive");
    expect(within(dialog).getByLabelText("Chunk size (characters)").closest(".field"))
      .toHaveTextContent("the overlap must be smaller than the chunk size");
    expect(within(dialog).queryByRole("progressbar")).not.toBeInTheDocument();

    fireEvent.change(name, { target: { value: "Cranfield head 2" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Import" }));
    await waitFor(() => expect(FakeXHR.instances).toHaveLength(2));
    const created = dataset({ name: "Cranfield head 2", status: "importing", documents: { uploaded: 0, ready: 0, failed: 0, in_progress: 0 } });
    datasets = [created];
    await FakeXHR.instances[1]!.respond(201, created);
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(within(row("Cranfield head 2")).getByText("Importing")).toBeInTheDocument();
    expect(screen.getByText("Importing “Cranfield head 2”: its documents are being indexed.")).toBeInTheDocument();
  });

  it("imports a shared dataset by name", async () => {
    const api = mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": [],
      "GET /api/v1/evaluations/datasets/available/": [{ name: "scifact", title: "SciFact" }, { name: "cranfield", title: "cranfield" }],
      "GET /api/v1/evaluations/": [],
      "POST /api/v1/evaluations/datasets/": (body) => jsonResponse(dataset({ id: 9, name: "scifact", status: "importing", ...(body as object) }), 201),
    });
    renderWithProviders(<EvaluationPage />);
    fireEvent.click(await screen.findByRole("button", { name: "Add dataset" }));
    const dialog = screen.getByRole("dialog", { name: "Add a dataset" });
    // The shared datasets arrive after the dialog opens: choose one only once it is offered.
    await within(dialog).findByRole("option", { name: /SciFact/ });
    fireEvent.change(within(dialog).getByLabelText("Shared dataset"), { target: { value: "scifact" } });
    fireEvent.change(within(dialog).getByLabelText("Most documents to keep"), { target: { value: "500" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Import" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const post = api.mock.calls.find(([url, init]) => url === "/api/v1/evaluations/datasets/" && init?.method === "POST");
    expect(JSON.parse(post?.[1]?.body as string)).toEqual({ dataset: "scifact", name: "", max_queries: null, max_documents: 500, chunker: null });
  });

  it("starts an evaluation of presets, showing refused choices next to themselves, then opens it", async () => {
    const sent: EvaluationInput[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": [dataset(), dataset({ id: 5, name: "SciFact", status: "indexing" })],
      "GET /api/v1/evaluations/": [],
      "GET /api/v1/components/presets/": PRESETS,
      "GET /api/v1/pipelines/": [PIPELINE],
      "POST /api/v1/evaluations/": (body) => {
        sent.push(body as EvaluationInput);
        if (sent.length === 1) {
          return jsonResponse({
            errors: [
              { path: "presets[1]", message: "the index of 'semantic' cannot be built", code: "unavailable" },
              { path: "pipelines[0]", message: "no such pipeline", code: "not_found" },
              { path: "query_limit", message: "Ensure this value is greater than or equal to 1.", code: "min_value" },
            ],
          }, 400);
        }
        return jsonResponse(listed(evaluation({ id: 12, status: "queued" })), 201);
      },
    });
    renderWithProviders(<EvaluationPage />);
    fireEvent.click(await screen.findByRole("button", { name: "Evaluate Cranfield head" }));
    const dialog = screen.getByRole("dialog", { name: "New evaluation" });
    expect(within(dialog).getByLabelText("Dataset")).toHaveValue("3");
    expect(within(dialog).getByRole("option", { name: "SciFact (Indexing)" })).toBeDisabled();
    expect(await within(dialog).findByRole("checkbox", { name: /Hybrid \+ cross-encoder/ })).toBeDisabled();
    expect(within(dialog).getByText("no local copy of the cross-encoder")).toBeInTheDocument();
    expect(within(dialog).getByText("Empty: all 24 queries of the dataset.")).toBeInTheDocument();

    // Empty depth, as its hint says: each retriever at its own top_k (sent as null).
    expect(within(dialog).getByLabelText("Depth")).toHaveValue(null);
    fireEvent.click(within(dialog).getByRole("checkbox", { name: /^Keyword/ }));
    fireEvent.click(within(dialog).getByRole("checkbox", { name: /^Semantic/ }));
    fireEvent.click(within(dialog).getByRole("checkbox", { name: /^BM25 k1 1\.2/ }));
    fireEvent.change(within(dialog).getByLabelText("Queries to run"), { target: { value: "0" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Start evaluation" }));

    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toEqual({ dataset: 3, pipelines: [4], presets: ["keyword", "semantic"], query_limit: 0, depth: null, answer_queries: 0, judge: null, seed: 0 });
    const semantic = within(dialog).getByRole("checkbox", { name: /^Semantic/ });
    expect(await within(dialog).findByText("the index of 'semantic' cannot be built")).toBeInTheDocument();
    expect(semantic).toHaveAttribute("aria-invalid", "true");
    expect(semantic.closest(".choice-option")).toHaveTextContent("the index of 'semantic' cannot be built");
    expect(within(dialog).getByRole("checkbox", { name: /^Keyword/ }).closest(".choice-option")).not.toHaveTextContent("cannot be built");
    expect(within(dialog).getByRole("checkbox", { name: /^BM25 k1 1\.2/ }).closest(".choice-option")).toHaveTextContent("no such pipeline");
    expect(within(dialog).getByLabelText("Queries to run").closest(".field")).toHaveTextContent("Ensure this value is greater than or equal to 1.");

    fireEvent.click(semantic);
    fireEvent.click(within(dialog).getByRole("checkbox", { name: /^BM25 k1 1\.2/ }));
    fireEvent.change(within(dialog).getByLabelText("Queries to run"), { target: { value: "" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Start evaluation" }));
    await waitFor(() => expect(window.location.pathname).toBe("/evaluation/12"));
    expect(sent[1]).toMatchObject({ presets: ["keyword"], pipelines: [], query_limit: null });
    expect(screen.getByText("Evaluation 12 started.")).toBeInTheDocument();
  });

  it("deletes a dataset, with its evaluations, after asking", async () => {
    let deleted = false;
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": [dataset()],
      "GET /api/v1/evaluations/": [listed(finished())],
      "DELETE /api/v1/evaluations/datasets/3/": () => {
        deleted = true;
        return new Response(null, { status: 204 });
      },
    });
    renderWithProviders(<EvaluationPage />);
    fireEvent.click(await screen.findByRole("button", { name: "Delete Cranfield head" }));
    const dialog = screen.getByRole("dialog", { name: "Delete this dataset?" });
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(deleted).toBe(false);

    fireEvent.click(screen.getByRole("button", { name: "Delete Cranfield head" }));
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete" }));
    expect(await screen.findByText("No datasets yet")).toBeInTheDocument();
    expect(deleted).toBe(true);
    expect(screen.getByText("No evaluations yet")).toBeInTheDocument();
  });

  it("promotes a dataset's corpus to a knowledge base after asking, then says it is one", async () => {
    let promoted = 0;
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": [dataset()],
      "GET /api/v1/evaluations/": [],
      "POST /api/v1/evaluations/datasets/3/promote/": () => {
        promoted += 1;
        return jsonResponse(dataset({ promoted: true }));
      },
    });
    renderWithProviders(<EvaluationPage />);
    const promote = await screen.findByRole("button", { name: "Use the corpus of Cranfield head as an ordinary knowledge base" });
    expect(within(row("Cranfield head")).queryByRole("link", { name: "Knowledge base" })).not.toBeInTheDocument();
    fireEvent.click(promote);
    const dialog = screen.getByRole("dialog", { name: "Use this corpus as a knowledge base?" });
    expect(dialog).toHaveTextContent("offered to pipelines and searchable as an MCP tool");
    fireEvent.click(within(dialog).getByRole("button", { name: "Use as knowledge base" }));
    expect(await screen.findByText("“Cranfield head” is now one of your knowledge bases.")).toBeInTheDocument();
    expect(promoted).toBe(1);
    const head = row("Cranfield head");
    expect(within(head).getByRole("link", { name: "Knowledge base" })).toHaveAttribute("href", "/knowledge-bases/11");
    expect(within(head).queryByRole("button", { name: /as an ordinary knowledge base/ })).not.toBeInTheDocument();
    // Deleting it now says its knowledge base stays.
    fireEvent.click(within(head).getByRole("button", { name: "Delete Cranfield head" }));
    expect(screen.getByRole("dialog", { name: "Delete this dataset?" })).toHaveTextContent("Its knowledge base stays with your others.");
  });

  it.each([
    ["en", "20 queries × 2 pipelines: 40 of 40 runs", "(20 queries + 5 answers) × 2 pipelines: 12 of 50 steps", "1 query × 1 pipeline: 0 of 1 runs"],
    ["es", "20 consultas × 2 pipelines: 40 de 40 ejecuciones", "(20 consultas + 5 respuestas) × 2 pipelines: 12 de 50 pasos", "1 consulta × 1 pipeline: 0 de 1 ejecuciones"],
    ["zh-Hant", "20 筆查詢 × 2 個流程：已完成 40 / 40 次執行", "（20 筆查詢 + 5 個回答）× 2 個流程：已完成 12 / 50 步", "1 筆查詢 × 1 個流程：已完成 0 / 1 次執行"],
  ])("reads progress as queries × pipelines in %s", async (language, retrieval, answered, single) => {
    await i18n.changeLanguage(language);
    const two = evaluation().pipelines;
    const t = i18n.t.bind(i18n);
    expect(progressText(t, { pipelines: two, progress: { done: 40, total: 40, queries: 20, answers: 0 } })).toBe(retrieval);
    expect(progressText(t, { pipelines: two, progress: { done: 12, total: 50, queries: 20, answers: 5 } })).toBe(answered);
    expect(progressText(t, { pipelines: two.slice(0, 1), progress: { done: 0, total: 1, queries: 1, answers: 0 } })).toBe(single);
  });

  it("speaks the interface language", async () => {
    await i18n.changeLanguage("zh-Hant");
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/evaluations/datasets/": [dataset()],
      "GET /api/v1/evaluations/": [listed(finished())],
    });
    renderWithProviders(<EvaluationPage />);
    expect(await screen.findByRole("heading", { level: 1, name: "評估" })).toBeInTheDocument();
    // The heading comes before the datasets' request has answered.
    const head = await waitFor(() => row("Cranfield head"));
    expect(within(head).getByText("24 筆查詢")).toBeInTheDocument();
    expect(within(head).getByText("英文")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "評估 7 · Cranfield head" })).toBeInTheDocument();
  });
});
