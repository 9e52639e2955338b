"""The agentic ensemble against a scripted OpenAI-compatible server (DESIGN §5)."""

from dataclasses import replace

import pytest

from rag.llms import OpenAICompatibleLLM
from rag.retrievers.composite import AgenticEnsembleRetriever
from rag.tracing import TraceRecorder, recording
from tests.support.scripted_openai import tool_call_response

from .fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"


def verdict(sufficient=False, operations=(), reason="because"):
    """``operations``: (child, top_k) pairs, or operations as the model writes them."""
    return tool_call_response("retrieval_verdict", {"sufficient": sufficient, "reason": reason, "operations": [
        operation if isinstance(operation, dict) else {"child": operation[0], "top_k": operation[1]}
        for operation in operations]})


def pairs(operations):
    return [(operation["child"], operation["top_k"]) for operation in operations]


def agentic(server, *, max_iters=3, max_chunks=10, trials=3, **params):
    """Child 0 returns document 1's chunks 0..9; child 1 returns document 2's chunks 0..9."""
    children = [FixedRetriever(top_k=4).plan(*[(1, p) for p in range(10)]),
                FixedRetriever(top_k=3).plan(*[(2, p) for p in range(10)])]
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted-model", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=children, llm_model=llm, max_iters=max_iters,
                                         max_chunks=max_chunks, function_call_max_trials=trials, **params)
    documents = make_documents(10, 10)
    for node in [retriever, *children]:
        node.inject_infra(chunks=documents)
    return retriever


def run(retriever, question="question"):
    recorder = TraceRecorder()
    with recording(recorder):
        chunks, node = retriever.retrieve(question)
    return chunks, node, recorder.llm_calls


def test_a_plan_and_one_round_cost_one_call_when_max_iters_is_one(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    chunks, node, calls = run(agentic(scripted_openai, max_iters=1))
    assert calls == 1 == len(scripted_openai.requests_to(CHAT))
    assert [chunk.id for chunk in chunks] == [100, 101]
    assert [(r["round"], r["operations"], r["added"], r["pool_size"], r["verdict"]) for r in node["rounds"]] == [
        (1, [{"child": 0, "top_k": 2, "top_k_from": "model", "query": None, "child_name": "Fixed"}], [100, 101], 2,
         None)]
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
    assert [pairs(r["operations"]) for r in node["rounds"]] == [[(0, 2)], [(1, 3)]]
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
    assert pairs(node["rounds"][0]["operations"]) == [(0, 4), (1, 3)]
    assert {operation["top_k_from"] for operation in node["rounds"][0]["operations"]} == {"child"}
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
        ("repeated", "child 0 was already consulted with top_k 1 for the question"),
        ("top_k_below_1", "top_k 0 is below 1"),
    ]
    assert pairs(node["rounds"][0]["operations"]) == [(0, 1)]
    assert pairs(node["rounds"][1]["operations"]) == [(1, 2)]
    assert node["rounds"][0]["dropped"] == [
        {"child": 0, "top_k": 1, "code": "repeated", "why": "child 0 was already consulted with top_k 1 for the question"}]


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
    assert "Question: question" in plan_prompt and "0. Fixed (test), own top_k 4" in plan_prompt
    assert "Pool (0 passages of at most 10):\n(empty)" in plan_prompt and "Already searched:\n(nothing yet)" in plan_prompt
    assert "Good at: Returns the hits it was given." in plan_prompt
    assert "[1] d1p0" in judge_prompt
    assert "Already searched:\n- child 0, top_k 1, query: (the whole question)" in judge_prompt


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


# -- issue 39: a planner that plans, verdicts that read the pool, sizes as the page says ----------

def test_a_verdict_that_only_repeats_a_search_is_asked_again_even_when_it_says_sufficient(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True, operations=[(0, 2)], reason="enough"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True, reason="enough now"))
    chunks, node, calls = run(agentic(scripted_openai))
    assert calls == 3
    judged = node["rounds"][0]
    assert judged["attempts"] == 2 and judged["verdict"] == {"sufficient": True, "reason": "enough now"}
    assert [attempt["problems"] for attempt in judged["attempt_log"]][1] == []
    retry = scripted_openai.requests_to(CHAT)[2].body["messages"][-1]["content"]
    assert "child 0 was already consulted with top_k 2 for the question" in retry, retry
    assert [chunk.id for chunk in chunks] == [100, 101]


