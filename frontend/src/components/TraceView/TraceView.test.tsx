import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { ChatMessage, ServerEvent, StrategyTrace, TraceNode } from "../../api/chat";
import agentic from "./fixtures/agentic.json";
import budget from "./fixtures/budget.json";
import crag from "./fixtures/crag.json";
import plain from "./fixtures/plain.json";
import routed from "./fixtures/routed.json";
import { addLiveNode, addLiveRound, chunkFacts, EMPTY_LIVE, type LiveRetrieval } from "./model";
import { LiveTraceView, TraceView } from "./TraceView";

/** A fixture: one stored answer and the websocket events of the same run (frontend/scripts/trace_fixtures.py). */
interface Fixture {
  question: string;
  message: ChatMessage;
  events: ServerEvent[];
}

function stored(fixture: unknown) {
  const { message } = fixture as Fixture;
  const trace = message.trace as StrategyTrace;
  return render(<TraceView trace={trace} facts={chunkFacts(trace, message.chunks, message.citations)} />);
}

function results(node: HTMLElement) {
  return within(within(node).getAllByRole("list", { name: "Results" })[0]!).getAllByRole("listitem");
}

describe("TraceView, from stored traces", () => {
  it("draws a plain tree: fusion over two retrievers, with timings, scores, sources and expanded windows", () => {
    stored(plain);
    const fusion = screen.getByRole("region", { name: "EnsembleRetriever (n1)" });
    expect(within(fusion).getByText("top 4")).toBeInTheDocument();
    const [first, second] = results(fusion);
    // Fused results say which child found them, at which rank.
    expect(within(first!).getByText("#1")).toBeInTheDocument();
    expect(within(first!).getAllByText("BM25Retriever #1")).toHaveLength(2);
    // Chunks given to the model show their text and their number.
    expect(within(first!).getByText("[1]")).toBeInTheDocument();
    expect(within(first!).getByText(/A hybrid retriever fuses BM25 and dense rankings/)).toBeInTheDocument();
    expect(within(second!).getByText("BM25Retriever #2")).toBeInTheDocument();
    expect(fusion.querySelector(".score-bar__fill")).toHaveStyle({ width: "100%" });
    // Each score names its scale: the fusion's rank-fusion score, the children's BM25 scores.
    expect(within(fusion).getAllByTestId("score-scale")[0]).toHaveTextContent("rank-fusion score");
    expect(first!.querySelector(".trace-result__score")!.getAttribute("title")).toMatch(/^rank-fusion score 0\.0\d+/);

    const children = within(fusion).getAllByRole("region", { name: /BM25Retriever/ });
    expect(children).toHaveLength(2);
    expect(within(children[1]!).getByText("expanded: positions 1–4")).toBeInTheDocument();
    expect(within(children[0]!).getByTestId("score-scale")).toHaveTextContent("BM25 score");
    expect(within(children[0]!).getByText(/ms$/, { selector: ".trace-node__time" })).toBeInTheDocument();
    expect(screen.getByRole("region", { name: "Answer" })).toHaveTextContent(/\d+ of 3000 tokens used/);
  });

  it("gives an agentic node one tab per round: children and top_k, chunks added, pool, verdict, retries", () => {
    stored(agentic);
    const node = screen.getByRole("region", { name: "AgenticEnsembleRetriever (n1)" });
    const tabs = within(node).getAllByRole("tab");
    expect(tabs.map((tab) => tab.textContent)).toEqual(["Round 1", "Round 2", "Round 3"]);
    // Round 1's verdict needed a second attempt: the tab and the panel say so.
    expect(within(tabs[0]!).getByLabelText("retried or fell back")).toBeInTheDocument();
    let panel = within(node).getByRole("tabpanel");
    expect(panel).toHaveTextContent("Start with keywords for the agentic ensemble.");
    expect(within(panel).getByText("child 0")).toBeInTheDocument();
    expect(within(panel).getByText("top 2")).toBeInTheDocument();
    expect(within(panel).getByText("2 chunks added")).toBeInTheDocument();
    expect(within(panel).getByText("Not sufficient.")).toBeInTheDocument();
    expect(panel).toHaveTextContent("The pool lacks how verdicts are judged; ask the second retriever.");
    expect(within(panel).getByText("Retried: 2 attempts")).toBeInTheDocument();
    expect(within(panel).getByText(/no child 7 in the catalog/)).toBeInTheDocument();
    // An operation the model repeated: which one, then why, each in its place.
    expect(within(panel).getByText("1 operation dropped:")).toBeInTheDocument();
    expect(within(panel).getByText("child 0 (BM25Retriever), top 2: already consulted with this top_k and search text")).toBeInTheDocument();
    // Chunks added read as their text and where they are, like every other chunk of the trace.
    const added = [...panel.querySelectorAll(".round__added > li")];
    expect(added).toHaveLength(2);
    for (const item of added) expect(item).toHaveTextContent(/^\S.+ guide › (agentic-retrieval|retrievers)\.md · position \d$/);
    expect(within(panel).getByText(/The agentic ensemble lets an LLM choose which retrievers to consult/)).toBeInTheDocument();

    fireEvent.keyDown(tabs[0]!, { key: "ArrowRight" });
    expect(tabs[1]).toHaveAttribute("aria-selected", "true");
    expect(tabs[1]).toHaveFocus();
    panel = within(node).getByRole("tabpanel");
    expect(within(panel).getByText("top 3")).toBeInTheDocument();
    expect(within(panel).getByText("1 chunk added")).toBeInTheDocument();

    fireEvent.click(tabs[2]!);
    panel = within(node).getByRole("tabpanel");
    expect(within(panel).getByText("Not judged: this was the last round.")).toBeInTheDocument();
    expect(within(panel).getByText("top 5")).toBeInTheDocument();
    expect(within(panel).getByText("returned 2 chunks (n4)")).toBeInTheDocument();

    // The chart: one bar (new chunks) and one point (pool size) per round.
    const chart = within(node).getByRole("img", { name: /Pool size and new chunks per round/ });
    expect(chart).toHaveAccessibleName(expect.stringContaining("round 1: pool 2, 2 new; round 2: pool 3, 1 new; round 3: pool 4, 1 new"));
    expect(within(node).getAllByTestId("chart-bar")).toHaveLength(3);
    expect(within(node).getAllByTestId("chart-point")).toHaveLength(3);
    expect(within(node).getByText("3 retrievers consulted")).toBeInTheDocument();
  });

  it("says a plan made by the one-part rule took no LLM call, instead of counting 0 attempts", () => {
    const fixture = structuredClone(agentic) as unknown as Fixture;
    const node = (fixture.message.trace as StrategyTrace).steps[0]!.node as TraceNode;
    const rule = { ...node.rounds[0]!.plan!, reason: "The question asks one thing: Fusion (ensemble) searches it whole.",
      attempts: 0, dropped: [], attempt_log: [], decided_by: "rule" as const };
    node.rounds[0]!.plan = rule;
    node.details = { ...node.details, plan: rule };
    stored(fixture);
    const panel = within(screen.getByRole("region", { name: "AgenticEnsembleRetriever (n1)" })).getByRole("tabpanel");
    expect(panel).toHaveTextContent("The question asks one thing: Fusion (ensemble) searches it whole.");
    expect(within(panel).getByText("Decided without an LLM call")).toBeInTheDocument();
    expect(within(panel).queryByText("0 attempts")).not.toBeInTheDocument();
  });

  it("shows CRAG's ambiguous branch, why it was taken, and the verdict on each chunk", () => {
    stored(crag);
    const decision = screen.getByRole("region", { name: "Relevance decision" });
    expect(within(decision).getByText("Branch taken: ambiguous (answer from the relevant chunks only)")).toBeInTheDocument();
    expect(decision).toHaveTextContent("1 of 2 chunks judged relevant");
    const verdicts = within(within(decision).getByRole("list", { name: "Verdicts per chunk" })).getAllByRole("listitem");
    expect(verdicts[0]).toHaveTextContent("relevant");
    expect(verdicts[0]).toHaveTextContent("Defines the RRF score.");
    expect(verdicts[1]).toHaveTextContent("not relevant");
    expect(verdicts[1]).toHaveTextContent("Mentions RRF but does not say what it computes.");
    // Only the relevant chunk reached the model.
    expect(within(verdicts[0]!).getByText("[1]")).toBeInTheDocument();
    expect(within(verdicts[1]!).queryByText(/\[\d\]/)).not.toBeInTheDocument();
  });

  it("marks the chunks the token budget dropped", () => {
    stored(budget);
    const retrieval = screen.getByRole("region", { name: "BM25Retriever (n1)" });
    const rows = results(retrieval);
    const dropped = rows.filter((row) => within(row).queryByText("dropped: token budget"));
    expect(dropped).toHaveLength(4);
    expect(rows.slice(0, 4).every((row) => within(row).queryByText(/^\[\d\]$/))).toBe(true);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent("194 of 200 tokens used");
    expect(within(answer).getByText("4 chunks dropped by the token budget")).toBeInTheDocument();
  });

  it("says when the passages were cut to the local model's fixed reading budget", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    Object.assign(generate.budget as object, {
      limited_by: "reading_tokens", new_tokens: 158, reading_tokens_set_by: "model default",
      model_limits: { context_tokens: 4096, answer_tokens: 384, reading_tokens: 240 },
    });
    stored(fixture);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent("Reading budget 240 new tokens: the model's fixed default, so its answer starts within seconds");

    cleanup();
    Object.assign(generate.budget as object, { parts: 2, model_limits: { reading_tokens: 480 } });
    stored(fixture);
    expect(screen.getByRole("region", { name: "Answer" })).toHaveTextContent(
      "Reading budget 480 new tokens: the model's fixed default once for each of the 2 parts of the question searched on their own");

    cleanup();
    Object.assign(generate.budget as object, { limited_by: "max_input_tokens" });
    stored(fixture);
    expect(screen.getByRole("region", { name: "Answer" })).not.toHaveTextContent("Reading budget");
  });

  it("shows the question a follow-up searched, and how the answer check decided", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const steps = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps;
    steps.unshift({ step: "search_question", elapsed_ms: 850, question: "When did it open?",
      search_question: "When did the Kestrel Bridge open?", rewritten: true, refers_to: "the Kestrel Bridge", reason: "refers to earlier turns" });
    const generate = steps.find((step) => step.step === "generate")!;
    Object.assign(generate, { draft: "It opened in 1890 [1].",
      grounding: { declined_by: "support", sentences: [], supported_citations: 0, citations_checked: 1 } });
    stored(fixture);
    const search = screen.getByRole("region", { name: "Search question" });
    expect(search).toHaveTextContent("Asked: When did it open?");
    expect(search).toHaveTextContent("Searched: When did the Kestrel Bridge open?");
    expect(search).toHaveTextContent("“the Kestrel Bridge” named in its place");
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent("declined: nothing the draft said is supported by the passage it cites");
    expect(answer).toHaveTextContent("Draft (not shown): It opened in 1890 [1].");
  });

  it("says an answer was declined for stating no number when the question asked for one", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    Object.assign(generate, { draft: "The judge reads the pool [1].",
      grounding: { declined_by: "number", sentences: [], supported_citations: 1, citations_checked: 1 } });
    stored(fixture);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent("declined: the question asks for a number and the draft states none");
    expect(answer).not.toHaveTextContent("1 of 1 citations supported");
  });

  it("says a follow-up whose referent was not found was searched beside the previous question", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.unshift({ step: "search_question", elapsed_ms: 900,
      question: "¿Cuántas juntas de examen existen en ella?", rewritten: true, refers_to: null,
      search_question: "¿Cuántas juntas de examen existen en ella? (¿Qué juntas hay en la India?)", reason: "no words found" });
    stored(fixture);
    expect(screen.getByRole("region", { name: "Search question" })).toHaveTextContent(
      "no referent was found, so it was searched beside the previous question; the model answers it as asked");
  });

  it("says when no passage was close enough to the question to ask the model", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    Object.assign(generate, { relevance: { best: 0.7912, floor: 0.82, set_by: "embedding model",
      model: "MultilingualE5SmallEmbedding", similarities: [0.7912, 0.77], declined: true } });
    stored(fixture);
    expect(screen.getByRole("region", { name: "Answer" })).toHaveTextContent(
      "Relevance: best passage 0.79, below the floor 0.82 (MultilingualE5SmallEmbedding): declined before the model was asked");
  });

  it("says which passages were left out as repeats, shortened, given with history, or cited for the model", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    const sent = (generate.budget as { sent: number[] }).sent;
    Object.assign(generate.budget as object, {
      history_turns: 2,
      duplicates: [{ chunk_id: sent[1], of: sent[0] }],
      trimmed: [{ chunk_id: sent[0], reason: "overlap", characters: 180, of: 240 }, { chunk_id: sent[1], reason: "budget", characters: 50, of: 300 }],
    });
    generate.citation_added = { n: 1, why: "the answer repeats this passage without citing it" };
    stored(fixture);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(within(answer).getByText("1 chunk left out as a repeat of another passage")).toBeInTheDocument();
    expect(answer).toHaveTextContent("Overlap with a neighbour removed from: 1 chunk");
    expect(answer).toHaveTextContent("Earlier turns given: 2 questions and answers");
    expect(answer).toHaveTextContent("Citation added: [1] — the answer repeats that passage without citing it");
  });

  it("says which numbers were added to an answer that named no passage", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    generate.citations_marked = [2, 1];
    stored(fixture);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent("Citation added: [2] — the answer named no passage, and this one holds what it says");
    expect(answer).toHaveTextContent("Citation added: [1] — the answer named no passage, and this one holds what it says");
  });

  it("says which part of a two-part question was asked again on its own, and what it added", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    generate.parts_asked_again = [
      { part: "what year was it painted", added: "It was painted in 1503 [2].", replaced: [] },
      { part: "who painted it", added: null, supported: [] },
    ];
    stored(fixture);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent("Asked again on its own: “what year was it painted” — added: It was painted in 1503 [2].");
    expect(answer).toHaveTextContent("Asked again on its own: “who painted it” — no passage supports its answer; nothing added");
  });

  it("says a draft repeating a worked example was asked again without them", () => {
    const fixture = structuredClone(budget) as unknown as { message: ChatMessage };
    const generate = (fixture.message.trace as { steps: Record<string, unknown>[] }).steps.find((step) => step.step === "generate")!;
    generate.asked_without_examples = { why: "the draft repeats a worked example instead of its passages",
      draft: "The engineer Clara Soto designed the bridge [2].", copied: "The engineer Clara Soto designed the bridge [2]." };
    stored(fixture);
    const answer = screen.getByRole("region", { name: "Answer" });
    expect(answer).toHaveTextContent(
      "Asked again without the worked examples: the draft “The engineer Clara Soto designed the bridge [2].” repeated a worked example instead of its passages");
  });

  it("shows the branch a routed strategy took, why, and the branch's own trace", () => {
    stored(routed);
    const route = screen.getByRole("region", { name: "Routing" });
    expect(within(route).getByText("Branch taken: docs")).toBeInTheDocument();
    expect(route).toHaveTextContent("A question about using Trellis.");
    expect(route).toHaveTextContent("a router");
    const branch = screen.getByRole("region", { name: "Branch" });
    expect(within(branch).getByText("Branch “docs” answered with NaiveRAG:")).toBeInTheDocument();
    expect(within(branch).getByRole("region", { name: "BM25Retriever (n1)" })).toBeInTheDocument();
  });

  it("reopens a past answer exactly as the finished run showed it", () => {
    const { message, events } = agentic as unknown as Fixture;
    const completed = events.find((event) => event.type === "answer.completed") as { trace: StrategyTrace };
    const live = render(<TraceView trace={completed.trace} facts={chunkFacts(completed.trace, message.chunks, message.citations)} />);
    // Element ids come from useId and differ between renders; everything else must not.
    const markup = (html: string) => html.replace(/_r_[0-9a-z]+_/g, "id");
    const html = markup(live.container.innerHTML);
    live.unmount();
    expect(markup(stored(agentic).container.innerHTML)).toBe(html);
  });
});

