"""A run stops at its deadline and at its LLM-call budget, nested agentic children included, and
its trace says which limit stopped it and keeps what ran so far (issue 38, finding 8)."""

import itertools
import threading
import time

import pytest

from rag.llms import OpenAICompatibleLLM
from rag.retrievers.composite import AgenticEnsembleRetriever
from rag.strategies import NaiveRAG, ResponseSynthesizer, StrategyError
from rag.tracing import RunLimits, configure_run_limits, default_run_limits

from ..retrievers.fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit


class NeverSufficient(OpenAICompatibleLLM):
    """Every verdict asks for more (a new, valid operation each time); each call takes ``delay``
    seconds; answers are one word. Nothing leaves the process."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(base_url="http://127.0.0.1:9/v1", model="never", function_calling="json")
        self.delay = delay
        self.calls = 0
        self._top_k = itertools.count(1)
        self._lock = threading.Lock()

    def _called(self) -> None:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay)

    def _function_call_text(self, messages, schema, name, description):
        self._called()
        top_k = next(self._top_k)
        return ('{"sufficient": false, "reason": "never sufficient", "operations": '
                f'[{{"child": 0, "top_k": {top_k}}}, {{"child": 1, "top_k": {top_k}}}]}}')

    def _generate(self, messages, max_tokens):
        self._called()
        return "answer"

    def _stream(self, messages, max_tokens):
        self._called()
        yield "answer"


def agentic_tree(llm, depth: int):
    """``depth`` levels of agentic ensembles, each over a leaf and the next level, with the most
    rounds and attempts their forms allow."""
    documents = make_documents(10, 10)
    leaf = FixedRetriever(top_k=2).plan(*[(1, p) for p in range(10)])
    inner = FixedRetriever(top_k=2).plan(*[(2, p) for p in range(10)])
    nodes = [leaf, inner]
    for _ in range(depth):
        inner = AgenticEnsembleRetriever(children=[leaf, inner], llm_model=llm, max_iters=10,
                                         function_call_max_trials=10, max_chunks=50)
        nodes.append(inner)
    for node in nodes:
        node.inject_infra(chunks=documents)
    return inner


def step(trace, name):
    return next(entry for entry in trace["steps"] if entry["step"] == name)


@pytest.fixture
def limits():
    """Set the process's run limits for one test, then back to those it had."""
    before = default_run_limits()
    yield lambda **given: configure_run_limits(RunLimits(**given))
    configure_run_limits(before)


def test_a_three_level_agentic_tree_stops_at_the_runs_llm_call_budget(limits):
    limits(max_llm_calls=12)
    llm = NeverSufficient()
    strategy = NaiveRAG(retriever=agentic_tree(llm, depth=3), response_synthesizer=ResponseSynthesizer(llm=llm))
    with pytest.raises(StrategyError, match="limit of 12 language-model calls") as stopped:
        strategy.run("what is never enough?")
    assert llm.calls == 12, "the call past the budget is never sent"
    trace = stopped.value.state["trace"]
    assert trace["llm_calls"] == 12
    assert trace["stopped_by"]["limit"] == "llm_calls" and trace["stopped_by"]["setting"] == "TRELLIS_RUN_MAX_LLM_CALLS"
    retrieve = step(trace, "retrieve")
    assert retrieve["node"]["class"] == "AgenticEnsembleRetriever"
    assert retrieve["node"]["children"], "what the tree consulted before it was stopped is kept"


def test_a_slow_run_stops_at_its_deadline(limits):
    limits(deadline_s=0.4)
    llm = NeverSufficient(delay=0.15)
    strategy = NaiveRAG(retriever=agentic_tree(llm, depth=2), response_synthesizer=ResponseSynthesizer(llm=llm))
    started = time.monotonic()
    with pytest.raises(StrategyError, match="stopped after 0.4 seconds") as stopped:
        strategy.run("what is never enough?")
    assert time.monotonic() - started < 1.5
    assert 1 <= llm.calls <= 4
    trace = stopped.value.state["trace"]
    assert trace["stopped_by"]["limit"] == "deadline" and trace["stopped_by"]["seconds"] == 0.4
    consulted = step(trace, "retrieve")["node"]["children"]
    assert any(child["results"] for child in consulted), "what was retrieved before the deadline is kept"


def test_a_run_within_its_limits_is_not_stopped(limits):
    limits(deadline_s=30, max_llm_calls=3)
    llm = NeverSufficient()
    retriever = FixedRetriever(top_k=2).plan((1, 0), (1, 1))
    retriever.inject_infra(chunks=make_documents(2))
    state = NaiveRAG(retriever=retriever, response_synthesizer=ResponseSynthesizer(llm=llm)).run("q")
    assert state["trace"]["llm_calls"] == 1 and "stopped_by" not in state["trace"]