def test_repeats_count_against_the_trials_and_the_last_one_records_the_fallback(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    for _ in range(3):
        scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0, "top_k": 2, "query": " Question "}]))
    chunks, node, calls = run(agentic(scripted_openai, trials=3))
    assert calls == 4 and scripted_openai.pending(CHAT) == 0
    assert len(node["rounds"]) == 1 and node["rounds"][0]["attempts"] == 3
    assert node["rounds"][0]["fallback"] == "judging failed after 3 attempt(s); stopping with the pool"
    assert [chunk.id for chunk in chunks] == [100, 101]


def test_a_sufficient_verdict_with_no_operations_after_round_one_is_accepted(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True, operations=[]))
    _, node, calls = run(agentic(scripted_openai))
    assert calls == 2 and node["rounds"][0]["attempts"] == 1 and "next_operations" not in node["rounds"][0]


def test_an_operation_without_top_k_uses_the_childs_own(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0}, {"child": 1, "top_k": 2}]))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0, "top_k": 4}, {"child": 1}]))
    _, node, _ = run(agentic(scripted_openai, max_iters=2))
    first, second = node["rounds"]
    assert [(op["top_k"], op["top_k_from"]) for op in first["operations"]] == [(4, "child"), (2, "model")]
    assert [child["top_k"] for child in node["children"]] == [4, 2, 3]
    # child 0 at its own top_k 4 was done: asking for 4 explicitly repeats it
    assert [(drop["child"], drop["code"]) for drop in first["dropped"]] == [(0, "repeated")]
    assert [(op["child"], op["top_k"], op["top_k_from"]) for op in second["operations"]] == [(1, 3, "child")]


def long_documents(server, *, pool_preview_characters, pool_preview_tokens, text=None, **prompt):
    """Child 0 returns eight chunks of document 1, each a long text that starts with its own name
    (``text(position)`` when given)."""
    text = text or (lambda position: f"passage-{position} " + "lorem ipsum dolor " * 30)
    documents = {1: {position: replace(chunk, text=text(position))
                     for position, chunk in make_documents(8)[1].items()}}
    child = FixedRetriever(top_k=8).plan(*[(1, p) for p in range(8)])
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted-model", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=[child], llm_model=llm, prompt={
        "component": "AgenticEnsemblePrompt",
        "params": {"pool_preview_characters": pool_preview_characters, "pool_preview_tokens": pool_preview_tokens,
                   **prompt}})
    for node in (retriever, child):
        node.inject_infra(chunks=documents)
    return retriever


def test_the_judges_prompt_holds_the_pools_passages_within_its_budget(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 8)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    run(long_documents(scripted_openai, pool_preview_characters=100, pool_preview_tokens=90))
    judged = scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"]
    pool = judged.split("Pool (8 passages of at most 10):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # each line is about 26 estimated tokens (104 characters / 4): three fit in 90
    assert [line[:14] for line in pool[:3]] == ["[1] passage-0 ", "[2] passage-1 ", "[3] passage-2 "]
    assert pool[3] == "(5 more passages not shown)" and len(pool) == 4
    assert all(len(line) <= len("[1] ") + 100 + 1 for line in pool[:3]) and pool[0].endswith("…")
    assert "Judge the pool" in judged and "what is still missing" in judged


def test_a_long_passage_shows_the_judge_the_sentences_the_question_is_about(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 8)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    filler = "The weather on the coast was mild that year. " * 6

    def text(position):
        return f"Chronicle {position}. {filler}The harbour of Velm was built in {1800 + position}. {filler}"

    run(long_documents(scripted_openai, pool_preview_characters=120, pool_preview_tokens=1000, text=text),
        question="When was the harbour of Velm built?")
    judged = scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"]
    pool = judged.split("Pool (8 passages of at most 10):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert pool[0].startswith("[1] …") and "The harbour of Velm was built in 1800." in pool[0]
    assert pool[0].endswith("…") and all(len(line) <= len("[1] ……") + 120 for line in pool)


def test_the_judge_is_shown_the_first_three_passages_the_answer_is_written_from(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 8)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    run(long_documents(scripted_openai, pool_preview_characters=100, pool_preview_tokens=1000))
    judged = scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"]
    pool = judged.split("Pool (8 passages of at most 10):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line[:14] for line in pool[:3]] == ["[1] passage-0 ", "[2] passage-1 ", "[3] passage-2 "]
    assert pool[3:] == ["(5 more passages not shown)"]


def test_a_larger_budget_shows_every_pooled_passage(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 8)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    run(long_documents(scripted_openai, pool_preview_characters=100, pool_preview_tokens=1000,
                       pool_preview_passages=8))
    judged = scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"]
    assert "[8] passage-7 " in judged and "not shown" not in judged


@pytest.mark.parametrize(("question", "language", "name"), [
    ("¿Quién fundó la ciudad y en qué año se construyó el puerto?", "Spanish", "0. Fijo"),
    ("這座城市是誰建立的？港口是哪一年建造的？", "Traditional Chinese", "0. 固定"),
    ("这座城市是谁建立的？", "Simplified Chinese", "0. 固定"),
    ("Who founded the city and when was the harbour built?", "English", "0. Fixed"),
])
def test_the_plan_and_the_verdicts_are_asked_for_in_the_questions_language(scripted_openai, question, language, name):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    retriever = agentic(scripted_openai)
    with recording(TraceRecorder()):
        _, node = retriever.retrieve(question)
    for request in scripted_openai.requests_to(CHAT):
        message = request.body["messages"][-1]["content"]
        assert message.endswith(f"Write the reason in {language}."), message[-80:]
        assert name in message
    assert node["rounds"][0]["operations"][0]["child_name"] == name[3:]


def test_a_sub_query_reaches_the_child_and_is_recorded(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0, "query": "the first part"}, {"child": 1}]))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0, "query": "The  first PART"},
                                                      {"child": 0, "query": "the second part"}]))
    question = "the first part or the second part?"
    _, node, _ = run(agentic(scripted_openai, max_iters=2), question)
    assert [child["query"] for child in node["children"]] == ["the first part", question, "the second part"]
    assert [op["query"] for op in node["rounds"][0]["operations"]] == ["the first part", None]
    assert [op["query"] for op in node["rounds"][0]["next_operations"]] == ["the second part"]
    assert node["rounds"][0]["dropped"][0]["code"] == "repeated"  # same text, other spaces and case
    assert node["details"]["plan"]["operations"][0]["query"] == "the first part"


