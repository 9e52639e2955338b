"""A run's recorder keeps it within its limits: the LLM call past the budget and anything after
the deadline raise ``RunLimitExceeded``, and keep raising it (issue 38, finding 8)."""

import threading
import time

import pytest

from rag.tracing import RunLimitExceeded, RunLimits, TraceRecorder

pytestmark = pytest.mark.unit


def test_the_call_past_the_budget_is_refused_from_every_thread_and_stays_refused():
    recorder = TraceRecorder(limits=RunLimits(max_llm_calls=5))
    refused = []

    def call() -> None:
        try:
            recorder.count_llm_call()
        except RunLimitExceeded as exc:
            refused.append(exc)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert recorder.llm_calls == 5 and len(refused) == 3
    assert len({id(exc) for exc in refused}) == 3, "each thread raises its own exception"
    with pytest.raises(RunLimitExceeded, match="limit of 5 language-model calls"):
        recorder.check_limits()
    assert recorder.stopped.to_dict() == {"limit": "llm_calls", "setting": "TRELLIS_RUN_MAX_LLM_CALLS",
                                          "message": str(recorder.stopped), "calls": 5}
    assert RunLimitExceeded.from_dict(recorder.stopped.to_dict()).template == recorder.stopped.template


def test_past_the_deadline_no_call_or_step_may_start():
    recorder = TraceRecorder(limits=RunLimits(deadline_s=0.05))
    recorder.count_llm_call()
    time.sleep(0.08)
    with pytest.raises(RunLimitExceeded, match="stopped after 0.05 seconds"):
        recorder.check_limits()
    with pytest.raises(RunLimitExceeded):
        recorder.count_llm_call()
    assert recorder.llm_calls == 1 and recorder.stopped.limit == "deadline"


def test_a_recorder_without_limits_counts_and_never_stops():
    recorder = TraceRecorder()
    for _ in range(1000):
        recorder.count_llm_call()
    recorder.check_limits()
    assert recorder.llm_calls == 1000 and recorder.stopped is None


def test_settings_of_zero_turn_a_limit_off():
    assert RunLimits.of(deadline_s=0, max_llm_calls=0) == RunLimits()
    assert RunLimits.of(deadline_s=300, max_llm_calls=40) == RunLimits(300.0, 40)
    assert RunLimits.from_environment({}) == RunLimits(deadline_s=300.0, max_llm_calls=40)
    assert RunLimits.from_environment({"TRELLIS_RUN_DEADLINE_S": "0", "TRELLIS_RUN_MAX_LLM_CALLS": "7"}) == \
        RunLimits(deadline_s=None, max_llm_calls=7)
