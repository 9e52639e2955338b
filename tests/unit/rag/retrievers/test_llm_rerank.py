"""The LLM re-ranker: a complete order or a retry, then a readable failure in the trace."""

import pytest

from rag.llms import OpenAICompatibleLLM
from rag.retrievers import RetrievalError
from rag.retrievers.llm_rerank import LLMRerankRetriever, order_problems
from tests.support.scripted_openai import tool_call_response

from .fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"


def reranker(server, *, top_k=2, trials=3, candidates=4):
    child = FixedRetriever(top_k=candidates).plan(*[(1, position) for position in range(10)])
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="m", function_calling="tools")
    retriever = LLMRerankRetriever(children=[child], llm_model=llm, top_k=top_k, function_call_max_trials=trials)
    for node in (retriever, child):
        node.inject_infra(chunks=make_documents(10))
    return retriever


def order(*ids):
    return tool_call_response("rank_passages", {"order": list(ids)})


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ([2, 0, 1], "ids [3] are missing"),
        ([2, 0, 1, 1, 3], "ids [1] appear more than once"),
        ([2, 0, 1, 3, 7], "ids [7] are not candidates"),
    ],
)
def test_an_incomplete_order_is_rejected_and_asked_again_with_the_problem(scripted_openai, answer, problem):
    scripted_openai.enqueue(CHAT, order(*answer))
    scripted_openai.enqueue(CHAT, order(3, 1, 0, 2))
    chunks, node = reranker(scripted_openai).retrieve("q")
    assert [chunk.id for chunk in chunks] == [103, 101]
    assert [bool(attempt["problems"]) for attempt in node["details"]["attempts"]] == [True, False]
    retry = scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"]
    assert problem in retry


def test_the_childs_top_k_sets_the_candidates_and_top_k_is_kept_only_after_validation(scripted_openai):
    scripted_openai.enqueue(CHAT, order(5, 4, 3, 2, 1, 0))
    chunks, node = reranker(scripted_openai, top_k=3, candidates=6).retrieve("q")
    prompt = scripted_openai.requests_to(CHAT)[0].body["messages"][-1]["content"]
    assert "[5] d1p5" in prompt and "[6]" not in prompt
    assert [chunk.id for chunk in chunks] == [105, 104, 103]
    assert [row["score"] for row in node["results"]] == pytest.approx([1.0, 5 / 6, 4 / 6])


def test_after_every_trial_fails_the_node_fails_with_a_readable_error(scripted_openai):
    for _ in range(2):
        scripted_openai.enqueue(CHAT, order(0, 0, 0, 0))
    with pytest.raises(RetrievalError) as failure:
        reranker(scripted_openai, trials=2).retrieve("q")
    node = failure.value.node
    assert node.error.startswith("the LLM gave no usable order after 2 attempt(s)")
    assert node.children[0].component == "FixedRetriever" and len(node.details["attempts"]) == 2


def test_order_problems_accepts_only_permutations():
    assert order_problems([1, 0, 2], 3) == []
    assert order_problems([True, 0, 2], 3) == ["ids [1] are missing; every id must appear exactly once"]