describe("LiveTraceView", () => {
  it("fills in from retrieval events: rounds as they are judged, then the finished tree", () => {
    const { events } = agentic as unknown as Fixture;
    let live: LiveRetrieval = EMPTY_LIVE;
    const view = render(<LiveTraceView live={live} facts={chunkFacts(null, [], [], live.nodes)} writing={false} />);
    const retrieval = events.filter((event) => event.type === "retrieval.node" || event.type === "retrieval.round");
    const apply = (event: ServerEvent) => {
      if (event.type === "retrieval.node") live = addLiveNode(live, event.node);
      if (event.type === "retrieval.round") live = addLiveRound(live, event.node_id, event.round);
      view.rerender(<LiveTraceView live={live} facts={chunkFacts(null, [], [], live.nodes)} writing={false} />);
    };

    // The first child answers, then round 1 is judged: the agentic node shows as running.
    retrieval.slice(0, 2).forEach(apply);
    expect(screen.getByText("Retrieving…")).toBeInTheDocument();
    const running = screen.getByRole("region", { name: "AgenticEnsembleRetriever (n1)" });
    expect(within(running).getByText("Running")).toBeInTheDocument();
    expect(within(running).getAllByRole("tab")).toHaveLength(1);
    expect(screen.getByRole("region", { name: "BM25Retriever (n2)" })).toBeInTheDocument();

    retrieval.slice(2, 6).forEach(apply);
    expect(within(screen.getByRole("region", { name: "AgenticEnsembleRetriever (n1)" })).getAllByRole("tab")).toHaveLength(3);

    // While the run is live, every chunk reads as its text and its document, never as a bare id.
    const rows = screen.getAllByRole("list", { name: "Results" }).flatMap((list) => within(list).getAllByRole("listitem"));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toHaveTextContent(/guide › [a-z-]+\.md · position \d/);
      expect(row).not.toHaveTextContent(/chunk \d+/);
    }

    // The agentic node completes and takes its children with it.
    retrieval.slice(6).forEach(apply);
    const done = screen.getByRole("region", { name: "AgenticEnsembleRetriever (n1)" });
    expect(within(done).queryByText("Running")).not.toBeInTheDocument();
    expect(screen.getAllByRole("region", { name: "AgenticEnsembleRetriever (n1)" })).toHaveLength(1);
    expect(within(done).getAllByRole("region", { name: /BM25Retriever/ })).toHaveLength(3);
  });
});

