import { fireEvent, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { ChatMessage } from "../../api/chat";
import type { PipelineSummary } from "../../api/pipelines";
import agentic from "../../components/TraceView/fixtures/agentic.json";
import crag from "../../components/TraceView/fixtures/crag.json";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { ComparePage } from "./ComparePage";

const pipeline = (id: number, name: string): PipelineSummary => ({
  id, name, description: "", knowledge_base: 5, knowledge_base_name: "Guide", representation: "", ready: true,
  waiting_for: [], documents_reading: 0, created_at: "", updated_at: "",
});

describe("ComparePage", () => {
  it("asks the same question through two pipelines and shows both answers with their traces", async () => {
    const answers: Record<number, ChatMessage> = {
      11: (agentic as unknown as { message: ChatMessage }).message,
      12: (crag as unknown as { message: ChatMessage }).message,
    };
    let next = 11;
    const api = mockApi({
      ...catalogRoutes(),
      "GET /api/v1/pipelines/": [pipeline(1, "Agentic"), pipeline(2, "CRAG")],
      "POST /api/v1/conversations/": (body) => jsonResponse({ id: next++, ...(body as object) }, 201),
      "POST /api/v1/conversations/11/ask/": {},
      "POST /api/v1/conversations/12/ask/": {},
      "GET /api/v1/conversations/11/messages/": [answers[11]],
      "GET /api/v1/conversations/12/messages/": [answers[12]],
    });
    renderWithProviders(<ComparePage />);
    fireEvent.change(await screen.findByLabelText("Your question"), { target: { value: "What is RRF?" } });
    fireEvent.click(screen.getByRole("button", { name: "Compare" }));

    const left = await screen.findByRole("region", { name: "Pipeline 1: Agentic" });
    const right = screen.getByRole("region", { name: "Pipeline 2: CRAG" });
    expect(await within(left).findByRole("tab", { name: /^Round 1/ })).toBeInTheDocument();
    expect(await within(right).findByText(/Branch taken: ambiguous/)).toBeInTheDocument();
    expect(within(right).getByRole("link", { name: "Continue in the chat" })).toHaveAttribute("href", "/chat/12");
    const created = api.mock.calls.filter(([url, init]) => url === "/api/v1/conversations/" && init?.method === "POST");
    expect(created.map(([, init]) => JSON.parse(init!.body as string).pipeline).sort()).toEqual([1, 2]);
  });
});
