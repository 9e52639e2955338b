"""What gllm-rag's Strategies page promises a Python user (issue 20, items 5-7, and item 9 as the
app sees it; the page is ../shared/seeds/002)."""

import asyncio

import pytest

from rag.documents.models import Chunk
from rag.llms import OpenAICompatibleLLM
from rag.retrievers import Hit
from rag.retrievers.sparse import BM25Retriever
from rag.strategies import MapReduceRAG, NaiveRAG, ResponseSynthesizer, RoutedStrategy, StrategyError
from rag.strategies.components import LLMReranker
from tests.support.scripted_openai import ScriptedOpenAIServer, chat_stream, tool_call_response

from ..retrievers.corpus import corpus_chunks
from .doubles import FixedRouter, HasWord, KeepWord, Reverse, Variants

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"


def synthesizer(server):
    return ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url=server.base_url, model="m"))


def bm25(top_k=3):
    retriever = BM25Retriever(top_k=top_k)
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


def steps(state):
    return [step["step"] for step in state["trace"]["steps"]]


# -- 5. NaiveRAG "Attributes: query_expansion, reranker, relevance_filter" -------------------------

def test_naive_rag_exposes_query_expansion_relevance_filter_and_reranker_as_attributes(scripted_openai):
    strategy = NaiveRAG(bm25(), synthesizer(scripted_openai))
    assert (strategy.query_expansion, strategy.relevance_filter, strategy.reranker) == (None, None, None)

    strategy.query_expansion = Variants()
    strategy.relevance_filter = KeepWord(word="o")
    strategy.reranker = Reverse()
    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
    state = strategy.run("Rust memory safety")

    assert steps(state) == ["transform_query", "retrieve[0]", "retrieve[1]", "retrieve[2]", "fuse", "filter",
                            "rerank", "generate"]
    assert strategy.query_expansion is strategy.query_transformer


def test_query_expansion_is_the_query_transformer_parameter_and_takes_only_a_query_transformer(scripted_openai):
    variants = Variants()
    strategy = NaiveRAG(bm25(), synthesizer(scripted_openai), query_transformer=variants)
    assert strategy.query_expansion is variants
    with pytest.raises(ValueError, match="query_expansion takes a query transformer"):
        strategy.query_expansion = Reverse()
    strategy.query_expansion = None
    assert strategy.query_transformer is None


def test_naive_rag_without_retriever_or_synthesizer_is_a_value_error():
    with pytest.raises(ValueError, match="retriever"):
        NaiveRAG(None, ResponseSynthesizer())
    with pytest.raises(TypeError, match="both by position and by name"):
        NaiveRAG(bm25(), retriever=bm25())


# -- 6. MapReduceRAG fuse_fn: "str | Callable[[list[list[Chunk]]], list[Chunk]]" --------------------

def test_a_fuse_fn_receives_the_variants_results_as_chunks_and_returns_chunks(scripted_openai):
    received = []

    def interleave(rankings):
        received.append(rankings)
        seen, fused = set(), []
        for row in zip(*rankings, strict=False):
            for chunk in row:
                if chunk.id not in seen:
                    seen.add(chunk.id)
                    fused.append(chunk)
        return fused

    scripted_openai.enqueue(CHAT, chat_stream(["fused"]))
    strategy = MapReduceRAG(Variants(), bm25(top_k=2), synthesizer(scripted_openai), interleave, 3)
    state = strategy.run("Django admin panel")

    [rankings] = received
    assert len(rankings) == 3 and all(isinstance(chunk, Chunk) for ranking in rankings for chunk in ranking)
    assert [chunk["chunk_id"] for chunk in state["chunks"]] == [chunk.id for chunk in interleave(rankings)][:3]
    fuse = state["trace"]["steps"][4]
    assert fuse["method"] == "custom" and [row["score"] for row in fuse["results"]] == [1.0, 0.5, 1 / 3]
    assert fuse["results"][0]["sources"][0]["child"] == 0


@pytest.mark.parametrize(
    ("fuse_fn", "message"),
    [(lambda rankings: [Hit(rankings[0][0], 1.0)], "must return a list of Chunk, got a list of Hit"),
     (lambda rankings: "chunks", "must return a list of Chunk, got str"),
     (lambda rankings: [rankings[0][0], rankings[0][0]], "returned chunks \\[\\d+\\] more than once"),
     (lambda rankings: [Chunk(999, 9, 0, "made up")], "no retrieval found: \\[999\\]")],
)
def test_a_fuse_fn_that_does_not_return_retrieved_chunks_is_a_value_error(scripted_openai, fuse_fn, message):
    strategy = MapReduceRAG(Variants(), bm25(), synthesizer(scripted_openai), fuse_fn=fuse_fn)
    with pytest.raises(StrategyError, match=message) as failure:
        strategy.run("Rust")
    assert isinstance(failure.value.__cause__, ValueError)