def test_passages_found_for_two_parts_of_a_question_share_the_top_of_the_pool(scripted_openai):
    """Both children rank part A's document first for the whole question; only a sub-query finds
    part B's. In one flat fusion A's chunks, found twice, would hold the first three places."""
    question = "what is A and what is B"
    children = [FixedRetriever(top_k=5).plan(*[(1, p) for p in range(5)]),
                FixedRetriever(top_k=5).plan(*[(1, p) for p in range(5)]).plan_for("what is B", (2, 0), (2, 1))]
    llm = OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=children, llm_model=llm, max_iters=3)
    for node in [retriever, *children]:
        node.inject_infra(chunks=make_documents(10, 10))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0}, {"child": 1}]))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 1, "query": "what is B"}], reason="B is missing"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    with recording(TraceRecorder()):
        chunks, node = retriever.retrieve(question)
    assert [chunk.id for chunk in chunks][:4] == [100, 200, 101, 201]
    top = {hit["chunk_id"]: hit for hit in node["results"]}
    assert top[100]["score"] == pytest.approx(1 / 61) and top[200]["score"] == pytest.approx(1 / 61)
    assert [(source["child"], source["query"], source["rank"]) for source in top[100]["sources"]] == [
        (0, None, 1), (1, None, 1)]
    assert sum(source["contribution"] for source in top[100]["sources"]) == pytest.approx(top[100]["score"])
    assert [(source["child"], source["query"]) for source in top[200]["sources"]] == [(1, "what is b")]


def test_a_chunk_several_sub_queries_found_does_not_outrank_each_texts_best(scripted_openai):
    """Two rewordings of the question both rank 101 second; the question's own best (100) and each
    rewording's best (300, 301) come first. Adding reciprocal ranks put 101 (found three times)
    at the top: on SciFact the 0.5B planner's rewordings pushed the pool below Hybrid."""
    child = (FixedRetriever(top_k=5).plan((1, 0), (1, 1), (1, 2))
             .plan_for("first rewording", (3, 0), (1, 1)).plan_for("second rewording", (3, 1), (1, 1)))
    llm = OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=[child], llm_model=llm, max_iters=1)
    for node in [retriever, child]:
        node.inject_infra(chunks=make_documents(10, 10, 10))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0}, {"child": 0, "query": "first rewording"},
                                                      {"child": 0, "query": "second rewording"}]))
    with recording(TraceRecorder()):
        chunks, node = retriever.retrieve("what does each rewording say")
    assert [chunk.id for chunk in chunks] == [100, 300, 301, 101, 102]
    found_thrice = next(hit for hit in node["results"] if hit["chunk_id"] == 101)
    assert found_thrice["score"] == pytest.approx(1 / 62)
    assert [(source["query"], source["rank"]) for source in found_thrice["sources"]] == [
        (None, 2), ("first rewording", 2), ("second rewording", 2)]
    assert [source["contribution"] for source in found_thrice["sources"]] == pytest.approx([1 / 62, 0, 0])


