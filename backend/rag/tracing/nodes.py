"""The trace node of one retriever invocation, and the recorder that numbers and streams them."""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .limits import RunLimitExceeded, RunLimits, budget_spent, deadline_reached

T = TypeVar("T")


@dataclass
class TraceNode:
    """One retriever invocation, in the shape of DESIGN §4.

    ``results`` rows are ``{"chunk_id", "document_id", "position", "score", "rank"}`` plus
    ``preview`` (the start of the chunk's text), ``document_name`` when the document is known,
    ``window`` for an expanded chunk and ``sources`` for a fused one; ``rounds`` is filled by
    agentic retrievers only.
    """

    id: str
    component: str
    params: dict[str, Any]
    query: str
    top_k: int | None
    elapsed_ms: float = 0.0
    results: list[dict[str, Any]] = field(default_factory=list)
    children: list[TraceNode] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """Component-specific facts (an LLM's attempts, a fallback taken), shown by the trace view."""
    score_scale: str | None = None
    """What the results' scores measure (``BaseRetriever.score_scale``), so a number explains itself."""

    def to_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "class": self.component,
            "params": self.params,
            "query": self.query,
            "top_k": self.top_k,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "results": self.results,
            "children": [child.to_dict() for child in self.children],
            "rounds": self.rounds,
            "error": self.error,
        }
        if self.score_scale:
            data["score_scale"] = self.score_scale
        if self.details:
            data["details"] = self.details
        return data


class TraceRecorder:
    """Numbers trace nodes of one run (``n1``, ``n2``, ... in start order) and hands each
    completed node, and an agentic retriever's plan, judgement starts and rounds, to optional
    listeners (the chat stream), so a long agentic search reads as work being done.

    With ``limits`` (``RunLimits``), it also keeps the run within them: ``count_llm_call`` and
    ``check_limits`` raise ``RunLimitExceeded`` once the run is past its deadline or would make
    more LLM calls than its budget, and keep raising it from then on (``stopped`` holds the
    first)."""

    def __init__(
        self,
        on_node: Callable[[TraceNode], None] | None = None,
        on_round: Callable[[TraceNode, dict[str, Any]], None] | None = None,
        limits: RunLimits | None = None,
        on_plan: Callable[[TraceNode, dict[str, Any]], None] | None = None,
        on_judging: Callable[[TraceNode, int], None] | None = None,
    ) -> None:
        self._on_node = on_node
        self._on_round = on_round
        self._on_plan = on_plan
        self._on_judging = on_judging
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self.llm_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.responses_without_usage = 0
        self.limits = limits or RunLimits()
        self.started = time.monotonic()
        self.stopped: RunLimitExceeded | None = None

    def next_id(self) -> str:
        with self._lock:
            return f"n{next(self._counter)}"

    def count_llm_call(self) -> None:
        """Called by every LLM request made while this recorder is current, before it is sent;
        raises ``RunLimitExceeded`` instead when the run may not make it."""
        with self._lock:
            self._within_limits()
            budget = self.limits.max_llm_calls
            if budget is not None and self.llm_calls >= budget:
                self.stopped = budget_spent(budget)
                raise self.stopped.again()
            self.llm_calls += 1

    def count_usage(self, usage: Mapping[str, Any] | None) -> None:
        """Add the tokens one LLM response says it read (``prompt_tokens``) and wrote
        (``completion_tokens``); None (a server that does not count, a stream cut short) is
        remembered, so the total is not passed off as complete."""
        with self._lock:
            prompt = usage.get("prompt_tokens") if usage else None
            completion = usage.get("completion_tokens") if usage else None
            if not isinstance(prompt, int) or not isinstance(completion, int):
                self.responses_without_usage += 1
                return
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def usage(self) -> dict[str, int]:
        """The run's tokens so far, over every LLM response: what the trace's ``usage`` holds."""
        with self._lock:
            return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                    "total_tokens": self.prompt_tokens + self.completion_tokens,
                    "responses_without_usage": self.responses_without_usage}

    def check_limits(self) -> None:
        """Raise ``RunLimitExceeded`` when the run has reached a limit (between steps and tokens)."""
        with self._lock:
            self._within_limits()

    def _within_limits(self) -> None:
        if self.stopped is None and self.limits.deadline_s is not None \
                and time.monotonic() - self.started > self.limits.deadline_s:
            self.stopped = deadline_reached(self.limits.deadline_s)
        if self.stopped is not None:
            raise self.stopped.again()

    def node_completed(self, node: TraceNode) -> None:
        if self._on_node is not None:
            self._on_node(node)

    def round_completed(self, node: TraceNode, summary: dict[str, Any]) -> None:
        if self._on_round is not None:
            self._on_round(node, summary)

    def plan_decided(self, node: TraceNode, plan: dict[str, Any]) -> None:
        """An agentic ``node`` has its plan, before its first round consults anything."""
        if self._on_plan is not None:
            self._on_plan(node, plan)

    def judging_started(self, node: TraceNode, round_number: int) -> None:
        """An agentic ``node`` starts judging its pool after round ``round_number``."""
        if self._on_judging is not None:
            self._on_judging(node, round_number)


_current: contextvars.ContextVar[TraceRecorder | None] = contextvars.ContextVar("trellis_trace_recorder", default=None)


def current_recorder() -> TraceRecorder | None:
    return _current.get()


@contextmanager
def recording(recorder: TraceRecorder | None = None) -> Iterator[TraceRecorder]:
    """Make ``recorder`` (or a fresh one) the recorder of everything traced inside the block."""
    recorder = recorder or TraceRecorder()
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)


def run_in_context(function: Callable[..., T]) -> Callable[..., T]:
    """Wrap ``function`` to run in a copy of the caller's context, so work handed to a thread
    pool records into the caller's trace."""
    context = contextvars.copy_context()

    def call(*args: Any, **kwargs: Any) -> T:
        return context.run(function, *args, **kwargs)

    return call