# -- 7. RoutedStrategy.add_branch(name, classifier: "Callable[[str], bool | Awaitable[bool]]", branch)
#       and set_router(router), each "Returns: RoutedStrategy — this strategy instance for fluent
#       chaining" ---------------------------------------------------------------------------------

def answering(server, text, times=1):
    """A NaiveRAG whose LLM (``server``) answers ``text``, ``times`` times."""
    for _ in range(times):
        server.enqueue(CHAT, chat_stream([text]))
    return NaiveRAG(bm25(), synthesizer(server))


async def about_cells(question: str) -> bool:
    await asyncio.sleep(0)
    return "cell" in question.lower()


def test_add_branch_takes_sync_and_async_predicates_and_chains(scripted_openai):
    with ScriptedOpenAIServer() as code_llm, ScriptedOpenAIServer() as cell_llm:
        strategy = (RoutedStrategy()
                    .add_branch("code", classifier=lambda question: "rust" in question.lower(),
                                branch=answering(code_llm, "Rust is memory safe through ownership [1]."))
                    .add_branch("science", classifier=about_cells, branch=answering(cell_llm, "The mitochondria powers the cell [1]."))
                    .add_branch("places", classifier=HasWord(word="peru"), branch=NaiveRAG(bm25(), synthesizer(
                        scripted_openai))))
        assert isinstance(strategy, RoutedStrategy)
        check_routes(strategy)


def check_routes(strategy):
    science = strategy.run("What powers the cell?")
    assert (science["trace"]["steps"][0]["branch"], science["response"]) == (
        "science", "The mitochondria powers the cell [1].")
    assert "about_cells matched" in science["trace"]["steps"][0]["why"]
    code = strategy.run("Is Rust memory safe?")
    assert (code["trace"]["steps"][0]["branch"], code["response"]) == (
        "code", "Rust is memory safe through ownership [1].")
    assert strategy.run("Tell me about the Moon")["trace"]["steps"][0]["branch"] == "no_match"


async def test_an_async_predicate_is_awaited_even_from_inside_a_running_loop(scripted_openai):
    strategy = RoutedStrategy().add_branch("science", classifier=about_cells, branch=NaiveRAG(
        bm25(), synthesizer(scripted_openai)))
    assert strategy.branch("science").classifier.matches("cell walls") is True
    scripted_openai.enqueue(CHAT, chat_stream(["async"]))
    state = await strategy.arun("Which cell organelle makes ATP?")
    assert state["trace"]["steps"][0]["branch"] == "science"


def test_set_router_returns_the_strategy_for_chaining(scripted_openai):
    strategy = RoutedStrategy().set_router(FixedRouter(answer="code")).add_branch(
        "code", branch=answering(scripted_openai, "Rust guarantees memory safety through ownership [1]."))
    assert strategy.run("How does Rust stay memory safe?")["response"] == \
        "Rust guarantees memory safety through ownership [1]."
    assert strategy.set_router(FixedRouter(answer="code")) is strategy


def test_a_predicate_must_answer_true_or_false_and_fit_the_routing_mode(scripted_openai):
    strategy = RoutedStrategy().add_branch("vague", classifier=lambda question: "maybe",
                                           branch=NaiveRAG(bm25(), synthesizer(scripted_openai)))
    with pytest.raises(StrategyError, match="must return True or False, got 'maybe'"):
        strategy.run("q")
    with pytest.raises(ValueError, match="do not mix"):
        RoutedStrategy().set_router(FixedRouter(answer="a")).add_branch(
            "a", classifier=lambda question: True, branch=NaiveRAG(bm25(), synthesizer(scripted_openai)))


# -- 9. In the app, an LLM re-ranker's unusable order "is shown in the trace, never silently" ----

def test_an_unusable_llm_order_fails_the_run_and_the_trace_shows_why(scripted_openai):
    for _ in range(2):
        scripted_openai.enqueue(CHAT, tool_call_response("rank_passages", {"order": [0, 0]}))
    reranker = LLMReranker(llm=OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m",
                                                   function_calling="tools"), function_call_max_trials=2)
    strategy = NaiveRAG(bm25(), synthesizer(scripted_openai), reranker=reranker)

    events = list(strategy.stream("Python Rust Django React programming language"))

    assert events[-1]["type"] == "run.failed"
    assert events[-1]["error"].startswith("the LLM gave no usable order after 2 attempt(s)")
    rerank = next(step for step in events[-1]["trace"]["steps"] if step["step"] == "rerank")
    assert rerank["error"] == events[-1]["error"] == events[-1]["trace"]["error"]
    assert len(rerank["details"]["attempts"]) == 2
    assert not any(event["type"] == "generation.delta" for event in events)
