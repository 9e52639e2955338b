import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { ChatMessage, ServerEvent, StrategyTrace, TraceNode } from "../../api/chat";
import i18n from "../../i18n";
import { AgenticTimelineView } from "./AgenticTimelineView";
import agentic from "./fixtures/agentic.json";
import {
  addLiveJudging, addLiveNode, addLivePlan, addLiveRound, agenticTimeline, EMPTY_LIVE, liveAgenticTimeline, type LiveRetrieval,
} from "./model";

/** The fixture: one stored answer and the websocket events of the same run (frontend/scripts/trace_fixtures.py). */
const fixture = agentic as unknown as { message: ChatMessage; events: ServerEvent[] };

function storedNode(): TraceNode {
  const trace = fixture.message.trace as StrategyTrace;
  return trace.steps.find((step) => step.step === "retrieve")!.node as TraceNode;
}

function apply(live: LiveRetrieval, event: ServerEvent): LiveRetrieval {
  switch (event.type) {
    case "retrieval.plan":
      return addLivePlan(live, event.node_id, event.plan);
    case "retrieval.judging":
      return addLiveJudging(live, event.node_id, event.round);
    case "retrieval.node":
      return addLiveNode(live, event.node);
    case "retrieval.round":
      return addLiveRound(live, event.node_id, event.round);
    default:
      return live;
  }
}

/** The live state after every retrieval event before the agentic node itself completes. */
function liveUntilTheNodeCompletes(): LiveRetrieval {
  const last = fixture.events.findIndex((event) => event.type === "retrieval.node" && event.node.id === "n1");
  return fixture.events.slice(0, last).reduce(apply, EMPTY_LIVE);
}

