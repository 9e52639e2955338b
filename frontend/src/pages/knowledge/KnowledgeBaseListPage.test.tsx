import { act, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { headerOf } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { KnowledgeBaseListPage } from "./KnowledgeBaseListPage";

const NAMES: Record<string, string> = { en: "Trellis guide", es: "Guía de Trellis", "zh-Hant": "Trellis 指南" };

const base = (language: string) => ({
  id: 1, name: NAMES[language], description: "", language: "multilingual", chunker: {}, embedding_model: {},
  document_count: 0, ready_count: 0, failed_count: 0, in_progress_count: 0, chunk_total: 0,
  created_at: "2025-01-01T00:00:00Z", updated_at: "2025-01-01T00:00:00Z",
});

afterEach(async () => {
  await i18n.changeLanguage("en");
});

describe("KnowledgeBaseListPage", () => {
  it("shows the demo's name in the language the UI switches to", async () => {
    const api = mockApi({
      "GET /api/v1/knowledge-bases/": (_body, _url) => {
        const [, init] = api.mock.calls[api.mock.calls.length - 1]!;
        return new Response(JSON.stringify([base(headerOf(init, "Accept-Language") ?? "en")]), { headers: { "Content-Type": "application/json" } });
      },
    });
    renderWithProviders(<KnowledgeBaseListPage />);
    expect(await screen.findByText("Trellis guide")).toBeInTheDocument();
    await act(() => i18n.changeLanguage("es"));
    expect(await screen.findByText("Guía de Trellis")).toBeInTheDocument();
    await act(() => i18n.changeLanguage("zh-Hant"));
    expect(await screen.findByText("Trellis 指南")).toBeInTheDocument();
  });
});
