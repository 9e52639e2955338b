import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { KnowledgeDocument } from "../../api/knowledge";
import { jsonResponse } from "../../test/fetch";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { FakeWebSocket, FakeXHR } from "../../test/fakes";
import { renderWithProviders } from "../../test/render";
import { applyFeedMessage } from "./documentFeed";
import { KnowledgeBasePage } from "./KnowledgeBasePage";

const BASE = {
  id: 1, name: "Science notes", description: "", language: "en", chunker: { component: "RecursiveCharacterChunker" },
  embedding_model: { component: "AllMiniLML6V2Embedding" }, document_count: 0, ready_count: 0, failed_count: 0,
  in_progress_count: 0, chunk_total: 0, created_at: "2025-01-01T00:00:00Z", updated_at: "2025-01-01T00:00:00Z",
};

const restDocument = (id: number, name: string, overrides: Partial<KnowledgeDocument> = {}): KnowledgeDocument => ({
  id, name, mime: "text/plain", size: 6100, status: "queued", progress: { done: 0, total: 0 }, chunk_count: 0,
  page_count: null, error: null, error_detail: null, error_code: null, created_at: "2025-01-01T00:00:00Z", ...overrides,
});

const progress = (id: number, name: string, status: string, extra: Record<string, unknown> = {}) => ({
  type: "document.progress",
  document: { id, name, status, done: 0, total: 0, chunk_count: 0, error: null, error_detail: null, error_code: null, ...extra },
});

