"""Every branch of every strategy, answered by a scripted OpenAI-compatible server."""

import pytest

from rag.llms import OpenAICompatibleLLM, estimate_tokens
from rag.retrievers import Hit
from rag.retrievers.sparse import BM25Retriever
from rag.strategies import (
    CRAG,
    NO_MATCH,
    MapReduceRAG,
    NaiveRAG,
    ResponseSynthesizer,
    RoutedStrategy,
    StrategyError,
)
from rag.strategies.routed import RouteBranch
from tests.support.scripted_openai import ScriptedError, chat_response, chat_stream

from ..retrievers.corpus import corpus_chunks
from .doubles import FixedRouter, FixedWeb, HasWord, JudgeByWord, Variants

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"


def synthesizer(server, **params):
    return ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url=server.base_url, model="m"), **params)


def bm25(top_k=3):
    retriever = BM25Retriever(top_k=top_k)
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


def prompt_of(server, index=0):
    return server.requests_to(CHAT)[index].body["messages"][-1]["content"]


def test_naive_rag_streams_tokens_and_maps_citations_to_the_chunks_sent(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Rust is memory safe ", "[1]", " thanks to ownership [1][9]."]))
    strategy = NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai))
    events = list(strategy.stream("How does Rust guarantee memory safety?"))
    kinds = [event["type"] for event in events]
    assert kinds[0] == "retrieval.node" and kinds[-1] == "answer.completed"
    assert [event["text"] for event in events if event["type"] == "generation.delta"] == [
        "Rust is memory safe ", "[1]", " thanks to ownership [1][9]."]
    state = events[-1]["state"]
    assert state["response"] == "Rust is memory safe [1] thanks to ownership [1][9]."
    assert state["chunks_sent"][0]["chunk_id"] == 201
    # [9] names no chunk that was sent: it is not a citation.
    assert [(c["n"], c["chunk_id"]) for c in state["citations"]] == [(1, 201)]
    assert "[1]" in prompt_of(scripted_openai) and "Rust guarantees memory safety" in prompt_of(scripted_openai)
    assert [step["step"] for step in state["trace"]["steps"]] == ["retrieve", "generate"]


def test_the_token_budget_drops_the_lowest_ranked_chunks_and_says_so(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_response("ok [1]"))
    hits = [Hit(chunk, 1.0) for positions in corpus_chunks().values() for chunk in positions.values()]
    small = synthesizer(scripted_openai, max_input_tokens=200)
    prepared = small.prepare("What is in the corpus?", hits)
    sent = [hit.chunk.id for hit in prepared.sent]
    assert sent == [hit.chunk.id for hit in hits[: len(sent)]] and 0 < len(sent) < len(hits)
    assert prepared.budget["dropped"] == [hit.chunk.id for hit in hits[len(sent):]]
    assert prepared.budget["used_tokens"] <= 200 and prepared.budget["examples"] == 0
    text = "".join(message["content"] for message in prepared.messages)
    assert all(hit.chunk.text not in text for hit in hits[len(prepared.sent):])
    answer = small.answer(prepared)
    assert [c["chunk_id"] for c in small.citations(answer, prepared)] == [hits[0].chunk.id]


def test_answers_follow_the_questions_language():
    prepared_es = ResponseSynthesizer().prepare("¿Qué es la mitocondria?", [])
    prepared_zh = ResponseSynthesizer().prepare("什麼是粒線體？", [])
    assert prepared_es.messages[0]["content"].endswith("Responde en español.")
    assert "繁體中文" in prepared_zh.messages[0]["content"]
    assert estimate_tokens("粒線體") == 3


@pytest.mark.parametrize(
    ("word", "decision", "answered_from"),
    [
        ("", "relevant", [201, 200]),            # every chunk contains "": all relevant
        ("ownership", "ambiguous", [201]),      # only the Rust chunk
        ("zebra", "irrelevant", [-7]),          # none: the web retriever answers
    ],
)
def test_crag_takes_the_branch_its_evaluator_decides(scripted_openai, word, decision, answered_from):
    scripted_openai.enqueue(CHAT, chat_stream(["answer [1]"]))
    strategy = CRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai),
                    relevance_evaluator=JudgeByWord(word=word), web_retriever=FixedWeb())
    state = strategy.run("Rust memory safety programming language")
    assert state["retrieval_decision"] == decision
    assert [chunk["chunk_id"] for chunk in state["chunks_sent"]] == answered_from
    decide = next(step for step in state["trace"]["steps"] if step["step"] == "decide")
    assert decide["decision"] == decision and len(decide["verdicts"]) == len(state["chunks"]) == 2


