import type { RJSFSchema } from "@rjsf/utils";
import { describe, expect, it } from "vitest";

import type { CatalogComponent, ComponentRef } from "../../api/components";
import {
  canAddChild,
  componentNames,
  fillMissingComponents,
  getNode,
  insertChild,
  locate,
  moveNode,
  needsMoreChildren,
  removeNode,
  slotsOf,
  treeKinds,
  unwrapNode,
  wrapNode,
} from "./tree";

const bm25: ComponentRef = { component: "BM25Retriever", params: { top_k: 20 } };
const dense: ComponentRef = { component: "DenseEmbeddingRetriever", params: { top_k: 20 } };
const fusion: ComponentRef = { component: "EnsembleRetriever", params: { fusion: "rrf", children: [bm25, dense] } };
const strategy: ComponentRef = { component: "NaiveRAG", params: { retriever: fusion } };

const FUSION_PATH = "params.retriever";
const BM25_PATH = "params.retriever.params.children[0]";
const DENSE_PATH = "params.retriever.params.children[1]";

const component = (overrides: Partial<CatalogComponent>): CatalogComponent => ({
  name: "X", kind: "retriever", category: "", icon: "", display_name: "", short_name: "", description: "", representation: null,
  value_labels: {}, composite: false, child_kind: null, min_children: null, max_children: null, slots: {}, available: true, ...overrides,
});

describe("treeKinds and slotsOf", () => {
  const kinds = treeKinds([
    component({ name: "EnsembleRetriever", composite: true, child_kind: "retriever" }),
    component({ name: "LocalLLM", kind: "llm" }),
  ]);

  it("draws strategies and the kinds composites are made of", () => {
    expect([...kinds].sort()).toEqual(["retriever", "strategy"]);
  });

  it("takes children lists and tree-kind slots, leaving models to the form", () => {
    const schema = {
      properties: {
        retriever: { type: "object", title: "Retriever", "x-component-kind": "retriever", "x-component-multiple": false },
        llm: { type: "object", title: "LLM", "x-component-kind": "llm", "x-component-multiple": false },
        children: { type: "array", title: "Children", minItems: 1, maxItems: 1, "x-component-kind": "retriever", "x-component-multiple": true },
        reranker: { anyOf: [{ type: "object" }, { type: "null" }], title: "Re-ranker", "x-component-kind": "retriever", "x-component-multiple": false },
        top_k: { type: "integer" },
      },
    } as RJSFSchema;
    expect(slotsOf(schema, kinds)).toEqual([
      { name: "retriever", kind: "retriever", title: "Retriever", multiple: false, nullable: false, min: null, max: null },
      { name: "children", kind: "retriever", title: "Children", multiple: true, nullable: false, min: 1, max: 1 },
      { name: "reranker", kind: "retriever", title: "Re-ranker", multiple: false, nullable: true, min: null, max: null },
    ]);
  });
});

describe("tree operations", () => {
  it("locates nodes by the server's paths", () => {
    expect(getNode(strategy, BM25_PATH)).toBe(bm25);
    expect(locate(DENSE_PATH)).toEqual({ parent: FUSION_PATH, slot: "children", index: 1 });
    expect(locate(FUSION_PATH)).toEqual({ parent: "", slot: "retriever", index: null });
    expect(locate("")).toBeNull();
  });

  it("adds, moves and removes children without touching the original", () => {
    const added = insertChild(strategy, FUSION_PATH, "children", { component: "BM25Retriever", params: { top_k: 5 } });
    expect(added.path).toBe("params.retriever.params.children[2]");
    expect(getNode(added.tree, added.path)?.params?.top_k).toBe(5);

    const moved = moveNode(added.tree, added.path, 0);
    expect(moved.path).toBe(BM25_PATH);
    expect(getNode(moved.tree, BM25_PATH)?.params?.top_k).toBe(5);
    expect(getNode(moved.tree, DENSE_PATH)).toEqual(bm25);

    const removed = removeNode(moved.tree, BM25_PATH);
    expect(getNode(removed, FUSION_PATH)).toEqual(fusion);
    expect(strategy.params!.retriever).toBe(fusion);
  });

  it("empties a one-component slot on removal", () => {
    expect(removeNode(strategy, FUSION_PATH).params!.retriever).toBeNull();
  });

  it("wraps a node in a composite, making it the only child", () => {
    const wrapped = wrapNode(strategy, FUSION_PATH, { component: "CrossEncoder", params: { top_k: 5 } }, "children");
    expect(getNode(wrapped, FUSION_PATH)).toEqual({ component: "CrossEncoder", params: { top_k: 5, children: [fusion] } });
    expect(getNode(wrapped, "params.retriever.params.children[0].params.children[1]")).toEqual(dense);
  });

  it("unwraps a composite into its parent's list, or into a slot when it has one child", () => {
    const nested = insertChild(strategy, FUSION_PATH, "children", { component: "EnsembleRetriever", params: { children: [bm25, dense] } });
    const spliced = unwrapNode(nested.tree, nested.path, "children")!;
    expect(getNode(spliced, FUSION_PATH)?.params?.children).toEqual([bm25, dense, bm25, dense]);

    expect(unwrapNode(strategy, FUSION_PATH, "children")).toBeNull();
    const single = wrapNode(strategy, FUSION_PATH, { component: "CrossEncoder", params: {} }, "children");
    expect(getNode(unwrapNode(single, FUSION_PATH, "children")!, FUSION_PATH)).toEqual(fusion);
  });

  it("enforces child limits: exactly one for a cross-encoder, at least two for a fusion", () => {
    const exactlyOne = { name: "children", kind: "retriever", title: "", multiple: true, nullable: false, min: 1, max: 1 };
    const atLeastTwo = { ...exactlyOne, min: 2, max: null };
    expect(canAddChild(exactlyOne, 0)).toBe(true);
    expect(canAddChild(exactlyOne, 1)).toBe(false);
    expect(needsMoreChildren(exactlyOne, 0)).toBe(true);
    expect(canAddChild(atLeastTwo, 5)).toBe(true);
    expect(needsMoreChildren(atLeastTwo, 1)).toBe(true);
    expect(needsMoreChildren(atLeastTwo, 2)).toBe(false);
  });

  it("lists every component the tree references", () => {
    expect([...componentNames(strategy)].sort()).toEqual(["BM25Retriever", "DenseEmbeddingRetriever", "EnsembleRetriever", "NaiveRAG"]);
  });

  it("fills only the components the server added, and returns the same tree when none is missing", () => {
    const synthesizer = { component: "ResponseSynthesizer", params: { llm: { component: "LocalLLM", params: {} } } };
    const normalised = {
      component: "NaiveRAG",
      params: { retriever: { ...fusion, params: { ...fusion.params, top_k: 10 } }, response_synthesizer: synthesizer, top_k: null },
    };
    const filled = fillMissingComponents(strategy, normalised) as ComponentRef;
    expect(filled.params).toEqual({ retriever: fusion, response_synthesizer: synthesizer });
    expect(fillMissingComponents(filled, normalised)).toBe(filled);
  });
});
