import { describe, expect, it } from "vitest";

import type { ComponentRef } from "../../api/components";
import { editorReducer, initialState } from "./editorState";

const BM25 = { component: "BM25Retriever", params: { top_k: 10 } };
const DENSE = { component: "DenseEmbeddingRetriever", params: { top_k: 10 } };

function strategy(children: ComponentRef[]): ComponentRef {
  return { component: "NaiveRAG", params: { retriever: { component: "EnsembleRetriever", params: { fusion: "rrf", children } } } };
}

describe("editorReducer, a node's form", () => {
  it("is applied to the tree as it is now: children added after the form last rendered are kept", () => {
    let state = initialState({ name: "p", description: "", knowledgeBase: 1, strategy: strategy([BM25]) }, null);
    // A child is added to the fusion…
    state = editorReducer(state, { type: "restructure", strategy: strategy([BM25, DENSE]), select: "params.retriever" });
    // …then the fusion's form, rendered before, fills in a default with its older copy of the children.
    state = editorReducer(state, {
      type: "params", path: "params.retriever", slots: ["children"], nodes: [], edited: false,
      params: { fusion: "rrf", rrf_k: 60, children: [BM25] },
    });
    const fusion = (state.draft.strategy.params as { retriever: ComponentRef }).retriever;
    expect(fusion.params).toEqual({ fusion: "rrf", rrf_k: 60, children: [BM25, DENSE] });
  });

  it("is ignored when its node was removed meanwhile", () => {
    let state = initialState({ name: "p", description: "", knowledgeBase: 1, strategy: strategy([BM25, DENSE]) }, null);
    state = editorReducer(state, { type: "restructure", strategy: strategy([BM25]), select: "" });
    const before = state;
    state = editorReducer(state, {
      type: "params", path: "params.retriever.params.children[1]", slots: [], nodes: [], edited: true, params: { top_k: 3 },
    });
    expect(state).toBe(before);
  });
});
