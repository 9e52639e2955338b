import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { useMemo, useState } from "react";
import { describe, expect, it } from "vitest";

import type { ComponentRef } from "../../api/components";
import { useComponentDetails } from "../../catalog/CatalogProvider";
import { mockApi } from "../../test/api";
import { CATALOG, catalogRoutes } from "../../test/catalog";
import { renderWithProviders } from "../../test/render";
import type { NodeError } from "./errors";
import { RetrieverTree } from "./RetrieverTree";
import { componentNames, treeKinds, type NodePath } from "./tree";

const bm25 = { component: "BM25Retriever", params: { top_k: 20 } };
const dense = { component: "DenseEmbeddingRetriever", params: { top_k: 20 } };
const HYBRID: ComponentRef = {
  component: "NaiveRAG",
  params: { retriever: { component: "EnsembleRetriever", params: { fusion: "rrf", children: [bm25, dense] } } },
};
const FUSION = "params.retriever";

function Harness({ initial, errors = new Map(), seen }: { initial: ComponentRef; errors?: Map<NodePath, NodeError[]>; seen: ComponentRef[] }) {
  const [root, setRoot] = useState(initial);
  const [selected, setSelected] = useState<NodePath>("");
  const names = useMemo(() => [...componentNames(root)], [root]);
  const { details } = useComponentDetails(names);
  return (
    <>
      <RetrieverTree
        root={root}
        selected={selected}
        onSelect={setSelected}
        onChange={(tree, select) => {
          seen.push(tree);
          setRoot(tree);
          setSelected(select);
        }}
        errors={errors}
        kinds={treeKinds(CATALOG)}
        details={details}
        label="Pipeline components"
      />
      <output data-testid="selected">{selected}</output>
    </>
  );
}

const card = (name: string) => screen.getByRole("button", { name: new RegExp(`^${name}`) }).closest<HTMLElement>(".tree-card")!;
const last = (seen: ComponentRef[]) => seen[seen.length - 1]!;

async function renderTree(initial = HYBRID, errors?: Map<NodePath, NodeError[]>, shown = "BM25 keyword retriever") {
  mockApi(catalogRoutes());
  const seen: ComponentRef[] = [];
  renderWithProviders(<Harness initial={initial} errors={errors} seen={seen} />);
  await screen.findByText(shown);
  await waitFor(() => expect(screen.queryByLabelText("Loading the component…")).not.toBeInTheDocument());
  return seen;
}

