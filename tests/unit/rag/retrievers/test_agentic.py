"""The agentic ensemble against a scripted OpenAI-compatible server (DESIGN §5)."""

import pytest

from rag.llms import OpenAICompatibleLLM
from rag.retrievers.composite import AgenticEnsembleRetriever
from rag.tracing import TraceRecorder, recording
from tests.support.scripted_openai import tool_call_response

from .fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"


def verdict(sufficient=False, operations=(), reason="because"):
    return tool_call_response("retrieval_verdict", {"sufficient": sufficient, "reason": reason,
                                                    "operations": [{"child": c, "top_k": k} for c, k in operations]})


def agentic(server, *, max_iters=3, max_chunks=10, trials=3):
    """Child 0 returns document 1's chunks 0..9; child 1 returns document 2's chunks 0..9."""
    children = [FixedRetriever(top_k=4).plan(*[(1, p) for p in range(10)]),
                FixedRetriever(top_k=3).plan(*[(2, p) for p in range(10)])]
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted-model", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=children, llm_model=llm, max_iters=max_iters,
                                         max_chunks=max_chunks, function_call_max_trials=trials)
    documents = make_documents(10, 10)
    for node in [retriever, *children]:
        node.inject_infra(chunks=documents)
    return retriever


def run(retriever):
    recorder = TraceRecorder()
    with recording(recorder):
        chunks, node = retriever.retrieve("question")
    return chunks, node, recorder.llm_calls


def test_a_plan_and_one_round_cost_one_call_when_max_iters_is_one(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    chunks, node, calls = run(agentic(scripted_openai, max_iters=1))
    assert calls == 1 == len(scripted_openai.requests_to(CHAT))
    assert [chunk.id for chunk in chunks] == [100, 101]
    assert [(r["round"], r["operations"], r["added"], r["pool_size"], r["verdict"]) for r in node["rounds"]] == [
        (1, [{"child": 0, "top_k": 2}], [100, 101], 2, None)]
    assert node["rounds"][0]["plan"]["attempts"] == 1 and node["rounds"][0]["plan"]["fallback"] is None


def test_a_sufficient_judgement_stops_after_the_first_round(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 2)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True, reason="enough"))
    chunks, node, calls = run(agentic(scripted_openai))
    assert calls == 2
    assert [chunk.id for chunk in chunks] == [200, 201]
    assert node["rounds"][0]["verdict"] == {"sufficient": True, "reason": "enough"}
    assert len(node["rounds"]) == 1 and [child["class"] for child in node["children"]] == ["FixedRetriever"]


def test_an_insufficient_pool_leads_to_a_second_round_with_other_children(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 3)], reason="need code"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    chunks, node, calls = run(agentic(scripted_openai))
    assert calls == 3
    assert [r["operations"] for r in node["rounds"]] == [[{"child": 0, "top_k": 2}], [{"child": 1, "top_k": 3}]]
    assert node["rounds"][1]["added"] == [200, 201, 202] and node["rounds"][1]["pool_size"] == 5
    # best rank first: ranks 1 from both children, then 2, then 3
    assert [chunk.id for chunk in chunks] == [100, 200, 101, 201, 202]
    assert len(node["children"]) == 2


def test_three_rounds_cost_at_most_one_plan_and_two_judgements(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 1)]))
    _, node, calls = run(agentic(scripted_openai, max_iters=3))
    assert calls == 3 and len(node["rounds"]) == 3
    assert node["rounds"][2]["verdict"] is None and node["rounds"][2]["attempts"] == 0
    assert scripted_openai.pending(CHAT) == 0


def test_malformed_json_is_retried_with_the_problem_and_both_attempts_are_recorded(scripted_openai):
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", '{"sufficient": false, "reason": '))
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1)]))
    _, node, calls = run(agentic(scripted_openai, max_iters=1))
    assert calls == 2
    plan = node["rounds"][0]["plan"]
    assert plan["attempts"] == 2 and plan["fallback"] is None
    retry = scripted_openai.requests_to(CHAT)[1].body["messages"]
    assert "not valid JSON" in retry[-1]["content"]


def test_a_plan_that_never_becomes_usable_falls_back_to_every_child_at_its_own_top_k(scripted_openai):
    for _ in range(3):
        scripted_openai.enqueue(CHAT, verdict(operations=[(7, 2)]))
    chunks, node, calls = run(agentic(scripted_openai, max_iters=1, trials=3))
    assert calls == 3
    assert node["rounds"][0]["operations"] == [{"child": 0, "top_k": 4}, {"child": 1, "top_k": 3}]
    assert "planning failed after 3 attempt(s)" in node["rounds"][0]["plan"]["fallback"]
    assert len(chunks) == 7


def test_a_judgement_that_never_becomes_usable_stops_with_the_pool(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", "nonsense"))
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))  # repeats a consulted pair: invalid
    chunks, node, calls = run(agentic(scripted_openai, trials=2))
    assert calls == 3 and len(node["rounds"]) == 1
    assert node["rounds"][0]["attempts"] == 2 and "judging failed after 2 attempt(s)" in node["rounds"][0]["fallback"]
    assert [chunk.id for chunk in chunks] == [100, 101]


