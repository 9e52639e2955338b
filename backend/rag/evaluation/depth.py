"""Evaluation depth: asking every retriever of a tree for at least ``depth`` results.

A fusion of two children that each return 20 can never fill a list of 100, so Recall@100 of a
hybrid pipeline would be compared with a keyword list five times as deep. ``deepen`` raises the
``top_k`` of every retriever in the tree (children of composites included) to the depth, and
says which parts cannot honour it (an LLM that chooses the pool, or re-orders a fixed list).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from rag.core.registry import Registry


def deepen(config: Mapping[str, Any], depth: int, registry: Registry) -> tuple[dict[str, Any], list[str]]:
    """A copy of the validated retriever reference ``config`` whose retrievers are each asked
    for at least ``depth`` results, and one sentence per part that returns fewer whatever it is
    asked (that part is left as configured)."""
    component = registry.get(config["component"])
    params = copy.deepcopy(dict(config["params"]))
    depth_limit = getattr(component, "depth_limit", None)
    limit = depth_limit(params) if depth_limit is not None else None
    if limit is not None:
        count, reason = limit
        return {"component": config["component"], "params": params}, ([f"{reason} (at most {count})"]
                                                                       if count < depth else [])
    if isinstance(params.get("top_k"), int):
        params["top_k"] = max(params["top_k"], depth)
    limits: list[str] = []
    children = params.get("children")
    if isinstance(children, list):
        deepened = [deepen(child, depth, registry) for child in children]
        params["children"] = [child for child, _ in deepened]
        limits = [reason for _, reasons in deepened for reason in reasons]
    return {"component": config["component"], "params": params}, limits
