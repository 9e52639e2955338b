import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

import type { ComponentRef } from "../../api/components";
import type { Pipeline } from "../../api/pipelines";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { PipelineEditorPage } from "./PipelineEditorPage";

const STRATEGY: ComponentRef = {
  component: "NaiveRAG",
  params: {
    retriever: {
      component: "EnsembleRetriever",
      params: {
        fusion: "rrf",
        top_k: 10,
        children: [
          { component: "BM25Retriever", params: { top_k: 20, k1: 1.5 } },
          { component: "DenseEmbeddingRetriever", params: { top_k: 20, embedding_model: null } },
        ],
      },
    },
    response_synthesizer: { component: "ResponseSynthesizer", params: { llm: { component: "LocalLLM", params: { temperature: 0 } }, max_input_tokens: 3000 } },
    top_k: null,
  },
};

const PIPELINE: Pipeline = {
  id: 5, name: "Hybrid", description: "", knowledge_base: 1, knowledge_base_name: "Science notes",
  representation: "Naive · EnsembleRetriever", ready: true, waiting_for: [], documents_reading: 0, strategy: STRATEGY,
  created_at: "2025-01-01T00:00:00Z", updated_at: "2025-01-01T00:00:00Z",
};

const KNOWLEDGE_BASES = [{ id: 1, name: "Science notes" }];
const DENSE_TOP_K = "strategy.params.retriever.params.children[1].params.top_k";

afterEach(() => window.history.pushState(null, "", "/"));

const card = (name: string) => screen.getByRole("button", { name: new RegExp(`^${name}`) }).closest<HTMLElement>(".tree-card")!;

function setup(validate: (tree: ComponentRef) => Response, save: (body: Record<string, unknown>) => Response) {
  window.history.pushState(null, "", "/pipelines/5");
  const api = mockApi({
    ...catalogRoutes(),
    "GET /api/v1/knowledge-bases/": KNOWLEDGE_BASES,
    "GET /api/v1/pipelines/5/": PIPELINE,
    "POST /api/v1/components/validate/": (body) => validate((body as { tree: ComponentRef }).tree),
    "PATCH /api/v1/pipelines/5/": (body) => save(body as Record<string, unknown>),
  });
  renderWithProviders(<PipelineEditorPage id={5} />);
  return api;
}

const denseTopK = (strategy: ComponentRef) =>
  ((strategy.params!.retriever as ComponentRef).params!.children as ComponentRef[])[1]!.params!.top_k;

/** The requests `fetch` was asked to send with this method. */
const requests = (api: ReturnType<typeof mockApi>, method: string) =>
  api.mock.calls.filter(([, init]) => (init?.method ?? "GET").toUpperCase() === method);

const valid = (tree: ComponentRef) => jsonResponse({ valid: true, config: tree, errors: [], nodes: [] });

