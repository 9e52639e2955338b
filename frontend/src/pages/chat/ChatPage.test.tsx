import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { ChatMessage, Conversation, ServerEvent } from "../../api/chat";
import type { PipelineSummary } from "../../api/pipelines";
import agentic from "../../components/TraceView/fixtures/agentic.json";
import i18n from "../../i18n";
import { mockApi } from "../../test/api";
import { catalogRoutes } from "../../test/catalog";
import { FakeWebSocket } from "../../test/fakes";
import { jsonResponse } from "../../test/fetch";
import { renderWithProviders } from "../../test/render";
import { applyConversationEvent, ChatPage } from "./ChatPage";

const fixture = agentic as unknown as { question: string; message: ChatMessage; events: ServerEvent[] };

const pipeline = (overrides: Partial<PipelineSummary>): PipelineSummary => ({
  id: 1, name: "Agentic", description: "", knowledge_base: 5, knowledge_base_name: "Guide",
  representation: "Naive RAG · AgenticEnsembleRetriever → OpenAICompatibleLLM", ready: true, waiting_for: [], documents_reading: 0,
  created_at: "", updated_at: "", ...overrides,
});

const PIPELINES = [
  pipeline({}),
  pipeline({ id: 2, name: "Dense", ready: false, waiting_for: ["the all-MiniLM-L6-v2 index of 'Guide' is being built"] }),
];

const conversation = (overrides: Partial<Conversation> = {}): Conversation => ({
  id: 7, title: "", origin: "web", pipeline: 1, pipeline_name: "Agentic", created_at: "", updated_at: "", ...overrides,
});

const QUESTION: ChatMessage = {
  ...fixture.message, id: 1, role: "user", text: fixture.question, citations: [], trace: null, rounds: [], chunks: [], timings: {},
};

function setup(options: { stored?: () => ChatMessage[]; conversations?: Conversation[]; pipelines?: PipelineSummary[];
  saved?: Promise<void>; relisted?: Promise<void>; ask?: () => Response; listPipelines?: () => PipelineSummary[] } = {}) {
  let conversations = options.conversations ?? [conversation()];
  let listings = 0;
  const stored = options.stored ?? (() => []);
  const api = mockApi({
    ...catalogRoutes(),
    "GET /api/v1/conversations/": async () => {
      // What the server had when asked, answered once `relisted` settles (the first listing at once).
      const snapshot = conversations;
      if ((listings += 1) > 1) await options.relisted;
      return jsonResponse(snapshot);
    },
    "GET /api/v1/pipelines/": options.listPipelines ? () => jsonResponse(options.listPipelines!()) : options.pipelines ?? PIPELINES,
    "GET /api/v1/conversations/7/messages/": () => jsonResponse(stored()),
    "GET /api/v1/conversations/8/messages/": [],
    "POST /api/v1/conversations/": (body) => {
      const created = conversation({ id: 8, pipeline: (body as { pipeline: number }).pipeline });
      conversations = [created, ...conversations];
      return jsonResponse(created, 201);
    },
    "PATCH /api/v1/conversations/7/": async (body) => {
      await options.saved;
      const change = body as { title?: string; pipeline?: number };
      const named = (options.pipelines ?? PIPELINES).find((item) => item.id === change.pipeline);
      const updated = { ...conversations[0]!, ...change, ...(named ? { pipeline_name: named.name } : {}),
        updated_at: new Date().toISOString() };
      conversations = [updated, ...conversations.slice(1)];
      return jsonResponse(updated);
    },
    "DELETE /api/v1/conversations/7/": () => {
      conversations = conversations.filter((item) => item.id !== 7);
      return new Response(null, { status: 204 });
    },
    "POST /api/v1/conversations/7/ask/": options.ask ?? (() =>
      jsonResponse({ message_id: 2, answer: fixture.message.text, citations: fixture.message.citations, trace: fixture.message.trace })),
  });
  return api;
}

/** The sockets of the open conversation (the page also keeps one on the conversation list). */
const chatSockets = () => FakeWebSocket.instances.filter((socket) => /\/ws\/chat\/\d+\/$/.test(socket.url));
const listSocket = () => FakeWebSocket.instances.find((socket) => socket.url.endsWith("/ws/conversations/"))!;

