import type { RJSFSchema } from "@rjsf/utils";

import type { CatalogComponent, ComponentDetail } from "../api/components";

/** A small catalog shaped like the server's: a strategy, retrievers, and the models they nest. */
const REF = {
  type: "object",
  additionalProperties: false,
  properties: { component: { type: "string" }, params: { type: "object", additionalProperties: true } },
  required: ["component"],
};

const entry = (overrides: Partial<CatalogComponent> & Pick<CatalogComponent, "name" | "kind">): CatalogComponent => ({
  category: overrides.kind,
  icon: "puzzle",
  display_name: overrides.name,
  short_name: overrides.short_name ?? overrides.display_name ?? overrides.name,
  description: `${overrides.name} description`,
  representation: null,
  value_labels: {},
  composite: false,
  child_kind: null,
  min_children: null,
  max_children: null,
  slots: {},
  available: true,
  ...overrides,
});

const TOP_K: RJSFSchema = { type: "integer", title: "Results", default: 10, minimum: 1, maximum: 1000, description: "How many chunks to return." };

export const DETAILS: Record<string, ComponentDetail> = {
  NaiveRAG: {
    ...entry({ name: "NaiveRAG", kind: "strategy", category: "strategies", display_name: "Naive RAG", slots: { retriever: "retriever", response_synthesizer: "synthesizer" }, representation: "Naive · {retriever.component}" }),
    schema: {
      type: "object",
      additionalProperties: false,
      properties: {
        retriever: { ...REF, title: "Retriever", "x-component-kind": "retriever", "x-component-multiple": false },
        response_synthesizer: { ...REF, title: "Response synthesizer", "x-component-kind": "synthesizer", "x-component-multiple": false },
        top_k: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }], default: null, title: "Chunks retrieved" },
      },
    } as ComponentDetail["schema"],
  },
  ResponseSynthesizer: {
    ...entry({ name: "ResponseSynthesizer", kind: "synthesizer", display_name: "Response synthesizer", slots: { llm: "llm" } }),
    schema: {
      type: "object",
      properties: {
        llm: { ...REF, title: "Language model", "x-component-kind": "llm", "x-component-multiple": false },
        max_input_tokens: { type: "integer", title: "Input budget", default: 3000, minimum: 200 },
      },
    } as ComponentDetail["schema"],
  },
  LocalLLM: {
    ...entry({ name: "LocalLLM", kind: "llm", category: "language models", display_name: "Local model" }),
    schema: { type: "object", properties: { temperature: { type: "number", title: "Temperature", default: 0, minimum: 0, maximum: 2 } } },
  },
  OpenAICompatibleLLM: {
    ...entry({ name: "OpenAICompatibleLLM", kind: "llm", category: "language models", display_name: "OpenAI-compatible chat model" }),
    schema: {
      type: "object",
      properties: {
        model: { type: "string", title: "Model", default: "gpt-4o-mini" },
        credential: { anyOf: [{ type: "string", minLength: 1 }, { type: "null" }], default: null, title: "Credential", "x-credential": true },
        api_key: { type: "string", title: "API key", writeOnly: true, format: "password" },
      },
    } as ComponentDetail["schema"],
  },
  BM25Retriever: {
    ...entry({ name: "BM25Retriever", kind: "retriever", category: "sparse", display_name: "BM25 keyword retriever", short_name: "BM25", representation: "BM25 · top {top_k} · k1={k1}" }),
    schema: { type: "object", additionalProperties: false, properties: { top_k: TOP_K, k1: { type: "number", title: "k1", default: 1.5, minimum: 0 } } },
  },
  DenseEmbeddingRetriever: {
    ...entry({ name: "DenseEmbeddingRetriever", kind: "retriever", category: "dense", display_name: "Dense semantic retriever", short_name: "Dense", slots: { embedding_model: "embedding" }, representation: "Dense · {embedding_model.component|knowledge base model} · top {top_k}" }),
    schema: {
      type: "object",
      properties: {
        top_k: TOP_K,
        embedding_model: { anyOf: [REF, { type: "null" }], default: null, title: "Embedding model", "x-component-kind": "embedding", "x-component-multiple": false },
      },
    } as ComponentDetail["schema"],
  },
  MiniLMEmbedding: {
    ...entry({ name: "MiniLMEmbedding", kind: "embedding", category: "embeddings", display_name: "MiniLM", representation: "MiniLM · batch {batch_size}" }),
    schema: { type: "object", properties: { batch_size: { type: "integer", title: "Batch size", default: 32, minimum: 1 } } },
  },
  EnsembleRetriever: {
    ...entry({ name: "EnsembleRetriever", kind: "retriever", category: "fusion", display_name: "Fusion (ensemble)", short_name: "Fusion", composite: true, child_kind: "retriever", min_children: 2, slots: { children: "retriever" }, representation: "Fusion · {fusion} · {children}", value_labels: { fusion: { rrf: "RRF", weighted: "weighted" } } }),
    schema: {
      type: "object",
      properties: {
        children: { type: "array", items: REF, minItems: 2, title: "Retrievers to fuse", "x-component-kind": "retriever", "x-component-multiple": true },
        fusion: { type: "string", enum: ["rrf", "weighted"], default: "rrf", title: "Fusion method", "x-enum-labels": { rrf: "RRF", weighted: "weighted" } },
        top_k: TOP_K,
      },
    } as ComponentDetail["schema"],
  },
  CrossEncoderRetriever: {
    ...entry({ name: "CrossEncoderRetriever", kind: "retriever", category: "re-ranking", display_name: "Cross-encoder re-ranker", composite: true, child_kind: "retriever", min_children: 1, max_children: 1, slots: { children: "retriever" }, representation: "Cross-encoder · {model_name} · keep {top_k}" }),
    schema: {
      type: "object",
      properties: {
        children: { type: "array", items: REF, minItems: 1, maxItems: 1, title: "Candidate retriever", "x-component-kind": "retriever", "x-component-multiple": true },
        model_name: { type: "string", title: "Model", default: "cross-encoder/ms-marco-MiniLM-L-6-v2", minLength: 1 },
        top_k: { ...TOP_K, default: 5 },
      },
    } as ComponentDetail["schema"],
  },
};

export const CATALOG: CatalogComponent[] = Object.values(DETAILS).map(({ schema: _, ...component }) => component);

/** The routes of the catalog API for `mockApi`. */
export function catalogRoutes() {
  return {
    "GET /api/v1/components/": CATALOG,
    ...Object.fromEntries(Object.entries(DETAILS).map(([name, detail]) => [`GET /api/v1/components/${name}/`, detail])),
  };
}