def test_the_plan_comes_before_any_child_and_each_judgement_before_its_round(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1)], reason="start"))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 1, "query": "more"}], reason="lacks more"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True, reason="done"))
    events = []
    recorder = TraceRecorder(
        on_node=lambda node: events.append(("node", node.component, node.query)),
        on_plan=lambda node, plan: events.append(("plan", plan["reason"], pairs(plan["operations"]))),
        on_judging=lambda node, number: events.append(("judging", number)),
        on_round=lambda node, summary: events.append(("round", summary["round"],
                                                      [op["query"] for op in summary.get("next_operations", [])])),
    )
    with recording(recorder):
        agentic(scripted_openai).retrieve("question")
    assert events == [
        ("plan", "start", [(0, 1)]),
        ("node", "FixedRetriever", "question"),
        ("judging", 1),
        ("round", 1, ["more"]),
        ("node", "FixedRetriever", "more"),
        ("judging", 2),
        ("round", 2, []),
        ("node", "AgenticEnsembleRetriever", "question"),
    ]


def test_a_run_streams_the_plan_judging_and_rounds_as_events(scripted_openai):
    from rag.strategies import NaiveRAG, ResponseSynthesizer
    from tests.support.scripted_openai import chat_stream

    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 1)], reason="start"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True, reason="done"))
    scripted_openai.enqueue(CHAT, chat_stream(["d1p0 [1]"]))
    synthesizer = ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m"))
    retriever = agentic(scripted_openai, max_iters=2)
    events = list(NaiveRAG(retriever=retriever, response_synthesizer=synthesizer).stream("question"))
    kinds = [event["type"] for event in events if event["type"].startswith("retrieval.")]
    assert kinds == ["retrieval.plan", "retrieval.node", "retrieval.judging", "retrieval.round", "retrieval.node"]
    plan = next(event for event in events if event["type"] == "retrieval.plan")
    agentic_node = [event for event in events if event["type"] == "retrieval.node"][-1]["node"]
    assert plan["node_id"] == agentic_node["id"] and plan["class"] == "AgenticEnsembleRetriever"
    assert plan["plan"] == {"reason": "start", "attempts": 1, "dropped": [], "fallback": None, "decided_by": "model",
                            "operations": [
        {"child": 0, "top_k": 1, "top_k_from": "model", "query": None, "child_name": "Fixed"}]}
    judging = next(event for event in events if event["type"] == "retrieval.judging")
    assert (judging["node_id"], judging["round"]) == (agentic_node["id"], 1)
    assert agentic_node["details"]["plan"]["operations"] == plan["plan"]["operations"]


def test_an_insufficient_verdict_without_operations_is_told_how_to_fix_it(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(sufficient=False, operations=[]))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 1, "query": "the missing part"}]))
    _, node, calls = run(agentic(scripted_openai, max_iters=2), "which part is missing?")
    retry = scripted_openai.requests_to(CHAT)[2].body["messages"][-1]["content"]
    assert "an operation whose query names it), or answer sufficient true" in retry
    assert calls == 3 and [op["query"] for op in node["rounds"][1]["operations"]] == ["the missing part"]


def test_a_query_that_shares_no_word_with_the_question_is_dropped_and_the_plan_asked_again(scripted_openai):
    """The 0.5B planner searched the catalog's words as the parts of the question."""
    question = "¿Cuántas rondas hace el conjunto agéntico y qué pasa si falla el plan?"
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0, "query": "fusión"},
                                                      {"child": 1, "query": "recuperador por palabras clave"}]))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 0, "query": "rondas del conjunto agéntico"},
                                                      {"child": 1, "query": "qué pasa si falla el plan"}]))
    _, node, calls = run(agentic(scripted_openai, max_iters=1), question)
    plan = node["details"]["plan"]
    assert calls == 2 and plan["attempts"] == 2
    retry = scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"]
    assert 'the query "fusión" shares no word with the question' in retry
    assert [op["query"] for op in plan["operations"]] == ["rondas del conjunto agéntico", "qué pasa si falla el plan"]


def test_a_judgement_may_search_a_word_it_read_in_the_pool(scripted_openai):
    """d1p0 is a chunk's text: a name found in the pool may lead to the missing part."""
    scripted_openai.enqueue(CHAT, verdict(operations=[(0, 2)]))
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 1, "query": "d1p0"}, {"child": 1, "query": "lighthouse murals"}]))
    _, node, _ = run(agentic(scripted_openai, max_iters=2))
    assert [op["query"] for op in node["rounds"][1]["operations"]] == ["d1p0"]
    assert [(drop["query"], drop["code"]) for drop in node["rounds"][0]["dropped"]] == [("lighthouse murals", "off_question")]