def test_unknown_children_and_repeated_pairs_are_dropped_while_valid_ones_run(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1), (5, 3), (0, 1), (1, 0)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1), (1, 2)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    _, node, _ = run(agentic(scripted_openai))
    plan = node["rounds"][0]["plan"]
    assert [(drop["code"], drop["why"]) for drop in plan["dropped"]] == [
        ("unknown_child", "no child 5 in the catalog (0 to 1)"),
        ("repeated", "child 0 was already consulted with top_k 1"),
        ("top_k_below_1", "top_k 0 is below 1"),
    ]
    assert node["rounds"][0]["operations"] == [{"child": 0, "top_k": 1}]
    assert node["rounds"][1]["operations"] == [{"child": 1, "top_k": 2}]
    assert node["rounds"][0]["dropped"] == [
        {"child": 0, "top_k": 1, "code": "repeated", "why": "child 0 was already consulted with top_k 1"}]


def test_the_pool_never_exceeds_max_chunks(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 6), (1, 6)]))
    chunks, node, _ = run(agentic(scripted_openai, max_iters=1, max_chunks=4))
    assert len(chunks) == 4 and node["rounds"][0]["pool_size"] == 4
    assert [chunk.id for chunk in chunks] == [100, 200, 101, 201]


def overlapping(server, *, max_chunks=10, max_iters=2):
    """Child 0 ranks chunks 100..104, child 1 ranks 104, 200, 201, 103: 103 and 104 are found by both."""
    children = [FixedRetriever(top_k=5).plan(*[(1, p) for p in range(5)]),
                FixedRetriever(top_k=4).plan((1, 4), (2, 0), (2, 1), (1, 3))]
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted-model", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=children, llm_model=llm, max_chunks=max_chunks,
                                         max_iters=max_iters)
    for node in [retriever, *children]:
        node.inject_infra(chunks=make_documents(10, 10))
    return retriever


def test_chunks_found_by_two_children_in_different_rounds_rank_above_chunks_found_once(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 5)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 4)]))
    chunks, node, _ = run(overlapping(scripted_openai))
    # RRF (k 60): 104 = 1/65 + 1/61, 103 = 1/64 + 1/64, then 100 = 1/61, 200 = 1/62 tie 101 = 1/62, ...
    assert [chunk.id for chunk in chunks] == [104, 103, 100, 101, 200, 102, 201]
    fused = {hit["chunk_id"]: hit for hit in node["results"]}
    assert fused[104]["score"] == pytest.approx(1 / 65 + 1 / 61)
    assert [(source["child"], source["rank"]) for source in fused[104]["sources"]] == [(0, 5), (1, 1)]
    assert node["rounds"][1]["added"] == [200, 201] and node["rounds"][1]["pool_size"] == 7


def test_asking_a_child_again_for_more_extends_its_ranking_instead_of_counting_it_twice(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 4), (1, 1)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    chunks, node, _ = run(overlapping(scripted_openai, max_iters=3))
    # child 0's ranking is its top 4 once (100 is not 2 × 1/61); child 1 adds 104 alone
    assert [chunk.id for chunk in chunks] == [100, 104, 101, 102, 103]
    assert node["rounds"][1]["added"] == [104, 102, 103]


def test_a_full_pool_keeps_the_fused_best_not_the_first_arrivals(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 5)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 4)]))
    chunks, node, _ = run(overlapping(scripted_openai, max_chunks=3))
    assert [r["pool_size"] for r in node["rounds"]] == [3, 3]
    assert [chunk.id for chunk in chunks] == [104, 103, 100]
    assert node["rounds"][1]["added"] == [104, 103]


def test_the_prompt_shows_the_catalog_the_query_and_the_pool(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    run(agentic(scripted_openai))
    plan_prompt, judge_prompt = (request.body["messages"][-1]["content"] for request in scripted_openai.requests_to(CHAT))
    assert "Question: question" in plan_prompt and "0. Fixed" in plan_prompt and "(default top_k 4)" in plan_prompt
    assert "Pool (0 chunks, holds at most 10)" in plan_prompt
    assert "Good at: Returns the hits it was given." in plan_prompt
    assert "[100] d1p0" in judge_prompt and "Already consulted (child, top_k): [[0, 1]]" in judge_prompt


def test_agentic_retrievers_nest_inside_each_other_and_close_their_llm(scripted_openai):
    inner = agentic(scripted_openai, max_iters=1)
    llm = OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m", function_calling="tools")
    outer = AgenticEnsembleRetriever(children=[inner], llm_model=llm, max_iters=1)
    outer.inject_infra(chunks=make_documents(10, 10))
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 3)]))   # outer plan
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 3)]))   # inner plan
    chunks, node, calls = run(outer)
    assert calls == 2 and [chunk.id for chunk in chunks] == [200, 201, 202]
    assert node["children"][0]["class"] == "AgenticEnsembleRetriever" and node["children"][0]["rounds"]
    closed = []
    for model in (inner.llm_model, llm):
        model.close = lambda model=model: closed.append(model)
    outer.close()
    assert set(map(id, closed)) == {id(inner.llm_model), id(llm)}