describe("TraceView, of a stopped answer", () => {
  it("shows what ran before the stop: the retrieval, the time and calls so far, and the step it stopped in", () => {
    const { message } = plain as unknown as Fixture;
    const full = message.trace as StrategyTrace;
    const retrieve = full.steps.find((step) => step.step === "retrieve")!;
    const trace: StrategyTrace = {
      ...full, cancelled: true, llm_calls: 1, elapsed_ms: 4300,
      steps: [retrieve, { step: "generate", elapsed_ms: 4100, interrupted: true }],
    };
    render(<TraceView trace={trace} facts={chunkFacts(trace, message.chunks, [])} />);
    const summary = screen.getByText("1 LLM call").closest("header")!;
    expect(within(summary).getByText("Stopped")).toBeInTheDocument();
    expect(screen.getByRole("region", { name: "EnsembleRetriever (n1)" })).toBeInTheDocument();
    expect(within(screen.getByRole("region", { name: "Answer" })).getByText("Stopped here")).toBeInTheDocument();
  });

  it("shows the retrievers that had finished in a retrieval the stop interrupted", () => {
    const { message } = plain as unknown as Fixture;
    const full = message.trace as StrategyTrace;
    const retrieve = full.steps.find((step) => step.step === "retrieve")!;
    const fusion = retrieve.node as { children: unknown[] };
    const trace: StrategyTrace = {
      ...full, cancelled: true, llm_calls: 0, elapsed_ms: 900,
      steps: [{ step: "retrieve", query: retrieve.query, elapsed_ms: 850, interrupted: true, nodes: fusion.children }],
    };
    render(<TraceView trace={trace} facts={chunkFacts(trace, [], [])} />);
    expect(screen.getAllByRole("region", { name: /BM25Retriever|DenseEmbeddingRetriever/ }).length).toBeGreaterThan(0);
    expect(screen.queryByText("This retrieval left no trace.")).not.toBeInTheDocument();
    expect(screen.getByText("Stopped here")).toBeInTheDocument();
  });
});