describe("RetrieverTree", () => {
  it("draws nested cards with names and live representations, and the children's limits", async () => {
    await renderTree();
    expect(within(card("Fusion \\(ensemble\\)")).getByText("Fusion · RRF · BM25, Dense")).toBeInTheDocument();
    expect(within(card("BM25 keyword retriever")).getByText("BM25 · top 20 · k1=1.5")).toBeInTheDocument();
    expect(within(card("Dense semantic retriever")).getByText("Dense · knowledge base model · top 20")).toBeInTheDocument();
    expect(screen.getByRole("group", { name: "Retrievers to fuse" })).toHaveTextContent("At least 2 children");
    // The synthesizer is not a tree kind: it stays in the strategy's form.
    expect(screen.queryByRole("group", { name: "Response synthesizer" })).not.toBeInTheDocument();
  });

  it("adds a child from a picker grouped by category, with search", async () => {
    const seen = await renderTree();
    fireEvent.click(screen.getByRole("button", { name: "Add to Retrievers to fuse" }));
    const dialog = await screen.findByRole("dialog", { name: "Add to Retrievers to fuse" });
    expect(within(dialog).getAllByRole("heading", { level: 3 }).map((heading) => heading.textContent)).toEqual(["Keyword", "Dense", "Fusion", "Re-ranking"]);

    fireEvent.change(within(dialog).getByRole("searchbox"), { target: { value: "dense" } });
    expect(within(dialog).getAllByRole("button", { name: /retriever/ })).toHaveLength(1);
    fireEvent.click(within(dialog).getByRole("button", { name: /Dense semantic retriever/ }));

    await waitFor(() => expect(last(seen).params!.retriever).toMatchObject({ params: { children: [bm25, dense, { component: "DenseEmbeddingRetriever", params: { top_k: 10, embedding_model: null } }] } }));
    expect(screen.getByTestId("selected")).toHaveTextContent("params.retriever.params.children[2]");
  });

  it("wraps a node in a composite and unwraps it again", async () => {
    const seen = await renderTree();
    fireEvent.click(within(card("Fusion \\(ensemble\\)")).getByRole("button", { name: "Wrap in a composite…" }));
    const dialog = await screen.findByRole("dialog", { name: "Wrap in…" });
    expect(within(dialog).getByRole("button", { name: /Cross-encoder re-ranker/ })).toHaveTextContent("Exactly 1 child");
    fireEvent.click(within(dialog).getByRole("button", { name: /Cross-encoder re-ranker/ }));

    await waitFor(() => expect(last(seen).params!.retriever).toMatchObject({ component: "CrossEncoderRetriever", params: { top_k: 5, children: [HYBRID.params!.retriever] } }));
    const candidates = await screen.findByRole("group", { name: "Candidate retriever" });
    expect(candidates).toHaveTextContent("Exactly 1 child");
    // Exactly one child: the slot is full.
    expect(within(candidates).getByRole("button", { name: "Add to Candidate retriever" })).toBeDisabled();

    fireEvent.click(within(card("Cross-encoder re-ranker")).getByRole("button", { name: "Unwrap (keep the children)" }));
    expect(last(seen)).toEqual(HYBRID);
  });

  it("refuses to unwrap a composite whose children cannot take its place", async () => {
    await renderTree();
    expect(within(card("Fusion \\(ensemble\\)")).queryByRole("button", { name: "Unwrap (keep the children)" })).not.toBeInTheDocument();
  });

  it("reorders with buttons and the keyboard, and removes", async () => {
    const seen = await renderTree();
    fireEvent.click(within(card("Dense semantic retriever")).getByRole("button", { name: "Move up" }));
    expect((last(seen).params!.retriever as ComponentRef).params!.children).toEqual([dense, bm25]);
    expect(within(card("Dense semantic retriever")).getByRole("button", { name: "Move up" })).toBeDisabled();

    const bm25Card = screen.getByRole("button", { name: /^BM25 keyword retriever/ });
    fireEvent.keyDown(bm25Card, { key: "ArrowUp", altKey: true });
    expect((last(seen).params!.retriever as ComponentRef).params!.children).toEqual([bm25, dense]);
    await waitFor(() => expect(screen.getByRole("button", { name: /^BM25 keyword retriever/ })).toHaveFocus());

    fireEvent.keyDown(screen.getByRole("button", { name: /^BM25 keyword retriever/ }), { key: "Delete" });
    expect((last(seen).params!.retriever as ComponentRef).params!.children).toEqual([dense]);
    expect(screen.getByRole("group", { name: "Retrievers to fuse" }).querySelector(".chip--warning")).toHaveTextContent("At least 2 children");
  });

  it("reorders by dragging a card onto a sibling, and only within its list", async () => {
    const seen = await renderTree();
    const dataTransfer = { setData: () => undefined, effectAllowed: "" };
    fireEvent.dragStart(card("Dense semantic retriever"), { dataTransfer });
    fireEvent.dragOver(card("BM25 keyword retriever").closest("li")!, { dataTransfer });
    fireEvent.drop(card("BM25 keyword retriever").closest("li")!, { dataTransfer });
    expect((last(seen).params!.retriever as ComponentRef).params!.children).toEqual([dense, bm25]);

    fireEvent.dragStart(card("BM25 keyword retriever"), { dataTransfer });
    fireEvent.drop(card("Fusion \\(ensemble\\)").closest("li")!, { dataTransfer });
    expect(seen).toHaveLength(1);
  });

  it("offers an empty one-component slot to fill", async () => {
    const seen = await renderTree({ component: "NaiveRAG", params: { retriever: null } }, undefined, "Choose: Retriever");
    fireEvent.click(screen.getByRole("button", { name: "Choose: Retriever" }));
    fireEvent.click(within(await screen.findByRole("dialog")).getByRole("button", { name: /BM25 keyword retriever/ }));
    await waitFor(() => expect(last(seen).params!.retriever).toEqual({ component: "BM25Retriever", params: { top_k: 10, k1: 1.5 } }));
  });

  it("highlights a node with errors and shows its own problems on the card", async () => {
    const errors = new Map<NodePath, NodeError[]>([
      [FUSION, [{ node: FUSION, field: [], message: "has no local copy", code: "unavailable" }]],
      ["params.retriever.params.children[0]", [{ node: "", field: ["top_k"], message: "must be ≥ 1", code: "greater_than_equal" }]],
    ]);
    await renderTree(HYBRID, errors);
    expect(card("Fusion \\(ensemble\\)")).toHaveClass("is-invalid");
    expect(within(card("Fusion \\(ensemble\\)")).getByText("has no local copy")).toBeInTheDocument();
    expect(card("BM25 keyword retriever")).toHaveClass("is-invalid");
    expect(within(card("BM25 keyword retriever")).getByText("1 problem")).toBeInTheDocument();
    expect(card("Dense semantic retriever")).not.toHaveClass("is-invalid");
  });
});