def test_crag_without_a_web_retriever_answers_irrelevant_questions_from_the_original_chunks(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["no idea"]))
    strategy = CRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai),
                    relevance_evaluator=JudgeByWord(word="zebra"))
    state = strategy.run("Rust memory safety programming language")
    assert state["retrieval_decision"] == "irrelevant"
    assert [chunk["chunk_id"] for chunk in state["chunks_sent"]] == [chunk["chunk_id"] for chunk in state["chunks"]]


def test_crag_without_an_evaluator_counts_everything_relevant(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["fine"]))
    state = CRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai)).run("Rust memory")
    assert state["retrieval_decision"] == "relevant"


def test_map_reduce_fuses_the_variants_rankings_with_rrf_and_keeps_top_k(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["fused"]))
    strategy = MapReduceRAG(transformer=Variants(), retriever=bm25(top_k=2),
                            response_synthesizer=synthesizer(scripted_openai), top_k=3)
    state = strategy.run("Django admin panel")
    steps = [step["step"] for step in state["trace"]["steps"]]
    assert steps == ["transform_query", "retrieve[0]", "retrieve[1]", "retrieve[2]", "fuse", "generate"]
    fuse = state["trace"]["steps"][4]
    assert fuse["method"] == "rrf" and len(state["chunks"]) == 3
    assert {chunk["chunk_id"] for chunk in state["chunks"]} <= {202, 100, 201, 200, 102}


def test_map_reduce_accepts_a_custom_fusion_callable_and_checks_what_it_returns(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["custom"]))

    def last_ranking_only(rankings):
        return list(reversed(rankings[-1]))

    strategy = MapReduceRAG(transformer=Variants(), retriever=bm25(top_k=2),
                            response_synthesizer=synthesizer(scripted_openai), fuse_fn=last_ranking_only)
    state = strategy.run("anything")
    assert state["trace"]["steps"][4]["method"] == "custom"
    retrieved_last = [row["chunk_id"] for row in state["trace"]["steps"][3]["node"]["results"]]
    assert [chunk["chunk_id"] for chunk in state["chunks"]] == list(reversed(retrieved_last))
    with pytest.raises(ValueError, match="cannot be saved as JSON"):
        strategy.to_config()

    def invents(rankings):
        from rag.documents.models import Chunk

        return [Chunk(999, 9, 0, "made up")]

    broken = MapReduceRAG(transformer=Variants(), retriever=bm25(), response_synthesizer=synthesizer(scripted_openai),
                          fuse_fn=invents)
    with pytest.raises(StrategyError, match="chunks no retrieval found: \\[999\\]"):
        broken.run("anything")


def routed(server, *branches, router=None, no_match=None):
    strategy = RoutedStrategy(no_match=no_match)
    if router is not None:
        strategy.set_router(router)
    for name, classifier in branches:
        strategy.add_branch(name, classifier=classifier,
                            branch=NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(server)))
    return strategy


def test_classifier_mode_takes_the_first_matching_branch_in_order(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["The mitochondria powers the cell [1]."]))
    strategy = routed(scripted_openai, ("code", HasWord(word="rust")), ("science", HasWord(word="cell")),
                      ("both", HasWord(word="cell")))
    state = strategy.run("What powers the cell?")
    route = state["trace"]["steps"][0]
    assert (route["branch"], route["mode"]) == ("science", "classifier")
    assert "first match" in route["why"]
    assert state["trace"]["steps"][1]["trace"]["strategy"] == "NaiveRAG"
    assert state["response"] == "The mitochondria powers the cell [1]."


def test_router_mode_lets_the_router_choose_and_no_match_gets_the_reserved_route(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["from code"]))
    strategy = routed(scripted_openai, ("code", None), ("science", None), router=FixedRouter(answer="code"))
    state = strategy.run("question")
    assert state["trace"]["steps"][0]["branch"] == "code"
    assert state["trace"]["steps"][0]["details"]["routes"] == ["code", "science", NO_MATCH]

    refusing = routed(scripted_openai, ("code", None), router=FixedRouter(answer=NO_MATCH))
    state = refusing.run("¿Qué es esto?")
    assert state["trace"]["steps"][0]["branch"] == NO_MATCH
    assert state["response"] == "Ninguna rama de este pipeline atiende esta pregunta."


