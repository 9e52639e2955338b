"""Consulting several child retrievers at once."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from rag.tracing import TraceNode, run_in_context

from ..base import BaseRetriever, Hit, RetrievalError


def search_children(
    children: Sequence[BaseRetriever], query: str, top_ks: Sequence[int | None] | None = None,
    queries: Sequence[str] | None = None,
) -> list[tuple[list[Hit] | None, TraceNode]]:
    """Ask every child in parallel (each at its own ``top_k`` unless given, each with ``query``
    unless ``queries`` gives its own); returns, in child order, ``(hits, node)`` or
    ``(None, node)`` for a child that failed (its node says why)."""
    top_ks = list(top_ks) if top_ks is not None else [None] * len(children)
    queries = list(queries) if queries is not None else [query] * len(children)

    def ask(child: BaseRetriever, text: str, top_k: int | None) -> tuple[list[Hit] | None, TraceNode]:
        try:
            return child.search(text, top_k)
        except RetrievalError as exc:
            assert exc.node is not None
            return None, exc.node

    if len(children) == 1:
        return [ask(children[0], queries[0], top_ks[0])]
    with ThreadPoolExecutor(max_workers=len(children), thread_name_prefix="trellis-child") as pool:
        futures = [pool.submit(run_in_context(ask), child, text, top_k)
                   for child, text, top_k in zip(children, queries, top_ks, strict=True)]
        return [future.result() for future in futures]