async function openConversation() {
  renderWithProviders(<ChatPage id={7} />);
  await screen.findByRole("heading", { level: 2, name: "New conversation" });
  await waitFor(() => expect(chatSockets()).toHaveLength(1));
  return chatSockets()[0]!;
}

function ask(question: string) {
  fireEvent.change(screen.getByLabelText("Your question"), { target: { value: question } });
  fireEvent.click(screen.getByRole("button", { name: "Ask" }));
}

const tracePanel = () => screen.getByRole("complementary", { name: "Trace" });

beforeEach(() => {
  FakeWebSocket.instances = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("ChatPage", () => {
  it("lists the chat page's own conversations first, marks those programs asked and filters by origin", async () => {
    window.localStorage.removeItem("trellis.chat.origin");
    setup({ conversations: [
      conversation({ id: 7, title: "Typed here" }),
      conversation({ id: 9, title: "From a script", origin: "api" }),
      conversation({ id: 10, title: "From an agent", origin: "mcp" }),
    ] });
    renderWithProviders(<ChatPage id={null} />);
    const titles = () => within(screen.getByRole("list", { name: "Conversations" })).getAllByRole("listitem")
      .map((item) => item.querySelector(".conversation-item__title")!.textContent);
    await waitFor(() => expect(titles()).toEqual(["Typed here"]));
    const filter = screen.getByRole("group", { name: "Show" });
    expect(within(filter).getByRole("button", { name: "Chat 1" })).toHaveAttribute("aria-pressed", "true");
    expect(document.querySelector(".conversation-item__origin")).toBeNull();

    fireEvent.click(within(filter).getByRole("button", { name: "API & MCP 2" }));
    expect(titles()).toEqual(["From a script", "From an agent"]);
    const script = screen.getByRole("link", { name: /From a script/ });
    expect(within(script).getByText("API")).toHaveAttribute("title", "Asked through the OpenAI-compatible API (/v1/chat/completions)");
    expect(within(screen.getByRole("link", { name: /From an agent/ })).getByText("MCP")).toHaveAttribute("title", "Asked through an MCP tool");

    fireEvent.click(within(filter).getByRole("button", { name: "All 3" }));
    expect(titles()).toEqual(["Typed here", "From a script", "From an agent"]);
    expect(within(screen.getByRole("link", { name: /Typed here/ })).queryByText("Chat")).not.toBeInTheDocument();
    expect(window.localStorage.getItem("trellis.chat.origin")).toBe("all");
  });

  it("keeps the open conversation listed when the filter would hide it, and says when a filter leaves nothing", async () => {
    window.localStorage.setItem("trellis.chat.origin", "web");
    setup({ conversations: [conversation({ id: 8, title: "Asked by an agent", origin: "mcp" })] });
    const view = renderWithProviders(<ChatPage id={8} />);
    const list = await screen.findByRole("list", { name: "Conversations" });
    expect(within(list).getByRole("link", { name: /Asked by an agent/ })).toHaveAttribute("aria-current", "page");
    view.unmount();

    renderWithProviders(<ChatPage id={null} />);
    expect(await screen.findByText("No conversations here.")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "API & MCP 1" })).toHaveAttribute("aria-pressed", "false");
  });

  it("names origins and the filter in the interface language", async () => {
    await i18n.changeLanguage("es");
    window.localStorage.setItem("trellis.chat.origin", "programs");
    setup({ conversations: [conversation({ id: 9, title: "Script", origin: "api" })] });
    renderWithProviders(<ChatPage id={null} />);
    const filter = await screen.findByRole("group", { name: "Mostrar" });
    expect(within(filter).getAllByRole("button").map((button) => button.textContent)).toEqual(["Chat 0", "API y MCP 1", "Todas 1"]);
    expect(within(screen.getByRole("link", { name: /Script/ })).getByText("API"))
      .toHaveAttribute("title", "Preguntada a través de la API compatible con OpenAI (/v1/chat/completions)");
  });

  it("asks the pipeline just picked even before the server has saved the choice", async () => {
    let save = () => {};
    const saved = new Promise<void>((resolve) => { save = resolve; });
    setup({ pipelines: [...PIPELINES, pipeline({ id: 3, name: "Keyword", representation: "Naive RAG · BM25Retriever" })], saved });
    const socket = await openConversation();
    socket.open();
    fireEvent.change(screen.getByLabelText("Pipeline"), { target: { value: "3" } });
    expect(screen.getByLabelText<HTMLSelectElement>("Pipeline").value).toBe("3");
    ask("What is fusion?");
    await waitFor(() => expect(socket.sent).toEqual([{ type: "ask", question: "What is fusion?", pipeline_id: 3 }]));
    save();
    await waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>("Pipeline").value).toBe("3"));
  });

  it("keeps a pipeline switched while the list was being reloaded", async () => {
    let answer = () => {};
    const relisted = new Promise<void>((resolve) => { answer = resolve; });
    setup({
      conversations: [conversation({ updated_at: "2026-01-01T00:00:00Z" })],
      pipelines: [...PIPELINES, pipeline({ id: 3, name: "Keyword", representation: "Naive RAG · BM25Retriever" })],
      relisted,
    });
    await openConversation();
    listSocket().open();
    listSocket().drop();
    await waitFor(() => expect(FakeWebSocket.instances.filter((socket) => socket.url.endsWith("/ws/conversations/"))).toHaveLength(2), { timeout: 3000 });
    FakeWebSocket.instances.filter((socket) => socket.url.endsWith("/ws/conversations/"))[1]!.open(); // reloads the list
    fireEvent.change(screen.getByLabelText("Pipeline"), { target: { value: "3" } });
    await waitFor(() => expect(within(screen.getByRole("list", { name: "Conversations" })).getByRole("link")).toHaveTextContent("Keyword"));
    answer(); // the reload's copy, read before the switch, arrives last
    await waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>("Pipeline").value).toBe("3"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.getByLabelText<HTMLSelectElement>("Pipeline").value).toBe("3");
    expect(within(screen.getByRole("list", { name: "Conversations" })).getByRole("link")).toHaveTextContent("Keyword");
  });

  it("streams an agentic answer: its plan, each child and each verdict in the answer as they come, then the answer", async () => {
    let done = false;
    setup({ stored: () => (done ? [QUESTION, fixture.message] : []) });
    const socket = await openConversation();
    expect(socket.url).toMatch(/\/ws\/chat\/7\/$/);
    socket.open();
    expect(screen.getByText("Live")).toBeInTheDocument();

    ask(fixture.question);
    await waitFor(() => expect(socket.sent).toEqual([{ type: "ask", question: fixture.question, pipeline_id: 1 }]));
    expect(screen.getByText(fixture.question, { selector: ".bubble__text" })).toBeInTheDocument();

    const types = fixture.events.map((event) => event.type);
    const upTo = (type: string, nth = 1) => {
      let seen = 0;
      return types.findIndex((item) => item === type && ++seen === nth) + 1;
    };
    let received = 0;
    const receiveUntil = (end: number) => {
      fixture.events.slice(received, end).forEach((event) => socket.receive(event));
      received = end;
    };
    const bubble = () => screen.getByRole("listitem", { name: "Answer" });
    const timeline = () => within(bubble()).getByRole("list", { name: "Agentic search, step by step" });
    const status = () => within(bubble()).getByRole("status");
    const rounds = () => within(timeline()).getAllByTestId("agentic-round");

    // The plan, before anything is consulted: its reason and the child it chose.
    receiveUntil(upTo("retrieval.plan"));
    expect(within(timeline()).getByTestId("agentic-plan")).toHaveTextContent("Plan: Start with keywords for the agentic ensemble.");
    expect(within(timeline()).getByTestId("agentic-operation")).toHaveTextContent("BM25 keyword retriever · top 2");
    expect(status()).toHaveTextContent("Round 1: consulting the retrievers…");
    expect(rounds()[0]).toHaveTextContent("Waiting for 1 retriever…");
    // Only the summary line speaks: the timeline's own lines are not announced on each event.
    expect(timeline()).toHaveAttribute("aria-live", "off");

    // The child answers, then its pool is judged.
    receiveUntil(upTo("retrieval.node"));
    expect(within(rounds()[0]!).getByTestId("agentic-child")).toHaveTextContent("BM25 keyword retriever" + "top 2" + "2 results");
    expect(rounds()[0]).not.toHaveTextContent("Waiting");
    receiveUntil(upTo("retrieval.judging"));
    expect(within(rounds()[0]!).getByTestId("agentic-judging")).toHaveTextContent("Judging the pool…");
    expect(status()).toHaveTextContent("Round 1: judging the pool…");

    // The verdict: not sufficient, why, what was dropped, and what round 2 consults.
    receiveUntil(upTo("retrieval.round"));
    let verdict = within(rounds()[0]!).getByTestId("agentic-verdict");
    expect(verdict).toHaveTextContent("Not sufficient. The pool lacks how verdicts are judged; ask the second retriever.");
    expect(within(verdict).getByTestId("agentic-operation")).toHaveTextContent("BM25 keyword retriever · top 3");
    expect(rounds()[0]).toHaveTextContent("1 operation dropped: already consulted with this top_k and search text");
    expect(within(rounds()[0]!).queryByTestId("agentic-judging")).not.toBeInTheDocument();
    expect(rounds()).toHaveLength(2);
    expect(status()).toHaveTextContent("Round 2: consulting the retrievers…");

    // Round 2's verdict sends the first child after what is missing, with a search text of its own.
    receiveUntil(upTo("retrieval.round", 2));
    verdict = within(rounds()[1]!).getByTestId("agentic-verdict");
    expect(within(verdict).getByTestId("agentic-operation")).toHaveTextContent("BM25 keyword retriever · top 5 · unusable verdict asked again");
    receiveUntil(upTo("retrieval.node", 3));
    expect(within(rounds()[2]!).getByTestId("agentic-child")).toHaveTextContent("top 5" + "2 results" + "unusable verdict asked again");

    // Retrieval is over: the last round is not judged, and the timeline stays until the model reads.
    receiveUntil(upTo("retrieval.node", 4));
    expect(rounds()).toHaveLength(3);
    expect(rounds()[2]).toHaveTextContent("Not judged: this was the last round.");
    expect(status()).toHaveTextContent("Searching the documents…");

    // The model reads: the rounds fold into the trace, where the same timeline stays.
    receiveUntil(upTo("generation.started"));
    expect(status()).toHaveTextContent("Reading 4 passages…");
    expect(within(bubble()).queryByRole("list", { name: "Agentic search, step by step" })).not.toBeInTheDocument();
    const running = within(tracePanel()).getByRole("region", { name: "AgenticEnsembleRetriever (n1)" });
    expect(within(running).getAllByRole("tab")).toHaveLength(3);
    expect(within(running).getAllByTestId("agentic-verdict")).toHaveLength(2);
    receiveUntil(upTo("generation.delta"));

    const answer = screen.getByRole("listitem", { name: "Answer" });
    expect(answer).toHaveTextContent("The LLM plans which retrievers to consult");
    expect(within(answer).getByTestId("typing-cursor")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Stop" })).toBeInTheDocument();

    done = true;
    receiveUntil(fixture.events.length);
    // Once stored, the answer is read back with its timings and the chunks it was given.
    await waitFor(() => expect(screen.getByRole("listitem", { name: "Answer" })).toHaveTextContent("first token 120.5 ms · total 480.2 ms"));
    expect(screen.queryByTestId("typing-cursor")).not.toBeInTheDocument();
    const citation = screen.getAllByRole("button", { name: "Open source 2 (guide › agentic-retrieval.md)" })[0]!;
    // The stored trace now has the chunks' texts.
    expect(within(tracePanel()).getAllByText(/The agentic ensemble lets an LLM choose/).length).toBeGreaterThan(0);
    // The stored trace draws the rounds as the live run did: the plan, two verdicts, the last round unjudged.
    const rebuilt = within(tracePanel()).getByRole("list", { name: "Agentic search, step by step" });
    expect(within(rebuilt).getByTestId("agentic-plan")).toHaveTextContent("Start with keywords for the agentic ensemble.");
    expect(within(rebuilt).getAllByTestId("agentic-verdict")).toHaveLength(2);
    expect(within(rebuilt).getAllByTestId("agentic-round")[2]).toHaveTextContent("Not judged: this was the last round.");

    fireEvent.click(citation);
    const dialog = screen.getByRole("dialog", { name: "Source [2]" });
    expect(within(dialog).getByText("guide › agentic-retrieval.md")).toBeInTheDocument();
    expect(within(dialog).getByText("Page 1")).toBeInTheDocument();
    expect(within(dialog).getByText("The agentic ensemble lets an LLM choose which retrievers to consult, round by round.")).toBeInTheDocument();
    expect(within(dialog).getByRole("link", { name: "Show in the chunk browser" })).toHaveAttribute("href", "/knowledge-bases/5?document=2&position=0");
  });

  it("says what it reads, then shows an answer the documents do not hold as not found, with the closest passages", async () => {
    const closest = { n: 1, chunk_id: 31, document_id: 4, document_name: "bridge.md", position: 0, page: null, url: null,
      preview: "The Kestrel Bridge was designed by Ada Brandt." };
    const declined = { by: "support", why: "no sentence of the draft answer is supported by the passage it cites", closest: [closest] };
    let done = false;
    const answer: ChatMessage = { ...fixture.message, id: 2, text: "Not found in your documents: the passages retrieved do not answer this question.",
      citations: [], declined, unsupported: [], chunks: [] };
    setup({ stored: () => (done ? [QUESTION, answer] : []) });
    const socket = await openConversation();
    socket.open();
    ask("When was the lighthouse first lit?");
    socket.receive({ type: "run.started", message_id: 2, question_message_id: 1, pipeline_id: 1 });
    socket.receive({ type: "generation.started", passages: 3, tokens: 180 });
    expect(await screen.findByText("Reading 3 passages…")).toBeInTheDocument();
    socket.receive({ type: "generation.delta", text: "It was first lit in 1890 [1]." });
    done = true;
    socket.receive({ type: "answer.completed", message_id: 2, answer: answer.text, citations: [], declined, unsupported: [],
      trace: fixture.message.trace });
    const notFound = await screen.findByTestId("declined");
    expect(notFound).toHaveAccessibleName("Not found in your documents");
    expect(notFound).toHaveTextContent(answer.text);
    expect(within(notFound).queryByText("1890", { exact: false })).toBeNull();
    expect(within(notFound).queryByRole("button", { name: /Open source/ })).toBeNull();
    // The stored answer replaces the live one when it is read back; click whichever is shown.
    await waitFor(() => {
      fireEvent.click(within(screen.getByTestId("declined")).getByRole("button", { name: "bridge.md" }));
      expect(screen.getByRole("dialog")).toHaveTextContent("Ada Brandt");
    }, { timeout: 3000 });
  });

  it("flags a sentence its passage does not support, and its citation", async () => {
    const citation = { n: 1, chunk_id: 31, document_id: 4, document_name: "bridge.md", position: 0, page: null, url: null,
      preview: "The Kestrel Bridge was designed by Ada Brandt.", supported: false };
    const answer: ChatMessage = { ...fixture.message, id: 2, text: "The bridge is painted red [1].", citations: [citation],
      declined: null, unsupported: ["The bridge is painted red [1]."], chunks: [] };
    setup({ stored: () => [QUESTION, answer] });
    renderWithProviders(<ChatPage id={7} />);
    const warning = await screen.findByTestId("unsupported");
    expect(warning).toHaveTextContent("This sentence is not supported by the passage it cites:");
    expect(warning).toHaveTextContent("The bridge is painted red [1].");
    expect(screen.getByRole("button", { name: "Open source 1: bridge.md (does not support the sentence)" }))
      .toHaveClass("citation--unsupported");
  });

  it("cites a passage that runs across a page break by its first and last page", async () => {
    const citation = { n: 1, chunk_id: 31, document_id: 4, document_name: "bridge.pdf", position: 0, page: 1, last_page: 2,
      url: null, preview: "The Kestrel Bridge was designed by Ada Brandt.", supported: true };
    const answer: ChatMessage = { ...fixture.message, id: 2, text: "Ada Brandt designed it [1].", citations: [citation],
      declined: null, unsupported: [], chunks: [] };
    setup({ stored: () => [QUESTION, answer] });
    renderWithProviders(<ChatPage id={7} />);
    fireEvent.click(await screen.findByRole("button", { name: "Open source 1 (bridge.pdf)" }));
    expect(within(screen.getByRole("dialog")).getByText("Pages 1–2")).toBeInTheDocument();
  });

  it("stops a long answer and shows what was kept", async () => {
    let stopped = false;
    const cancelled: ChatMessage = { ...fixture.message, text: "The LLM plans", status: "cancelled", citations: [], trace: {}, chunks: [] };
    setup({ stored: () => (stopped ? [QUESTION, cancelled] : []) });
    const socket = await openConversation();
    socket.open();
    ask("Tell me everything");
    await waitFor(() => expect(socket.sent).toHaveLength(1));
    socket.receive({ type: "run.started", message_id: 2, question_message_id: 1, pipeline_id: 1 });
    socket.receive({ type: "generation.delta", text: "The LLM plans" });
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(socket.sent[1]).toEqual({ type: "cancel" });

    stopped = true;
    socket.receive({ type: "run.cancelled", message_id: 2, answer: "The LLM plans" });
    expect(await screen.findByText("Stopped before the end.")).toBeInTheDocument();
    expect(within(tracePanel()).getByText(/No trace was recorded/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Ask" })).toBeInTheDocument();
  });

  it("reconnects after a drop and shows the stored status of the run the drop lost", async () => {
    let dropped = false;
    const cancelled: ChatMessage = { ...fixture.message, text: "Half", status: "cancelled", citations: [], trace: {}, chunks: [] };
    setup({ stored: () => (dropped ? [QUESTION, cancelled] : []) });
    const socket = await openConversation();
    socket.open();
    ask("A question");
    socket.receive({ type: "run.started", message_id: 2, question_message_id: 1, pipeline_id: 1 });
    socket.receive({ type: "generation.delta", text: "Half" });

    dropped = true;
    socket.drop();
    expect(screen.getByText("Reconnecting…")).toBeInTheDocument();
    expect(screen.getByText(/The connection dropped/)).toBeInTheDocument();
    await waitFor(() => expect(chatSockets()).toHaveLength(2), { timeout: 3000 });
    chatSockets()[1]!.open();
    expect(await screen.findByText("Stopped before the end.")).toBeInTheDocument();
    expect(screen.getByText("Live")).toBeInTheDocument();
    expect(screen.getByText(fixture.question, { selector: ".bubble__text" })).toBeInTheDocument();
  });

  it("follows a run it did not ask for, replayed after a reload and then live, each event once", async () => {
    let stored: ChatMessage[] = [];
    setup({ stored: () => stored });
    const socket = await openConversation();
    socket.open();
    const started = { type: "run.started", message_id: 2, question_message_id: 1, pipeline_id: 1, question: "What is fusion?", seq: 1 } as const;
    const events: ServerEvent[] = [started, { type: "generation.delta", text: "Both rankings ", seq: 2 }];
    events.forEach((event) => socket.receive(event));
    expect(screen.getByText("What is fusion?", { selector: ".bubble__text" })).toBeInTheDocument();
    // The socket dropped and reopened: the server sends the events so far again, then the rest.
    events.forEach((event) => socket.receive(event));
    socket.receive({ type: "generation.delta", text: "are fused.", seq: 3 });
    const answer = screen.getByRole("listitem", { name: "Answer" });
    expect(answer).toHaveTextContent(/^Both rankings are fused\./);
    expect(screen.getByRole("button", { name: "Stop" })).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(socket.sent).toEqual([{ type: "cancel" }]);

    stored = [{ ...QUESTION, text: "What is fusion?" }, { ...fixture.message, text: "Both rankings are fused.", status: "cancelled", citations: [] }];
    socket.receive({ type: "run.cancelled", message_id: 2, answer: "Both rankings are fused.", trace: fixture.message.trace, seq: 4 });
    expect(await screen.findByText("Stopped before the end.")).toBeInTheDocument();
    // The trace recorded until it stopped is shown with the stopped answer.
    expect(within(tracePanel()).getByRole("region", { name: "AgenticEnsembleRetriever (n1)" })).toBeInTheDocument();
    expect(screen.getAllByText("What is fusion?", { selector: ".bubble__text" })).toHaveLength(1);
  });

  it("says why a question too long for the model was refused and gives it back to shorten", async () => {
    setup();
    const socket = await openConversation();
    socket.open();
    const question = "word ".repeat(1500).trim();
    ask(question);
    const error = "the question is too long for this pipeline's model: with its instructions it needs about 3900 tokens, and the model reads at most 3000; shorten the question";
    socket.receive({ type: "run.failed", code: "too_long", error, message_id: null });
    expect(await screen.findByText(error)).toBeInTheDocument();
    expect(screen.getByLabelText("Your question")).toHaveValue(question);
    expect(screen.queryByRole("listitem", { name: "Answer" })).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Ask" })).toBeEnabled();
  });

  it("shows a title set in another tab in the list and the header at once", async () => {
    setup({ conversations: [conversation({ title: "" }), conversation({ id: 3, title: "Older", updated_at: "2026-01-01T00:00:00Z" })] });
    await openConversation();
    listSocket().open();
    listSocket().receive({ type: "conversation.updated", conversation: conversation({ title: "What is fusion?", updated_at: "2026-02-01T00:00:00Z" }) });
    expect(await screen.findByRole("heading", { level: 2, name: "What is fusion?" })).toBeInTheDocument();
    const list = screen.getByRole("list", { name: "Conversations" });
    expect(within(list).getAllByRole("link").map((link) => link.textContent)).toEqual(["What is fusion?Agentic", "OlderAgentic"]);
    listSocket().receive({ type: "conversation.deleted", conversation_id: 3 });
    await waitFor(() => expect(within(list).getAllByRole("link")).toHaveLength(1));
  });

  it("asks over REST when the socket cannot connect, and retries and copies an answer", async () => {
    let answered = false;
    const api = setup({ stored: () => (answered ? [QUESTION, fixture.message] : []) });
    const socket = await openConversation();
    socket.drop();
    expect(screen.getByText("No live connection")).toBeInTheDocument();

    answered = true;
    ask(fixture.question);
    expect(await screen.findByRole("button", { name: "Open source 2 (guide › agentic-retrieval.md)" })).toBeInTheDocument();
    const post = api.mock.calls.find(([url, init]) => String(url).endsWith("/ask/") && init?.method === "POST")!;
    expect(JSON.parse(post[1]!.body as string)).toEqual({ question: fixture.question, pipeline_id: 1 });

    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    fireEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledWith(fixture.message.text);
    expect(await screen.findByText("Answer copied.")).toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "Ask again" }));
    await waitFor(() => expect(api.mock.calls.filter(([url]) => String(url).endsWith("/ask/"))).toHaveLength(2));
  });

  it("asks a question typed while the socket connects once it opens, so its rounds show live", async () => {
    const api = setup();
    const socket = await openConversation();
    ask("What is fusion?");
    // Shown at once as being asked; neither sent nor asked over REST while the socket connects.
    expect(await screen.findByRole("listitem", { name: "Answer" })).toBeInTheDocument();
    expect(socket.sent).toEqual([]);
    expect(screen.queryByRole("button", { name: "Ask" })).not.toBeInTheDocument();
    socket.open();
    await waitFor(() => expect(socket.sent).toEqual([{ type: "ask", question: "What is fusion?", pipeline_id: 1 }]));
    expect(api.mock.calls.some(([url]) => String(url).endsWith("/ask/"))).toBe(false);
  });

  it("withdraws a question still waiting for the socket when Stop is pressed, and gives it back", async () => {
    const api = setup();
    const socket = await openConversation();
    ask("What is fusion?");
    fireEvent.click(await screen.findByRole("button", { name: "Stop" }));
    expect(screen.getByLabelText("Your question")).toHaveValue("What is fusion?");
    expect(screen.queryByRole("listitem", { name: "Answer" })).not.toBeInTheDocument();
    socket.open();
    await waitFor(() => expect(screen.getByText("Live")).toBeInTheDocument());
    expect(socket.sent).toEqual([]);
    expect(api.mock.calls.some(([url]) => String(url).endsWith("/ask/"))).toBe(false);
  });

  it("asks over REST when the first connection fails while a question waits, and gives back a refused one", async () => {
    const api = setup({ ask: () =>
      jsonResponse({ detail: "You already have 2 answers being written: wait for one to finish." }, 429) });
    const socket = await openConversation();
    ask("What is fusion?");
    socket.drop();
    expect(await screen.findByText("You already have 2 answers being written: wait for one to finish.")).toBeInTheDocument();
    expect(api.mock.calls.filter(([url]) => String(url).endsWith("/ask/"))).toHaveLength(1);
    expect(screen.getByLabelText("Your question")).toHaveValue("What is fusion?");
    expect(screen.queryByRole("listitem", { name: "Answer" })).not.toBeInTheDocument();
  });

  it("says how many documents of a ready pipeline's knowledge base are still being read, and checks again", async () => {
    let reading = 3;
    setup({ listPipelines: () => [pipeline({ documents_reading: reading })] });
    await openConversation();
    expect(await screen.findByText("3 documents of Guide are still being read: answers cannot draw on them yet."))
      .toBeInTheDocument();
    reading = 0;
    fireEvent.click(screen.getByRole("button", { name: "Check again" }));
    await waitFor(() => expect(screen.queryByText(/still being read/)).not.toBeInTheDocument());
    expect(screen.getByRole("button", { name: "Ask" })).toBeInTheDocument();
  });

  it("refuses to ask a pipeline that is not ready and says what it waits for", async () => {
    const api = setup();
    await openConversation();
    fireEvent.change(screen.getByLabelText("Pipeline"), { target: { value: "2" } });
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("“Dense” cannot answer yet:");
    expect(alert).toHaveTextContent("the all-MiniLM-L6-v2 index of 'Guide' is being built");
    expect(screen.getByLabelText("Your question")).toBeDisabled();
    expect(screen.getByRole("button", { name: "Ask" })).toBeDisabled();
    const patch = api.mock.calls.find(([, init]) => init?.method === "PATCH")!;
    expect(JSON.parse(patch[1]!.body as string)).toEqual({ pipeline: 2 });
  });

  it("starts, renames and deletes conversations", async () => {
    const api = setup({ conversations: [conversation({ title: "Old title" })] });
    renderWithProviders(<ChatPage id={7} />);
    const list = await screen.findByRole("list", { name: "Conversations" });
    expect(within(list).getByRole("link", { name: /Old title/ })).toHaveAttribute("aria-current", "page");

    fireEvent.click(screen.getByRole("button", { name: "Rename Old title" }));
    const dialog = screen.getByRole("dialog", { name: "Rename conversation" });
    fireEvent.change(within(dialog).getByLabelText("Title"), { target: { value: "Fusion questions" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(await within(list).findByRole("link", { name: /Fusion questions/ })).toBeInTheDocument();

    fireEvent.click(screen.getByRole("button", { name: "New conversation" }));
    await waitFor(() => expect(window.location.pathname).toBe("/chat/8"));
    const created = api.mock.calls.find(([url, init]) => url === "/api/v1/conversations/" && init?.method === "POST")!;
    expect(JSON.parse(created[1]!.body as string)).toEqual({ pipeline: 1 });

    fireEvent.click(screen.getByRole("button", { name: "Delete Fusion questions" }));
    fireEvent.click(within(screen.getByRole("dialog", { name: "Delete this conversation?" })).getByRole("button", { name: "Delete" }));
    expect(await screen.findByText("Conversation “Fusion questions” deleted.")).toBeInTheDocument();
    expect(within(screen.getByRole("list", { name: "Conversations" })).queryByRole("link", { name: /Fusion questions/ })).not.toBeInTheDocument();
  });
});

describe("applyConversationEvent", () => {
  const conversation = (id: number, updated_at: string) => ({ id, title: "", pipeline: 1, updated_at } as unknown as Conversation);

  it("keeps one row for a conversation announced by the socket and then by its own creation", () => {
    const created = conversation(7, "2026-12-01T10:00:00Z");
    const announced = applyConversationEvent([conversation(3, "2026-11-30T10:00:00Z")], { type: "conversation.created", conversation: created });
    const both = applyConversationEvent(announced, { type: "conversation.created", conversation: created });
    expect(both.map((item) => item.id)).toEqual([7, 3]);
  });
});
