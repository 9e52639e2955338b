"""Regenerate the TraceView's fixtures from the real engine.

Each fixture is one answer exactly as the chat API stores and returns it (``trace``, ``rounds``,
``chunks``, ``citations``, ``text``) plus the websocket events of the same run, so the frontend's
tests read the shapes the backend really produces. Every strategy is built by the engine's factory
from pipeline JSON over a small corpus, and its LLM is the scripted OpenAI-compatible server of
the Python tests, answering from the scripts below.

Run from the repository root (after ``make setup``)::

    PYTHONPATH=backend:. .venv/bin/python frontend/scripts/trace_fixtures.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rag.components import load_components
from rag.core import build
from rag.documents.models import Chunk, SourceDocument
from rag.strategies.traces import agentic_rounds
from tests.support.scripted_openai import ScriptedOpenAIServer, chat_stream, tool_call_response

OUT = Path(__file__).resolve().parents[1] / "src" / "components" / "TraceView" / "fixtures"
CHAT = "/v1/chat/completions"

PAGES = {
    1: ("guide › retrievers.md", [
        "BM25 ranks chunks by keyword overlap, weighting rare words more than common ones.",
        "Dense retrieval embeds the question and every chunk, and returns the nearest vectors.",
        "A hybrid retriever fuses BM25 and dense rankings with reciprocal rank fusion (RRF).",
        "Reciprocal rank fusion scores a chunk by the sum of 1 / (60 + rank) over the rankings.",
        "Retrieve-then-expand returns each retrieved chunk together with its neighbours.",
    ]),
    2: ("guide › agentic-retrieval.md", [
        "The agentic ensemble lets an LLM choose which retrievers to consult, round by round.",
        "Before the first round the LLM plans: it picks children from a catalog and a top_k for each.",
        "After each round but the last, the LLM judges whether the pool answers the question.",
        "An unusable verdict is asked again with its problems; a plan that keeps failing consults every child.",
        "The trace shows every round: the children chosen, the chunks added and the verdict.",
    ]),
    3: ("guide › getting-started.md", [
        "Run make run, open the address it prints and sign in with the demo account.",
        "Upload PDF, Word, HTML, Markdown or text files into a knowledge base.",
        "Build a pipeline in the builder, then ask questions in the chat.",
    ]),
}


def corpus() -> tuple[dict[int, dict[int, Chunk]], dict[int, SourceDocument]]:
    chunks = {
        document: {position: Chunk(id=document * 100 + position, document_id=document, position=position, text=text,
                                   metadata={"page": position // 2 + 1})
                   for position, text in enumerate(texts)}
        for document, (_, texts) in PAGES.items()
    }
    documents = {document: SourceDocument(id=document, name=name, mime="text/markdown", sha256="0" * 64)
                 for document, (name, _) in PAGES.items()}
    return chunks, documents


def llm(server: ScriptedOpenAIServer) -> dict[str, Any]:
    return {"component": "OpenAICompatibleLLM",
            "params": {"base_url": server.base_url, "model": "scripted-model", "function_calling": "tools"}}


def bm25(top_k: int, **params: Any) -> dict[str, Any]:
    return {"component": "BM25Retriever", "params": {"top_k": top_k, **params}}


def synthesizer(server: ScriptedOpenAIServer, **params: Any) -> dict[str, Any]:
    return {"component": "ResponseSynthesizer", "params": {"llm": llm(server), **params}}


def verdict(reason: str, operations: list[tuple[Any, ...]] | None = None, sufficient: bool = False,
            raw: str | None = None) -> dict[str, Any]:
    """A scripted verdict; each operation is (child, top_k) or (child, top_k, query)."""
    if raw is not None:
        return tool_call_response("retrieval_verdict", raw)
    return tool_call_response("retrieval_verdict", {
        "sufficient": sufficient, "reason": reason,
        "operations": [dict(zip(("child", "top_k", "query"), operation, strict=False)) for operation in operations or []]})


def run(name: str, strategy: dict[str, Any], question: str, script: list[Any], server: ScriptedOpenAIServer) -> None:
    for response in script:
        server.enqueue(CHAT, response)
    chunks, documents = corpus()
    built = build(strategy, kind="strategy", registry=load_components(),
                  infra={"chunks": chunks, "documents": documents})
    events: list[dict[str, Any]] = []
    state: dict[str, Any] | None = None
    for event in built.stream(question):
        event = dict(event)
        if event["type"] == "answer.completed":
            state = event.pop("state")
        elif event["type"] == "run.failed":
            raise SystemExit(f"{name}: the run failed: {event['error']}")
        events.append(event)
    assert state is not None and server.pending() == 0, f"{name}: the script was not used up"
    message = {
        "id": 2, "role": "assistant", "text": state["response"], "citations": state["citations"], "status": "done",
        "error": "", "pipeline": 1, "timings": {"first_token_ms": 120.5, "total_ms": 480.2},
        "trace": state["trace"], "rounds": agentic_rounds(state["trace"]), "chunks": state["chunks_sent"],
        "created_at": "2025-01-01T12:00:00Z",
    }
    run_started = {"type": "run.started", "message_id": 2, "question_message_id": 1, "pipeline_id": 1}
    completed = events[-1]
    completed["message_id"] = 2
    fixture = {"question": question, "message": message, "events": [run_started, *events]}
    (OUT / f"{name}.json").write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{name}: {len(events)} events, steps {[step['step'] for step in state['trace']['steps']]}")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with ScriptedOpenAIServer() as server:
        # A plain tree: RRF over two BM25 retrievers, the second expanding its chunks into windows.
        run("plain", {"component": "NaiveRAG", "params": {
            "retriever": {"component": "EnsembleRetriever", "params": {"top_k": 4, "children": [
                bm25(3), bm25(2, k1=1.2, enable_retrieve_then_expand=True, expand_window=3)]}},
            "response_synthesizer": synthesizer(server)}},
            "How does a hybrid retriever fuse rankings?",
            [chat_stream(["A hybrid retriever fuses BM25 and dense rankings ", "with **reciprocal rank fusion** [1]. ",
                          "Each chunk scores `1 / (60 + rank)` per ranking [2]."])], server)

        # Agentic, three rounds; the first judgement is unusable (an unknown child) and asked again, and
        # its retry repeats a consulted (child, top_k), which is dropped; the second sends the first
        # child after what is still missing, with a search text of its own.
        run("agentic", {"component": "NaiveRAG", "params": {
            "retriever": {"component": "AgenticEnsembleRetriever", "params": {
                "max_iters": 3, "max_chunks": 6, "llm_model": llm(server),
                "children": [bm25(2), bm25(3, k1=1.2)]}},
            "response_synthesizer": synthesizer(server)}},
            "How does the agentic ensemble decide which retrievers to consult?",
            [verdict("Start with keywords for the agentic ensemble.", [(0, 2)]),
             verdict("Need more.", [(7, 3)]),
             verdict("The pool lacks how verdicts are judged; ask the second retriever.", [(1, 3), (0, 2)]),
             verdict("Still missing the retry rule; search for it by name.", [(0, 5, "unusable verdict asked again")]),
             chat_stream(["The LLM plans which retrievers to consult, round by round [2], ",
                          "and judges whether the pool answers the question after each round [4]."])],
            server)

        # CRAG: an LLM judge finds one chunk of two relevant, so the answer uses only that one.
        run("crag", {"component": "CRAG", "params": {
            "retriever": bm25(2),
            "relevance_evaluator": {"component": "LLMRelevanceEvaluator", "params": {"llm": llm(server)}},
            "response_synthesizer": synthesizer(server)}},
            "What does reciprocal rank fusion compute?",
            [tool_call_response("judge_passages", {"verdicts": [
                {"id": 0, "relevant": True, "reason": "Defines the RRF score."},
                {"id": 1, "relevant": False, "reason": "Mentions RRF but does not say what it computes."}]}),
             chat_stream(["It sums 1 / (60 + rank) over the rankings [1]."])], server)

        # A token budget too small for every chunk: the lowest-ranked ones are dropped.
        run("budget", {"component": "NaiveRAG", "params": {
            "retriever": bm25(8),
            "response_synthesizer": synthesizer(server, max_input_tokens=200)}},
            "What does the agentic ensemble do in each round?",
            [chat_stream(["Each round consults the chosen retrievers [1]."])], server)

        # Routed (router mode): an LLM router sends the question to a branch.
        run("routed", {"component": "RoutedStrategy", "params": {
            "router": {"component": "LLMRouter", "params": {
                "llm": llm(server), "valid_routes": ["docs", "smalltalk"], "default_route": "docs"}},
            "branches": [
                {"component": "RouteBranch", "params": {"name": "docs", "strategy": {"component": "NaiveRAG", "params": {
                    "retriever": bm25(2), "response_synthesizer": synthesizer(server)}}}},
                {"component": "RouteBranch", "params": {"name": "smalltalk", "strategy": {"component": "NaiveRAG",
                    "params": {"retriever": bm25(1), "response_synthesizer": synthesizer(server)}}}}]}},
            "How do I start Trellis?",
            [tool_call_response("choose_route", {"route": "docs", "reason": "A question about using Trellis."}),
             chat_stream(["Run make run and open the address it prints [1]."])], server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
