import { describe, expect, it } from "vitest";

import { formatG, placeholders, render, type Vocabulary } from "./representation";

// The same cases as tests/unit/rag/core/test_representation.py.
const CONFIG = {
  component: "Semantic",
  params: {
    top_k: 7,
    threshold: 0.25,
    enabled: true,
    encoder: { component: "Encoder", params: { batch_size: 16 } },
    children: [
      { component: "Keyword", params: { name: "kw" } },
      { component: "Semantic", params: {} },
    ],
  },
};

/** Names components in lower case and labels `mode` values. */
const WORDS: Vocabulary = {
  listSeparator: "; ",
  name: (component) => component.toLowerCase(),
  label: (component, param, value) => (component === "Semantic" && param === "mode" && value === "fast" ? "Fast!" : undefined),
};

describe("render", () => {
  it.each([
    ["top {top_k}", "top 7"],
    ["{encoder.component} · bs {encoder.batch_size}", "Encoder · bs 16"],
    ["{encoder.params.batch_size}", "16"],
    ["{component}", "Semantic"],
    ["t={threshold} on={enabled}", "t=0.25 on=true"],
    ["of {children}", "of Keyword, Semantic"],
    ["{children.1.component}", "Semantic"],
    ["{children.name}", "kw"],
    ["{{literal}} {top_k}", "{literal} 7"],
  ])("resolves %s against the config", (template, expected) => {
    expect(render(template, CONFIG)).toBe(expected);
  });

  it.each([
    ["Semantic · {missing} · top {top_k}", "Semantic · top 7"],
    ["Semantic · {encoder.nothing}", "Semantic"],
    ["{top_k.deeper} · top {top_k}", "top 7"],
    ["Semantic · {} · top {top_k}", "Semantic · top 7"],
    ["{children.9.component} · top {top_k}", "top 7"],
    ["{missing}", ""],
  ])("leaves out the whole segment of %s, which has nothing to show", (template, expected) => {
    expect(render(template, CONFIG)).toBe(expected);
  });

  it.each([
    [{ children: [], rounds: 3 }, "Agentic · rounds ≤ 3"],
    [{ children: [{ component: "Keyword" }], rounds: 3 }, "Agentic · Keyword · rounds ≤ 3"],
    [{ children: [], rounds: null }, "Agentic"],
    [{ retriever: null, llm: { component: "Local" } }, "Agentic · Local"],
    [{ note: "  ", rounds: 2 }, "Agentic · rounds ≤ 2"],
  ])("reads well at every stage of building: %j", (params, expected) => {
    const template = "Agentic · {children} · {retriever.component} → {llm.component} · {note} · rounds ≤ {rounds}";
    expect(render(template, { component: "Agentic", params })).toBe(expected);
  });

  it("keeps the separator before a dropped segment", () => {
    const config = { component: "Naive", params: { retriever: null, llm: { component: "Local" } } };
    expect(render("Naive · {retriever.component} → {llm.component}", config)).toBe("Naive · Local");
  });

  it("names nested components and labels values through the vocabulary", () => {
    const config = { ...CONFIG, params: { ...CONFIG.params, mode: "fast" } };
    expect(render("{encoder.component} · {children} · {mode} · {component}", config, WORDS)).toBe("encoder · keyword; semantic · Fast! · semantic");
    const branches = [{ component: "B", params: { name: "a" } }, { component: "B", params: { name: "b" } }];
    expect(render("{children.name}", { component: "X", params: { children: branches } }, WORDS)).toBe("a; b");
  });

  it("shows a long list's first items and how many more", () => {
    const children = [0, 1, 2, 3, 4].map((n) => ({ component: `C${n}` }));
    expect(render("{children}", { component: "X", params: { children } })).toBe("C0, C1, C2 +2");
  });

  it("leaves unbalanced braces as text", () => {
    expect(render("top {top_k", CONFIG)).toBe("top {top_k");
  });

  it("lets a fallback text stand in for an unset value or nested component", () => {
    const config = { component: "Dense", params: { top_k: 3, embedding_model: null as unknown, note: null } };
    expect(render("{embedding_model.component|KB model} · {note|none} · {top_k|?}", config)).toBe("KB model · none · 3");
    config.params.embedding_model = { component: "Encoder", params: {} };
    expect(render("{embedding_model.component|KB model}", config)).toBe("Encoder");
  });

  it("formats mappings and floats as the server does", () => {
    const config = { component: "X", params: { map: { a: 1, b: false }, tiny: 0.00001, whole: 1.5e7 } };
    expect(render("{map} {tiny} {whole}", config)).toBe("a=1, b=false 1e-05 15000000");
  });
});

describe("placeholders", () => {
  it("lists paths in order, without fallbacks or literal braces", () => {
    expect(placeholders("{a} and {b.c} {{x}}")).toEqual(["a", "b.c"]);
    expect(placeholders("{embedding_model.component|KB model}")).toEqual(["embedding_model.component"]);
  });
});

describe("formatG", () => {
  it.each([
    [0.25, "0.25"],
    [1.5, "1.5"],
    [0.1 + 0.2, "0.3"],
    [123456.7, "123457"],
    [1234567.8, "1.23457e+06"],
    [0.0001, "0.0001"],
    [0.00001234, "1.234e-05"],
    [-2.5, "-2.5"],
  ])("formats %s like Python's %%g", (value, expected) => {
    expect(formatG(value)).toBe(expected);
  });
});