describe("AgenticTimelineView", () => {
  it("rebuilds from the stored trace the very timeline the live events drew", () => {
    const live = liveAgenticTimeline(liveUntilTheNodeCompletes(), "n1");
    expect(live.done).toBe(false);
    const drawn = render(<AgenticTimelineView timeline={live} />);
    const html = drawn.container.innerHTML;
    expect(within(drawn.container).getAllByTestId("agentic-round")).toHaveLength(3);
    drawn.unmount();

    const reloaded = render(<AgenticTimelineView timeline={agenticTimeline(storedNode())} />);
    expect(reloaded.container.innerHTML).toBe(html);
  });

  it("names each child consulted with its top_k and results, and its search text only when it has its own", () => {
    render(<AgenticTimelineView timeline={agenticTimeline(storedNode())} />);
    const rounds = screen.getAllByTestId("agentic-round");
    expect(within(rounds[0]!).getByTestId("agentic-child")).toHaveTextContent(/^BM25Retrievertop 22 results$/);
    expect(within(rounds[2]!).getByTestId("agentic-child")).toHaveTextContent(/^BM25Retrievertop 52 resultsunusable verdict asked again$/);
    expect(within(rounds[2]!).getByText("unusable verdict asked again").tagName).toBe("Q");
  });

  it("says rounds, judging, drops and fallbacks in the reader's language", async () => {
    const node = storedNode();
    const plan = { ...node.details!.plan!, attempts: 3, fallback: "planning failed after 3 attempt(s); consulting every child at its own top_k" };
    const failed = { ...node.rounds[1]!, verdict: null, fallback: "judging failed after 3 attempt(s); stopping with the pool", attempts: 3 };
    const broken: TraceNode = { ...node, details: { ...node.details, plan }, rounds: [node.rounds[0]!, failed] };
    // Judging round 2 while it runs: its verdict has not come.
    const running = liveAgenticTimeline(fixture.events.slice(0, 7).reduce(apply, EMPTY_LIVE), "n1");

    await i18n.changeLanguage("es");
    const { rerender } = render(<AgenticTimelineView timeline={agenticTimeline(broken)} />);
    let rounds = screen.getAllByTestId("agentic-round");
    expect(within(rounds[0]!).getByText("Ronda 1")).toBeInTheDocument();
    expect(rounds[0]).toHaveTextContent("No es suficiente.");
    expect(rounds[0]).toHaveTextContent("1 operación descartada: ya se consultó con este top_k y este texto de búsqueda");
    expect(screen.getByTestId("agentic-plan")).toHaveTextContent(
      "Alternativa: la planificación falló tras 3 intentos; se consulta cada recuperador con su propio top_k.");
    expect(rounds[1]).toHaveTextContent("Alternativa: la evaluación falló tras 3 intentos; la búsqueda termina con el conjunto que tiene.");
    expect(screen.getAllByTestId("agentic-operation")[0]).toHaveTextContent("BM25 keyword retriever · 2 mejores");

    rerender(<AgenticTimelineView timeline={running} />);
    rounds = screen.getAllByTestId("agentic-round");
    expect(within(rounds[1]!).getByText("Ronda 2")).toBeInTheDocument();
    expect(within(rounds[1]!).getByTestId("agentic-judging")).toHaveTextContent("Evaluando el conjunto…");

    await i18n.changeLanguage("zh-Hant");
    rerender(<AgenticTimelineView timeline={running} />);
    rounds = screen.getAllByTestId("agentic-round");
    expect(within(rounds[1]!).getByText("第 2 輪")).toBeInTheDocument();
    expect(within(rounds[1]!).getByTestId("agentic-judging")).toHaveTextContent("正在評估候選集…");
    expect(rounds[0]).toHaveTextContent("捨棄了 1 個操作：已用相同的 top_k 與搜尋文字查詢過");
  });

  it("says why a search off the question was dropped in the reader's language", async () => {
    const node = storedNode();
    const offQuestion = { child: 0, query: "fusión", code: "off_question", why: 'the query "fusión" shares no word with the question' };
    const first = { ...node.rounds[0]!, dropped: [offQuestion] };
    const timeline = agenticTimeline({ ...node, rounds: [first, ...node.rounds.slice(1)] });

    await i18n.changeLanguage("es");
    const { rerender } = render(<AgenticTimelineView timeline={timeline} />);
    expect(screen.getAllByTestId("agentic-round")[0]).toHaveTextContent(
      "1 operación descartada: el texto de búsqueda no comparte ninguna palabra con la pregunta");
    await i18n.changeLanguage("zh-Hant");
    rerender(<AgenticTimelineView timeline={timeline} />);
    expect(screen.getAllByTestId("agentic-round")[0]).toHaveTextContent("捨棄了 1 個操作：搜尋文字與問題沒有任何共同的詞");
    await i18n.changeLanguage("en");
  });

  it("reads an older trace: children by the catalog's names, no search texts, no plan operations", () => {
    const node = storedNode();
    const older: TraceNode = {
      ...node,
      details: {},
      rounds: node.rounds.map(({ next_operations: _next, plan, ...round }) => {
        const operations = round.operations.map(({ child, top_k }) => ({ child, top_k }));
        if (!plan) return { ...round, operations };
        const { operations: _planned, ...reasonOnly } = plan;
        return { ...round, operations, plan: reasonOnly };
      }),
    };
    render(<AgenticTimelineView timeline={agenticTimeline(older)} childNames={["BM25Retriever", "DenseEmbeddingRetriever"]} />);
    // The plan's reason still shows; with no operations recorded, the rounds say what ran.
    expect(screen.getByTestId("agentic-plan")).toHaveTextContent(/^Plan: Start with keywords for the agentic ensemble\.$/);
    expect(screen.queryAllByTestId("agentic-operation")).toHaveLength(0);
    const rounds = screen.getAllByTestId("agentic-round");
    expect(rounds).toHaveLength(3);
    // Without next_operations a verdict that is not sufficient went on; the query is not shown without its operation's.
    expect(within(rounds[2]!).getByTestId("agentic-child")).toHaveTextContent(/^BM25Retrievertop 52 results$/);
  });
});
