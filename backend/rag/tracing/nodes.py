"""The trace node of one retriever invocation, and the recorder that numbers and streams them."""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

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
        if self.details:
            data["details"] = self.details
        return data


class TraceRecorder:
    """Numbers trace nodes of one run (``n1``, ``n2``, ... in start order) and hands each
    completed node and agentic round to optional listeners (the chat stream)."""

    def __init__(
        self,
        on_node: Callable[[TraceNode], None] | None = None,
        on_round: Callable[[TraceNode, dict[str, Any]], None] | None = None,
    ) -> None:
        self._on_node = on_node
        self._on_round = on_round
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self.llm_calls = 0

    def next_id(self) -> str:
        with self._lock:
            return f"n{next(self._counter)}"

    def count_llm_call(self) -> None:
        """Called by every LLM request made while this recorder is current."""
        with self._lock:
            self.llm_calls += 1

    def node_completed(self, node: TraceNode) -> None:
        if self._on_node is not None:
            self._on_node(node)

    def round_completed(self, node: TraceNode, summary: dict[str, Any]) -> None:
        if self._on_round is not None:
            self._on_round(node, summary)


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
