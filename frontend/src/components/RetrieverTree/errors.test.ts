import { describe, expect, it } from "vitest";

import { placeErrors, sortNodeErrors } from "./errors";
import { formatPath, parsePath } from "./paths";

const NODES = [
  "",
  "params.retriever",
  "params.retriever.params.children[0]",
  "params.retriever.params.children[0].params.children[0]",
  "params.retriever.params.children[0].params.children[1]",
];

const error = (path: string, message = "must be ≥ 1", code = "greater_than_equal") => ({ path, message, code });

describe("paths", () => {
  it("parse and format the server's notation", () => {
    const path = "strategy.params.retriever.params.children[1].params.top_k";
    expect(parsePath(path)).toEqual(["strategy", "params", "retriever", "params", "children", 1, "params", "top_k"]);
    expect(formatPath(parsePath(path))).toBe(path);
    expect(parsePath("")).toEqual([]);
    expect(formatPath(["weights", 2])).toBe("weights[2]");
  });
});

describe("placeErrors", () => {
  it("puts a pipeline error on the deepest node and the exact field", () => {
    const { byNode, other } = placeErrors(
      [error("strategy.params.retriever.params.children[0].params.children[1].params.top_k")],
      NODES,
      ["strategy"],
    );
    expect(other).toEqual([]);
    expect([...byNode.keys()]).toEqual(["params.retriever.params.children[0].params.children[1]"]);
    expect(byNode.get("params.retriever.params.children[0].params.children[1]")![0]!.field).toEqual(["top_k"]);
  });

  it("keeps a nested form component's path as the field path", () => {
    const { byNode } = placeErrors(
      [error("document.strategy.params.retriever.params.children[0].params.children[0].params.vectorizer.params.ngram_max")],
      NODES,
      ["document", "strategy"],
    );
    const [placed] = byNode.get("params.retriever.params.children[0].params.children[0]")!;
    expect(placed!.field).toEqual(["vectorizer", "params", "ngram_max"]);
  });

  it("marks the node itself for a component-level error such as an unavailable model", () => {
    const { byNode } = placeErrors(
      [error("params.retriever.component", "has no local copy", "unavailable")],
      NODES,
    );
    expect(byNode.get("params.retriever")).toEqual([
      { node: "params.retriever", field: [], message: "has no local copy", code: "unavailable" },
    ]);
  });

  it("keeps what the user can do about a node's problem, for the node to offer", () => {
    const action = { code: "install_model", params: { kind: "cross-encoder", model: "cross-encoder/ms-marco-MiniLM-L-6-v2" } };
    const { byNode } = placeErrors([{ ...error("params.retriever.component", "is not installed", "unavailable"), action }], NODES);
    const placed = byNode.get("params.retriever")!;
    expect(placed[0]!.action).toEqual(action);
    const problems = sortNodeErrors(placed, ["children"], ["top_k"]);
    expect(problems.node).toEqual(["is not installed"]);
    expect(problems.actions).toEqual([action]);
    expect(sortNodeErrors([{ node: "", field: ["top_k"], message: "must be ≥ 1", code: "min" }], [], ["top_k"]).actions).toEqual([]);
  });

  it("leaves errors outside the tree to the caller", () => {
    const { byNode, other } = placeErrors([error("name", "is required"), error("document.version")], NODES, ["strategy"]);
    expect(byNode.size).toBe(0);
    expect(other.map((item) => item.path)).toEqual(["name", "document.version"]);
  });

  it("falls back to the closest existing node for a path into a node that is not there", () => {
    const { byNode } = placeErrors([error("params.retriever.params.children[0].params.children[5].params.top_k")], NODES);
    const [placed] = byNode.get("params.retriever.params.children[0]")!;
    expect(placed!.field).toEqual(["children", 5, "params", "top_k"]);
  });
});

describe("sortNodeErrors", () => {
  it("separates node, slot and form errors", () => {
    const problems = sortNodeErrors(
      [
        { node: "", field: [], message: "unavailable", code: "unavailable" },
        { node: "", field: ["children"], message: "takes at least 2", code: "min_children" },
        { node: "", field: ["children", 5, "params", "top_k"], message: "deep", code: "x" },
        { node: "", field: ["top_k"], message: "must be ≥ 1", code: "greater_than_equal" },
        { node: "", field: ["surprise"], message: "extra fields not permitted", code: "extra_forbidden" },
      ],
      ["children"],
      ["top_k", "fusion"],
    );
    expect(problems.node).toEqual(["unavailable", "extra fields not permitted"]);
    expect(problems.slots.get("children")).toEqual(["takes at least 2", "deep"]);
    expect(problems.form).toEqual([{ path: ["top_k"], message: "must be ≥ 1" }]);
  });
});