describe("PipelineEditorPage", () => {
  it("does not send a tree the live check refused: lists each problem with its path and focuses its component", async () => {
    const check = (tree: ComponentRef) =>
      denseTopK(tree) === 0
        ? jsonResponse({ valid: false, config: null, nodes: [], errors: [{ path: DENSE_TOP_K.replace("strategy.", ""), message: "must be ≥ 1", code: "greater_than_equal" }] })
        : valid(tree);
    const api = setup(check, (body) => jsonResponse({ ...PIPELINE, strategy: body.strategy as ComponentRef }));

    fireEvent.click(await screen.findByRole("button", { name: /^Dense semantic retriever/ }));
    const topK = await screen.findByLabelText("Results");
    fireEvent.change(topK, { target: { value: "0" } });
    expect(screen.getByText("Unsaved changes")).toBeInTheDocument();
    expect(within(topK.closest<HTMLElement>(".form-field")!).getByText("must be ≥ 1")).toBeInTheDocument();
    // The live check has answered about the tree as it is now.
    await screen.findByText("1 problem", { selector: ".editor__status *" });
    fireEvent.click(screen.getByRole("button", { name: /^BM25 keyword retriever/ }));

    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("Not saved: 1 problem to fix first.")).toBeInTheDocument();
    const problems = screen.getByText("Fix this problem to save:").closest<HTMLElement>("[role=alert]")!;
    expect(within(problems).getByText(DENSE_TOP_K)).toBeInTheDocument();
    expect(problems).toHaveTextContent(`${DENSE_TOP_K} must be ≥ 1`);
    // The first problem's component is selected, highlighted and focused.
    const dense = card("Dense semantic retriever");
    expect(dense).toHaveClass("is-invalid");
    expect(dense).toHaveClass("is-selected");
    expect(document.activeElement).toBe(within(dense).getByRole("button", { name: /^Dense semantic retriever/ }));
    expect(card("BM25 keyword retriever")).not.toHaveClass("is-invalid");
    expect(requests(api, "PATCH")).toHaveLength(0);

    fireEvent.change(screen.getByLabelText("Results"), { target: { value: "5" } });
    await screen.findByText("Valid");
    expect(screen.queryByText("Fix this problem to save:")).not.toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("“Hybrid” saved.")).toBeInTheDocument();
    expect(requests(api, "PATCH")).toHaveLength(1);
    expect(screen.queryByText("Unsaved changes")).not.toBeInTheDocument();
    expect(within(card("Dense semantic retriever")).getByText("Dense · knowledge base model · top 5")).toBeInTheDocument();
  });

  it("puts a save the server refuses on the right node, and the next successful save takes the 'Not saved' toast away", async () => {
    let saves = 0;
    // The live check finds nothing; only the save does (as a rule checked on save would).
    const api = setup(valid, (body) => {
      saves++;
      const strategy = body.strategy as ComponentRef;
      if (saves === 1) return jsonResponse({ errors: [{ path: DENSE_TOP_K, message: "is too large for this knowledge base", code: "too_large" }] }, 400);
      return jsonResponse({ ...PIPELINE, strategy });
    });

    fireEvent.click(await screen.findByRole("button", { name: /^Dense semantic retriever/ }));
    fireEvent.change(await screen.findByLabelText("Results"), { target: { value: "50" } });
    await screen.findByText("Valid");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("Not saved: 1 problem to fix first.")).toBeInTheDocument();
    await waitFor(() => expect(card("Dense semantic retriever")).toHaveClass("is-invalid"));
    expect(screen.getByText("Fix this problem to save:").closest("[role=alert]")).toHaveTextContent(`${DENSE_TOP_K} is too large for this knowledge base`);

    fireEvent.change(screen.getByLabelText("Results"), { target: { value: "5" } });
    await screen.findByText("Valid");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("“Hybrid” saved.")).toBeInTheDocument();
    expect(screen.queryByText("Not saved: 1 problem to fix first.")).not.toBeInTheDocument();
    expect(screen.queryByText("Fix this problem to save:")).not.toBeInTheDocument();
    expect(requests(api, "PATCH")).toHaveLength(2);
  });

  it("shows what the server's live check finds on the node it concerns", async () => {
    setup(
      () => jsonResponse({ valid: false, config: null, errors: [{ path: "params.retriever.params.children[0].component", message: "has no local copy", code: "unavailable" }], nodes: [] }),
      () => jsonResponse(PIPELINE),
    );
    expect(await within(await screen.findByRole("list", { name: "Pipeline components" })).findByText("has no local copy")).toBeInTheDocument();
    expect(card("BM25 keyword retriever")).toHaveClass("is-invalid");
    expect(screen.getByText("1 problem", { selector: ".editor__status *" })).toBeInTheDocument();
  });

  it("asks before leaving with unsaved changes", async () => {
    setup(valid, () => jsonResponse(PIPELINE));
    fireEvent.change(await screen.findByLabelText("Pipeline name"), { target: { value: "Renamed" } });

    fireEvent.click(screen.getByRole("link", { name: "Pipelines" }));
    const dialog = await screen.findByRole("dialog", { name: "Leave without saving?" });
    fireEvent.click(within(dialog).getByRole("button", { name: "Stay" }));
    expect(window.location.pathname).toBe("/pipelines/5");

    fireEvent.click(screen.getByRole("link", { name: "Pipelines" }));
    fireEvent.click(within(await screen.findByRole("dialog")).getByRole("button", { name: "Leave without saving" }));
    await waitFor(() => expect(window.location.pathname).toBe("/pipelines"));
  });

  it("fills in the components the server's defaults add, without counting them as changes", async () => {
    const bare = { ...STRATEGY, params: { retriever: STRATEGY.params!.retriever } };
    window.history.pushState(null, "", "/pipelines/5");
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/knowledge-bases/": KNOWLEDGE_BASES,
      "GET /api/v1/pipelines/5/": { ...PIPELINE, strategy: bare },
      "POST /api/v1/components/validate/": () => jsonResponse({ valid: true, config: STRATEGY, errors: [], nodes: [] }),
    });
    renderWithProviders(<PipelineEditorPage id={5} />);
    await screen.findByText("Valid");
    await waitFor(() => expect(screen.getByLabelText("Response synthesizer")).toHaveValue("ResponseSynthesizer"));
    expect(screen.queryByText("Unsaved changes")).not.toBeInTheDocument();
  });

  it("keeps offering the evaluation corpus a pipeline was built on, though the list leaves such corpora out", async () => {
    window.history.pushState(null, "", "/pipelines/5");
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/knowledge-bases/": KNOWLEDGE_BASES,
      "GET /api/v1/knowledge-bases/9/": { id: 9, name: "Evaluation · cranfield-small", evaluation_only: true },
      "GET /api/v1/pipelines/5/": { ...PIPELINE, knowledge_base: 9, knowledge_base_name: "Evaluation · cranfield-small" },
      "POST /api/v1/components/validate/": valid,
    });
    renderWithProviders(<PipelineEditorPage id={5} />);
    await screen.findByText("Valid");
    const picker = screen.getByLabelText<HTMLSelectElement>("Knowledge base");
    expect(picker).toHaveValue("9");
    expect(within(picker).getAllByRole("option").map((option) => option.textContent)).toEqual([
      "Science notes", "Evaluation · cranfield-small",
    ]);
    expect(screen.queryByText("Unsaved changes")).not.toBeInTheDocument();
  });
});
