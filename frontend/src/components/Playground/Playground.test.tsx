import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { PlaygroundResult } from "../../api/playground";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { Playground } from "./Playground";

const URL = "POST /api/v1/knowledge-bases/4/playground/";
const BM25 = { component: "BM25Retriever", params: { top_k: 3 } };

const bm25Answer: PlaygroundResult = {
  score_scale: "bm25",
  elapsed_ms: 1.8,
  trace: { id: "n1", class: "BM25Retriever", params: {}, query: "rust memory", top_k: 3, elapsed_ms: 1.8, results: [], children: [], rounds: [], error: null },
  results: [{
    rank: 1, chunk_id: 12, document_id: 3, document_name: "rust.txt", position: 0, page: 2,
    text: "Rust guarantees memory safety without a garbage collector.", score: 5.25,
    explanation: { terms: [
      { term: "rust", query_count: 1, term_frequency: 2, idf: 1.5, contribution: 3.0 },
      { term: "memori", query_count: 1, term_frequency: 1, idf: 1.25, contribution: 2.25 },
      { term: "zebra", query_count: 1, term_frequency: 0, idf: 0, contribution: 0 },
    ] },
  }],
};

function ask(question: string) {
  fireEvent.change(screen.getByRole("textbox"), { target: { value: question } });
  fireEvent.click(screen.getByRole("button", { name: "Try" }));
}

describe("Playground", () => {
  it("shows each hit with its score on a named scale, and BM25's terms adding up to it", async () => {
    const requests: unknown[] = [];
    mockApi({ ...catalogRoutes(), [URL]: (body) => (requests.push(body), jsonResponse(bm25Answer)) });
    renderWithProviders(<Playground knowledgeBaseId={4} retriever={BM25} />);
    ask("rust memory");

    const hit = (await screen.findByText("rust.txt")).closest("li")!;
    expect(requests).toEqual([{ question: "rust memory", retriever: BM25, allow_llm: false }]);
    expect(screen.getByTestId("playground-summary")).toHaveTextContent("1 result in 2 ms · scores are BM25 score");
    expect(within(hit).getByText("rust.txt")).toBeInTheDocument();
    expect(within(hit).getByText(/position 0, page 2/)).toBeInTheDocument();
    expect(within(hit).getByTestId("hit-score")).toHaveTextContent("BM25 score 5.25");
    fireEvent.click(within(hit).getByText("Why here?"));
    const rows = within(hit).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("rust121.53");
    expect(within(hit).getByTestId("terms-total")).toHaveTextContent("5.25");
  });

  it("names each fused child, its rank and what it added", async () => {
    mockApi({
      ...catalogRoutes(),
      [URL]: {
        ...bm25Answer,
        score_scale: "weighted",
        results: [{ ...bm25Answer.results[0]!, score: 1.5, explanation: { sources: [
          { child: 0, component: "BM25Retriever", score_scale: "bm25", rank: 2, score: 4.0, normalised: 0.5, weight: 1, contribution: 0.5 },
          { child: 1, component: "DenseEmbeddingRetriever", score_scale: "cosine", rank: 1, score: 0.82, normalised: 1, weight: 1, contribution: 1 },
        ] } }],
      },
    });
    renderWithProviders(<Playground knowledgeBaseId={4} />);
    ask("rust");
    const hit = (await screen.findByText("rust.txt")).closest("li")!;
    expect(within(hit).getByTestId("hit-score")).toHaveTextContent("fused score 1.5");
    fireEvent.click(within(hit).getByText("Why here?"));
    expect(within(hit).getByText(/ranked it #2 \(BM25 score 4, normalised 0\.5\) × weight 1, adding 0\.5/)).toBeInTheDocument();
    expect(within(hit).getByText(/ranked it #1 \(cosine similarity 0\.82, normalised 1\) × weight 1, adding 1/)).toBeInTheDocument();
  });

  it("asks before running a tree that calls a language model, and runs it only when told", async () => {
    const allowed: boolean[] = [];
    mockApi({
      ...catalogRoutes(),
      [URL]: (body) => {
        const { allow_llm } = body as { allow_llm: boolean };
        allowed.push(allow_llm);
        if (!allow_llm) {
          return jsonResponse({ errors: [{ path: "allow_llm", message: "calls a model", code: "llm_consent" }],
            language_models: [{ path: "retriever.params.llm_model", component: "LocalLLM" }] }, 409);
        }
        return jsonResponse(bm25Answer);
      },
    });
    renderWithProviders(<Playground knowledgeBaseId={4} retriever={{ component: "LLMRerankRetriever", params: {} }} />);
    ask("rust");
    const question = await screen.findByRole("alertdialog", { name: "This retriever calls a language model" });
    expect(question).toHaveTextContent("Trying it calls Local model: it takes time");
    expect(allowed).toEqual([false]);
    fireEvent.click(within(question).getByRole("button", { name: "Run it" }));
    await screen.findByText("rust.txt");
    expect(allowed).toEqual([false, true]);
  });

  it("says when the tree changed after the run, and reads in Spanish", async () => {
    await i18n.changeLanguage("es");
    mockApi({ ...catalogRoutes(), [URL]: bm25Answer });
    const view = renderWithProviders(<Playground knowledgeBaseId={4} retriever={BM25} />);
    fireEvent.change(screen.getByRole("textbox"), { target: { value: "rust" } });
    fireEvent.click(screen.getByRole("button", { name: "Probar" }));
    await waitFor(() => expect(screen.getByTestId("playground-summary")).toHaveTextContent("las puntuaciones son puntuación BM25"));
    expect(screen.queryByText("El árbol cambió desde esta prueba")).not.toBeInTheDocument();
    view.rerender(<Playground knowledgeBaseId={4} retriever={{ ...BM25, params: { top_k: 5 } }} />);
    expect(screen.getByText("El árbol cambió desde esta prueba")).toBeInTheDocument();
  });
});
