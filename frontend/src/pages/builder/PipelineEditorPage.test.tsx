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
  representation: "Naive · EnsembleRetriever", ready: true, waiting_for: [], strategy: STRATEGY,
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

const valid = (tree: ComponentRef) => jsonResponse({ valid: true, config: tree, errors: [], nodes: [] });

describe("PipelineEditorPage", () => {
  it("puts a refused save's errors on the exact field of the right node, then saves once fixed", async () => {
    let saves = 0;
    const denseTopK = (strategy: ComponentRef) =>
      ((strategy.params!.retriever as ComponentRef).params!.children as ComponentRef[])[1]!.params!.top_k;
    // The live check agrees with the save, as the server's two answers do.
    const check = (tree: ComponentRef) =>
      denseTopK(tree) === 0
        ? jsonResponse({ valid: false, config: null, nodes: [], errors: [{ path: DENSE_TOP_K.replace("strategy.", ""), message: "must be ≥ 1", code: "greater_than_equal" }] })
        : valid(tree);
    setup(check, (body) => {
      saves++;
      const strategy = body.strategy as ComponentRef;
      if (denseTopK(strategy) === 0) {
        return jsonResponse({ errors: [{ path: DENSE_TOP_K, message: "must be ≥ 1", code: "greater_than_equal" }] }, 400);
      }
      return jsonResponse({ ...PIPELINE, strategy });
    });

    fireEvent.click(await screen.findByRole("button", { name: /^Dense semantic retriever/ }));
    const topK = await screen.findByLabelText("Results");
    fireEvent.change(topK, { target: { value: "0" } });
    expect(screen.getByText("Unsaved changes")).toBeInTheDocument();
    // The builder checks as you type; the server's verdict would land here too.
    expect(within(topK.closest<HTMLElement>(".form-field")!).getByText("must be ≥ 1")).toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("Not saved: 1 problem to fix first.")).toBeInTheDocument();
    await waitFor(() => expect(card("Dense semantic retriever")).toHaveClass("is-invalid"));
    expect(card("BM25 keyword retriever")).not.toHaveClass("is-invalid");

    fireEvent.change(screen.getByLabelText("Results"), { target: { value: "5" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("“Hybrid” saved.")).toBeInTheDocument();
    expect(saves).toBe(2);
    expect(screen.queryByText("Unsaved changes")).not.toBeInTheDocument();
    expect(within(card("Dense semantic retriever")).getByText("Dense · knowledge base model · top 5")).toBeInTheDocument();
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
