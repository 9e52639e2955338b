import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";

import { mockApi } from "../../test/api";
import { DETAILS, catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { toErrorSchema } from "./errors";
import { SchemaForm, type SchemaFormProps } from "./SchemaForm";
import type { Params } from "./schemaUi";

/** A SchemaForm holding its value, as the builder does; `changes` records what it reports. */
function Harness(props: Omit<SchemaFormProps, "value" | "onChange" | "idPrefix"> & { initial: Params; changes: Params[] }) {
  const { initial, changes, ...rest } = props;
  const [value, setValue] = useState(initial);
  return (
    <SchemaForm
      {...rest}
      idPrefix="t"
      value={value}
      onChange={(next) => {
        changes.push(next);
        setValue(next);
      }}
    />
  );
}

const last = (changes: Params[]) => changes[changes.length - 1]!;

describe("SchemaForm", () => {
  it("renders a field per param, labelled by its schema title, and reports edits", () => {
    mockApi(catalogRoutes());
    const changes: Params[] = [];
    renderWithProviders(<Harness schema={DETAILS.BM25Retriever!.schema} initial={{ top_k: 20 }} changes={changes} />);

    const topK = screen.getByLabelText("Results");
    expect(topK).toHaveValue(20);
    expect(screen.getByText("How many chunks to return.")).toBeInTheDocument();
    fireEvent.change(topK, { target: { value: "7" } });
    expect(last(changes)).toMatchObject({ top_k: 7, k1: 1.5 });
  });

  it("validates as you type, in the UI's words, and shows a message the server repeats once", async () => {
    mockApi(catalogRoutes());
    const changes: Params[] = [];
    const serverSays = toErrorSchema([{ path: ["top_k"], message: "must be ≥ 1" }]);
    renderWithProviders(<Harness schema={DETAILS.BM25Retriever!.schema} initial={{ top_k: 3 }} changes={changes} extraErrors={serverSays} />);
    expect(screen.getAllByText("must be ≥ 1")).toHaveLength(1);

    fireEvent.change(screen.getByLabelText("Results"), { target: { value: "0" } });
    expect(await screen.findAllByText("must be ≥ 1")).toHaveLength(1);
    fireEvent.change(screen.getByLabelText("k1"), { target: { value: "-1" } });
    expect(await screen.findByText("must be ≥ 0")).toBeInTheDocument();
  });

  it("puts the server's errors on the exact field, nested components included", async () => {
    mockApi(catalogRoutes());
    const extraErrors = toErrorSchema([
      { path: ["embedding_model", "params", "batch_size"], message: "must be ≥ 1 (server)" },
      { path: ["embedding_model", "component"], message: "has no local copy" },
    ]);
    renderWithProviders(
      <Harness
        schema={DETAILS.DenseEmbeddingRetriever!.schema}
        initial={{ top_k: 10, embedding_model: { component: "MiniLMEmbedding", params: { batch_size: 0 } } }}
        changes={[]}
        extraErrors={extraErrors}
      />,
    );

    expect(await screen.findByText("has no local copy")).toBeInTheDocument();
    // The nested settings open by themselves when they hold an error.
    const batch = await screen.findByLabelText("Batch size");
    expect(batch).toBeVisible();
    expect(batch.closest(".form-field")).toHaveTextContent("must be ≥ 1 (server)");
  });

  it("picks a nested component of the field's kind and edits its params in a nested form", async () => {
    mockApi(catalogRoutes());
    const changes: Params[] = [];
    renderWithProviders(<Harness schema={DETAILS.DenseEmbeddingRetriever!.schema} initial={{ top_k: 10, embedding_model: null }} changes={changes} />);

    const picker = await screen.findByLabelText("Embedding model");
    await waitFor(() => expect(within(picker).getByRole("option", { name: "MiniLM" })).toBeInTheDocument());
    expect(within(picker).getAllByRole("option").map((option) => option.textContent)).toEqual(["— Not set —", "MiniLM"]);

    fireEvent.change(picker, { target: { value: "MiniLMEmbedding" } });
    await waitFor(() => expect(last(changes).embedding_model).toEqual({ component: "MiniLMEmbedding", params: { batch_size: 32 } }));

    fireEvent.click(screen.getByRole("button", { name: "Settings of MiniLM" }));
    fireEvent.change(await screen.findByLabelText("Batch size"), { target: { value: "8" } });
    expect(last(changes)).toMatchObject({ top_k: 10, embedding_model: { component: "MiniLMEmbedding", params: { batch_size: 8 } } });

    fireEvent.change(picker, { target: { value: "" } });
    await waitFor(() => expect(last(changes).embedding_model).toBeNull());
  });

  it("leaves fields edited elsewhere out of the form and keeps their values", () => {
    mockApi(catalogRoutes());
    const changes: Params[] = [];
    const children = [{ component: "BM25Retriever", params: {} }];
    renderWithProviders(
      <Harness schema={DETAILS.EnsembleRetriever!.schema} initial={{ children, fusion: "rrf", top_k: 10 }} hidden={["children"]} changes={changes} />,
    );

    expect(screen.queryByText("Retrievers to fuse")).not.toBeInTheDocument();
    // Fewer children than the schema's minimum is the tree's business, not an error of this form.
    expect(screen.queryByText(/must have at least/)).not.toBeInTheDocument();
    const fusion = screen.getByLabelText("Fusion method");
    // The values read as their labels.
    expect(within(fusion).getByRole("option", { name: "RRF" })).toBeInTheDocument();
    const weighted = within(fusion).getByRole("option", { name: "weighted" }) as HTMLOptionElement;
    fireEvent.change(fusion, { target: { value: weighted.value } });
    expect(last(changes)).toEqual({ children, fusion: "weighted", top_k: 10 });
  });

  it("offers stored credentials by name and never shows a secret", async () => {
    mockApi({ ...catalogRoutes(), "GET /api/v1/credentials/": [{ id: 1, name: "openai-main", kind: "OpenAIAPIKey", mask: "sk-…a1b2", shared: false }] });
    const changes: Params[] = [];
    renderWithProviders(<Harness schema={DETAILS.OpenAICompatibleLLM!.schema} initial={{ model: "gpt-4o-mini", credential: null }} changes={changes} />);

    const credential = screen.getByLabelText("Credential");
    await screen.findByRole("option", { name: "openai-main (OpenAIAPIKey, sk-…a1b2)" });
    fireEvent.change(credential, { target: { value: "openai-main" } });
    expect(last(changes).credential).toBe("openai-main");
    fireEvent.change(credential, { target: { value: "" } });
    expect(last(changes).credential).toBeNull();

    expect(screen.getByLabelText("API key")).toHaveAttribute("type", "password");
  });

  it("offers the installed models of a model field's kind by name, and still takes any text", async () => {
    const asked: string[] = [];
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/models/": (_body, url) => {
        asked.push(url.searchParams.get("kind") ?? "");
        return jsonResponse([{ name: "tiny-ce", kind: "cross-encoder" }, { name: "bge-reranker", kind: "cross-encoder" }]);
      },
    });
    const schema = { type: "object", properties: { model_name: {
      type: "string", title: "Model", default: "cross-encoder/ms-marco-MiniLM-L-6-v2", "x-model-kind": "cross-encoder" } } };
    const changes: Params[] = [];
    renderWithProviders(<Harness schema={schema as never} initial={{ model_name: "cross-encoder/ms-marco-MiniLM-L-6-v2" }} changes={changes} />);

    expect(await screen.findByText("Installed: tiny-ce, bge-reranker")).toBeInTheDocument();
    expect(asked).toEqual(["cross-encoder"]);
    const field = screen.getByLabelText("Model");
    const options = [...document.querySelectorAll(`#${field.getAttribute("list")} option`)].map((option) => option.getAttribute("value"));
    expect(options).toEqual(["tiny-ce", "bge-reranker"]);
    expect(screen.getByText(/is not an installed model/)).toBeInTheDocument();
    fireEvent.change(field, { target: { value: "tiny-ce" } });
    expect(last(changes).model_name).toBe("tiny-ce");
    expect(screen.queryByText(/is not an installed model/)).not.toBeInTheDocument();
  });

  it("says when no model of a field's kind is installed, with a way to install one", async () => {
    mockApi({ ...catalogRoutes(), "GET /api/v1/models/": [] });
    const schema = { type: "object", properties: { model_name: { type: "string", title: "Model", "x-model-kind": "cross-encoder" } } };
    renderWithProviders(<Harness schema={schema as never} initial={{}} changes={[]} />);
    expect(await screen.findByText("No model of this kind is installed yet.", { exact: false })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Install one on the Models page" })).toHaveAttribute("href", "/models");
  });

  it("follows the UI language in its validation messages", async () => {
    mockApi(catalogRoutes());
    const { default: i18n } = await import("../../i18n");
    await i18n.changeLanguage("es");
    renderWithProviders(<Harness schema={DETAILS.BM25Retriever!.schema} initial={{ top_k: 3 }} changes={[]} />);
    fireEvent.change(screen.getByLabelText("Results"), { target: { value: "0" } });
    expect(await screen.findByText("debe ser ≥ 1")).toBeInTheDocument();
  });
});