describe("TraceView, with hostile data in the trace", () => {
  it("links web search results only to http(s) pages and shows any other address as text", () => {
    const trace = {
      strategy: "CRAG", params: {}, llm_calls: 0, elapsed_ms: 3,
      steps: [{ step: "web_search", elapsed_ms: 1, results: [
        { chunk_id: 1, text: "A page.", metadata: { url: "javascript:alert(document.cookie)", title: "Click me" } },
        { chunk_id: 2, text: "Another.", metadata: { url: " JAVA\tSCRIPT:alert(1)" } },
        { chunk_id: 4, text: "A data page.", metadata: { url: "data:text/html,<script>alert(1)</script>", title: "Data" } },
        { chunk_id: 3, text: "A real one.", metadata: { url: "https://example.org/pears", title: "<b>Pears</b>" } },
      ] }],
    } as unknown as StrategyTrace;
    const { container } = render(<TraceView trace={trace} facts={chunkFacts(trace, [], [])} />);
    const links = Array.from(container.querySelectorAll("a"));
    expect(links.map((link) => link.getAttribute("href"))).toEqual(["https://example.org/pears"]);
    expect(links[0]).toHaveTextContent("<b>Pears</b>");
    expect(container.querySelector("b")).toBeNull();
    expect(screen.getByText("Click me")).toBeInTheDocument();
    expect(screen.getByText("Data")).toBeInTheDocument();
    expect(screen.getByText(/JAVA\s*SCRIPT:alert\(1\)/)).toBeInTheDocument();
  });
});