beforeEach(() => {
  FakeWebSocket.instances = [];
  FakeXHR.instances = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
  vi.stubGlobal("XMLHttpRequest", FakeXHR);
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

function row(name: string) {
  return screen.getByText(name, { selector: ".document__name" }).closest<HTMLElement>("li")!;
}

describe("applyFeedMessage", () => {
  it("keeps what only the REST API knows when progress arrives", () => {
    const documents = [restDocument(1, "a.txt", { size: 123 })];
    const [updated] = applyFeedMessage(documents, progress(1, "a.txt", "embedding", { done: 2, total: 4 }) as never);
    expect(updated).toMatchObject({ size: 123, status: "embedding", progress: { done: 2, total: 4 } });
  });
});

describe("KnowledgeBasePage", () => {
  it("shows uploads with their progress, then each document's stages as the websocket reports them", async () => {
    const api = mockApi({
      ...catalogRoutes(),
      "GET /api/v1/knowledge-bases/1/": BASE,
      "GET /api/v1/knowledge-bases/1/documents/": [],
      "POST /api/v1/knowledge-bases/1/documents/7/retry/": () => jsonResponse(restDocument(7, "volcanoes.txt"), 202),
    });
    renderWithProviders(<KnowledgeBasePage id={1} />);
    expect(await screen.findByRole("heading", { name: "Science notes" })).toBeInTheDocument();
    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));
    const socket = FakeWebSocket.latest();
    expect(socket.url).toBe("ws://localhost:3000/ws/knowledge/1/?lang=en");
    socket.open();
    socket.receive({ type: "snapshot", documents: [] });
    expect(screen.getByText("Live")).toBeInTheDocument();
    expect(screen.getByText("No documents yet")).toBeInTheDocument();

    const files = [new File(["aurora"], "aurora.md"), new File(["volcanoes"], "volcanoes.txt")];
    fireEvent.change(screen.getByTestId("upload-input"), { target: { files } });
    await waitFor(() => expect(FakeXHR.instances).toHaveLength(2));
    const [first, second] = FakeXHR.instances as [FakeXHR, FakeXHR];
    expect(first.url).toBe("/api/v1/knowledge-bases/1/documents/");
    expect(first.body?.getAll("files")).toEqual([files[0]]);

    first.progress(0.5);
    const uploads = screen.getByRole("list", { name: "Uploads" });
    expect(within(uploads).getByRole("progressbar", { name: "Uploading aurora.md" })).toHaveAttribute("aria-valuenow", "50");
    expect(within(uploads).getByText("50 %")).toBeInTheDocument();

    await first.respond(201, { documents: [restDocument(6, "aurora.md")], rejected: [] });
    await second.respond(201, { documents: [restDocument(7, "volcanoes.txt")], rejected: [] });
    expect(screen.queryByRole("list", { name: "Uploads" })).not.toBeInTheDocument();
    expect(within(row("aurora.md")).getByText("Queued")).toBeInTheDocument();

    socket.receive(progress(6, "aurora.md", "embedding", { done: 3, total: 10 }));
    expect(within(row("aurora.md")).getByText("Embedding", { selector: ".badge" })).toBeInTheDocument();
    expect(within(row("aurora.md")).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "30");
    expect(within(row("aurora.md")).getByText("3 of 10")).toBeInTheDocument();

    socket.receive(progress(6, "aurora.md", "ready", { chunk_count: 29 }));
    expect(within(row("aurora.md")).getByText("Ready")).toBeInTheDocument();
    expect(within(row("aurora.md")).getByText(/29 chunks/)).toBeInTheDocument();

    socket.receive(progress(7, "volcanoes.txt", "failed", { error: "the file is damaged", error_detail: "Stream has ended unexpectedly", error_code: "damaged" }));
    // The reason in the UI's language; what the library said apart, in its own words.
    expect(within(row("volcanoes.txt")).getByText("the file is damaged")).toBeInTheDocument();
    expect(within(row("volcanoes.txt")).getByText("The parser said: Stream has ended unexpectedly")).toBeInTheDocument();
    fireEvent.click(within(row("volcanoes.txt")).getByRole("button", { name: /Retry/ }));
    await waitFor(() => expect(within(row("volcanoes.txt")).getByText("Queued")).toBeInTheDocument());
    expect(api).toHaveBeenCalledWith("/api/v1/knowledge-bases/1/documents/7/retry/", expect.objectContaining({ method: "POST" }));

    socket.receive({ type: "document.deleted", document_id: 7 });
    expect(screen.queryByText("volcanoes.txt", { selector: ".document__name" })).not.toBeInTheDocument();
  });

  it("offers to upload a duplicate anyway, sending force", async () => {
    mockApi({ ...catalogRoutes(), "GET /api/v1/knowledge-bases/1/": BASE, "GET /api/v1/knowledge-bases/1/documents/": [] });
    renderWithProviders(<KnowledgeBasePage id={1} />);
    await screen.findByRole("heading", { name: "Science notes" });

    fireEvent.change(screen.getByTestId("upload-input"), { target: { files: [new File(["a"], "aurora.md")] } });
    await waitFor(() => expect(FakeXHR.instances).toHaveLength(1));
    await FakeXHR.instances[0]!.respond(409, {
      documents: [],
      rejected: [{ name: "aurora.md", code: "duplicate", reason: "the same content is already here as 'aurora.md'", document_id: 6 }],
    });
    expect(screen.getByText("the same content is already here as 'aurora.md'")).toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "Upload anyway" }));
    await waitFor(() => expect(FakeXHR.instances).toHaveLength(2));
    expect(FakeXHR.instances[1]!.body?.get("force")).toBe("true");
    await FakeXHR.instances[1]!.respond(201, { documents: [restDocument(8, "aurora.md")], rejected: [] });
    expect(screen.getByText("aurora.md", { selector: ".document__name" })).toBeInTheDocument();
  });

  it("polls the documents while the websocket is down, and reconnects", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let calls = 0;
    mockApi({
      ...catalogRoutes(),
      "GET /api/v1/knowledge-bases/1/": BASE,
      "GET /api/v1/knowledge-bases/1/documents/": () => {
        calls++;
        return jsonResponse([restDocument(6, "aurora.md", calls > 1 ? { status: "ready", chunk_count: 4 } : { status: "parsing" })]);
      },
    });
    renderWithProviders(<KnowledgeBasePage id={1} />);
    await screen.findByText("Parsing", { selector: ".badge" });
    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));

    FakeWebSocket.latest().drop();
    expect(screen.getByText("Refreshing")).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(2100));
    expect(await screen.findByText("Ready")).toBeInTheDocument();

    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(2));
    FakeWebSocket.latest().open();
    expect(screen.getByText("Live")).toBeInTheDocument();
  });
});
