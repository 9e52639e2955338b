"""Reading a stored strategy trace: its retriever nodes, wherever a step or a nested strategy
(a routed branch) put them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def retriever_nodes(strategy_trace: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every retriever trace node of a strategy trace, each before its children, in step order."""
    for step in strategy_trace.get("steps", []):
        if step.get("node"):
            yield from _subtree(step["node"])
        if step.get("trace"):
            yield from retriever_nodes(step["trace"])


def _subtree(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children", []):
        yield from _subtree(child)


def agentic_rounds(strategy_trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Every agentic round of a strategy trace, with the id of its node (as the chat stores them)."""
    return [{"node_id": node["id"], **summary}
            for node in retriever_nodes(strategy_trace) for summary in node.get("rounds", [])]
