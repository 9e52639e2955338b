import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { KnowledgeBase } from "../../api/knowledge";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { ImportPipelineDialog } from "./ImportPipelineDialog";

const base = (id: number, name: string) => ({ id, name }) as KnowledgeBase;
const BASES = [base(1, "Trellis guide"), base(2, "Science notes")];
const STRATEGY = { component: "NaiveRAG", params: {} };

function file(document: object) {
  return new File([JSON.stringify(document)], "pipeline.json", { type: "application/json" });
}

function open() {
  const imported: unknown[] = [];
  mockApi({
    ...catalogRoutes(),
    "POST /api/v1/pipelines/import/": (body) => {
      imported.push(body);
      return jsonResponse({ id: 9, name: "Re-ranked hybrid (2)" }, 201);
    },
  });
  renderWithProviders(<ImportPipelineDialog knowledgeBases={BASES} onClose={() => {}} />);
  const dialog = screen.getByRole("dialog", { name: "Import a pipeline" });
  const choose = (document: object) => fireEvent.change(within(dialog).getByLabelText("Pipeline file (.json)"), { target: { files: [file(document)] } });
  return { dialog, imported, choose };
}

describe("ImportPipelineDialog", () => {
  it("keeps the knowledge base the pipeline was exported from when the user has it", async () => {
    const { dialog, imported, choose } = open();
    choose({ name: "Re-ranked hybrid", version: 1, knowledge_base: { id: 2, name: "Science notes" }, strategy: STRATEGY });
    expect(await within(dialog).findByText(/Into “Science notes”, the knowledge base it was exported from/)).toBeInTheDocument();
    expect(within(dialog).queryByRole("combobox")).not.toBeInTheDocument();
    fireEvent.click(within(dialog).getByRole("button", { name: "Import" }));
    await waitFor(() => expect(imported).toEqual([{ knowledge_base: 2, document: expect.objectContaining({ name: "Re-ranked hybrid" }) }]));
  });

  it("lets the user choose another one", async () => {
    const { dialog, imported, choose } = open();
    choose({ name: "P", version: 1, knowledge_base: { id: 77, name: "Science notes" }, strategy: STRATEGY });
    fireEvent.click(await within(dialog).findByRole("button", { name: "Choose another" }));
    fireEvent.change(within(dialog).getByLabelText("Knowledge base"), { target: { value: "1" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Import" }));
    await waitFor(() => expect(imported).toEqual([expect.objectContaining({ knowledge_base: 1 })]));
  });

  it("asks only when the exported knowledge base is not the user's", async () => {
    const { dialog, choose } = open();
    choose({ name: "P", version: 1, knowledge_base: { id: 5, name: "Someone's notes" }, strategy: STRATEGY });
    const select = await within(dialog).findByLabelText("Knowledge base");
    expect(select).toHaveValue("");
    expect(within(dialog).getByText(/exported from “Someone's notes”, which is not one of your knowledge bases/)).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Import" })).toBeDisabled();
    fireEvent.change(select, { target: { value: "2" } });
    expect(within(dialog).getByRole("button", { name: "Import" })).toBeEnabled();
  });
});