@pytest.mark.parametrize(("question", "reason"), [
    ("When was the harbour of Velm built?", "The question asks one thing: Fixed searches it whole."),
    ("¿Cuándo se construyó el puerto de Velm?", "La pregunta pide una sola cosa: Fijo la busca entera."),
])
def test_a_question_that_asks_one_thing_is_searched_whole_by_the_first_child_without_a_plan(
        scripted_openai, question, reason):
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 1, "query": "harbour Velm"}], reason="more"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    retriever = agentic(scripted_openai, max_iters=3, search_one_part_questions_whole=True)
    _, node, calls = run(retriever, question)
    requests = [request.body["messages"][-1]["content"] for request in scripted_openai.requests_to(CHAT)]
    assert calls == 2 and "Round 1 of at most 3 is done" in requests[0] and not any("Plan the first" in m for m in requests)
    assert "Already searched:\n- child 0, top_k 4, query: (the whole question)" in requests[0]
    plan = node["details"]["plan"]
    assert (plan["reason"], plan["decided_by"], plan["attempts"], plan["attempt_log"]) == (reason, "rule", 0, [])
    assert [(op["child"], op["top_k"], op["top_k_from"], op["query"]) for op in node["rounds"][0]["operations"]] == [
        (0, 4, "child", None)]
    assert [child["query"] for child in node["children"]] == [question, "harbour Velm"]


def test_a_question_that_asks_two_things_is_still_planned_by_the_model(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 2)], reason="two parts"))
    retriever = agentic(scripted_openai, max_iters=1, search_one_part_questions_whole=True)
    _, node, calls = run(retriever, "When was the harbour built, and who built it?")
    assert calls == 1 and "Plan the first searches" in scripted_openai.requests_to(CHAT)[0].body["messages"][-1]["content"]
    assert (node["details"]["plan"]["decided_by"], pairs(node["rounds"][0]["operations"])) == ("model", [(1, 2)])


@pytest.mark.parametrize(("question", "parts", "reason"), [
    ("When was the harbour of Velm built, and who designed the lighthouse?",
     ["When was the harbour of Velm built", "who designed the lighthouse"],
     "The question asks 2 things: Fixed searches each on its own."),
    ("¿Cuándo se construyó el puerto de Velm y quién diseñó el faro?",
     ["Cuándo se construyó el puerto de Velm", "quién diseñó el faro"],
     "La pregunta pide 2 cosas: Fijo busca cada una por separado."),
])
def test_each_part_of_a_question_that_asks_several_things_is_searched_by_the_first_child_without_a_plan(
        scripted_openai, question, parts, reason):
    scripted_openai.enqueue(CHAT, verdict(operations=[{"child": 1, "query": "lighthouse Velm"}], reason="more"))
    scripted_openai.enqueue(CHAT, verdict(sufficient=True))
    retriever = agentic(scripted_openai, max_iters=3, search_question_parts_separately=True)
    _, node, calls = run(retriever, question)
    requests = [request.body["messages"][-1]["content"] for request in scripted_openai.requests_to(CHAT)]
    assert calls == 2 and "Round 1 of at most 3 is done" in requests[0] and not any("Plan the first" in m for m in requests)
    assert "".join(f'- child 0, top_k 4, query: "{part.casefold()}"\n' for part in parts) in requests[0]
    plan = node["details"]["plan"]
    assert (plan["reason"], plan["decided_by"], plan["attempts"]) == (reason, "rule", 0)
    assert [(op["child"], op["top_k"], op["top_k_from"], op["query"]) for op in node["rounds"][0]["operations"]] == [
        (0, 4, "child", part) for part in parts]
    assert [child["query"] for child in node["children"]] == [*parts, "lighthouse Velm"]


def test_a_question_that_asks_one_thing_is_planned_by_the_model_when_only_parts_are_searched_by_rule(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict(operations=[(1, 2)], reason="one part"))
    retriever = agentic(scripted_openai, max_iters=1, search_question_parts_separately=True)
    _, node, calls = run(retriever, "When was the harbour of Velm built?")
    assert calls == 1 and node["details"]["plan"]["decided_by"] == "model"


@pytest.mark.parametrize("rule", ["search_one_part_questions_whole", "search_question_parts_separately"])
def test_the_agentic_preset_reads_round_one_from_the_question_and_the_default_plans_it(rule):
    from rag.presets import preset

    assert preset("agentic").config()["params"][rule] is True
    assert AgenticEnsembleRetriever.Params.model_fields[rule].default is False