def test_no_match_runs_the_fallback_strategy_when_there_is_one(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Machu Picchu is an Inca citadel in Peru [1]."]))
    fallback = NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai))
    strategy = routed(scripted_openai, ("code", HasWord(word="rust")), no_match=fallback)
    assert strategy.run("Tell me about Peru")["response"] == "Machu Picchu is an Inca citadel in Peru [1]."


def test_replacing_the_router_keeps_the_branches(scripted_openai):
    strategy = routed(scripted_openai, ("code", None), ("science", None), router=FixedRouter(answer="code"))
    strategy.set_router(FixedRouter(answer="science"))
    assert [branch.params.name for branch in strategy.branches] == ["code", "science"]
    scripted_openai.enqueue(CHAT, chat_stream(["science it is"]))
    assert strategy.run("q")["trace"]["steps"][0]["branch"] == "science"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda s: routed(s, ("a", HasWord(word="x")), ("a", HasWord(word="y"))), "unique; repeated: a"),
        (lambda s: routed(s, (NO_MATCH, HasWord(word="x"))), "reserved"),
        (lambda s: routed(s, ("a", HasWord(word="x")), router=FixedRouter(answer="a")), "do not mix"),
        (lambda s: routed(s, ("a", None)), "every branch needs a classifier"),
        (lambda s: RoutedStrategy().add_branch("a", classifier=HasWord(word="x")), "needs a strategy"),
    ],
)
def test_routing_mistakes_are_value_errors(scripted_openai, build, message):
    with pytest.raises(ValueError, match=message):
        build(scripted_openai)


def test_a_branch_may_be_a_pipeline_document(scripted_openai):
    strategy = RoutedStrategy()
    strategy.add_branch("docs", classifier=HasWord(word="x"),
                        branch={"name": "p", "version": 1, "strategy": {"component": "NaiveRAG"}})
    branch = strategy.branch("docs")
    assert isinstance(branch, RouteBranch) and branch.strategy.NAME == "NaiveRAG"


def test_top_k_below_one_and_missing_components_are_refused_at_construction(scripted_openai):
    with pytest.raises(ValueError, match="top_k"):
        NaiveRAG(top_k=0)
    with pytest.raises(ValueError, match="top_k must be ≥ 1"):
        next(NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai)).stream("q", top_k=0))


def test_a_broken_llm_fails_the_run_with_a_readable_error_and_the_trace_so_far(scripted_openai):
    scripted_openai.enqueue(CHAT, ScriptedError(500, {"error": {"message": "model crashed"}}, {"retry-after-ms": "1"}))
    scripted_openai.enqueue(CHAT, ScriptedError(500, {"error": {"message": "model crashed"}}, {"retry-after-ms": "1"}))
    scripted_openai.enqueue(CHAT, ScriptedError(500, {"error": {"message": "model crashed"}}, {"retry-after-ms": "1"}))
    strategy = NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai))
    events = list(strategy.stream("Rust"))
    assert events[-1]["type"] == "run.failed"
    assert events[-1]["error"].endswith("answered HTTP 500") and "model crashed" not in events[-1]["error"]
    assert events[-1]["trace"]["steps"][0]["step"] == "retrieve"


def test_closing_the_stream_cancels_the_generation(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream([f"token{i} " for i in range(200)], interval=0.01))
    strategy = NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai))
    stream = strategy.stream("Rust")
    deltas = []
    for event in stream:
        if event["type"] == "generation.delta":
            deltas.append(event["text"])
            if len(deltas) == 3:
                break
    stream.close()
    assert deltas == ["token0 ", "token1 ", "token2 "]


async def test_astream_yields_the_same_events_without_blocking_the_loop(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["a", "b"]))
    strategy = NaiveRAG(retriever=bm25(), response_synthesizer=synthesizer(scripted_openai))
    kinds = [event["type"] async for event in strategy.astream("Rust")]
    assert kinds[-3:] == ["generation.delta", "generation.delta", "answer.completed"]
