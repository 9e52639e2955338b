"""Steps several strategies share, each recorded in the run's trace."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rag.core import TrellisError
from rag.retrievers import BaseRetriever, Hit
from rag.retrievers.composite import reciprocal_rank_fusion

from .base import RunContext, Strategy, hit_row

FuseFunction = Callable[[Sequence[Sequence[Hit]]], list[Hit]]


def transform_step(run: RunContext, transformer: Any) -> list[str]:
    with run.step("transform_query", component=transformer.NAME) as entry:
        queries, details = transformer.transform(run.state["question"])
        entry.update(queries=list(queries), details=details)
    return list(queries) or [run.state["question"]]


def retrieve_each(strategy: Strategy, run: RunContext, retriever: BaseRetriever, queries: Sequence[str]) -> list[list[Hit]]:
    """One retrieval per query, in order, each its own step."""
    return [strategy.retrieve_step(run, retriever, query, name=f"retrieve[{index}]")
            for index, query in enumerate(queries)]


def fuse_step(run: RunContext, rankings: Sequence[Sequence[Hit]], *, fuse: FuseFunction | None = None,
              rrf_k: int = 60, top_k: int | None = None) -> list[Hit]:
    """Fuse the rankings with reciprocal rank fusion (or ``fuse``); keep ``top_k``."""
    with run.step("fuse", method="custom" if fuse else "rrf", rankings=len(rankings)) as entry:
        fused = fuse(rankings) if fuse else reciprocal_rank_fusion(rankings, k=rrf_k)
        if fuse is not None:
            _check_custom_fusion(fused, rankings)
        if top_k is not None:
            fused = fused[:top_k]
        entry["results"] = [{"chunk_id": hit.chunk.id, "score": hit.score, "sources": list(hit.sources)}
                            for hit in fused]
    return fused


class FusionError(TrellisError, ValueError):
    """A custom ``fuse_fn`` returned something a strategy cannot use; the message says what."""


def _check_custom_fusion(fused: Any, rankings: Sequence[Sequence[Hit]]) -> None:
    known = {hit.chunk.id for ranking in rankings for hit in ranking}
    if not isinstance(fused, list) or not all(isinstance(hit, Hit) for hit in fused):
        raise FusionError("a fuse_fn must return a list of Hit")
    strangers = [hit.chunk.id for hit in fused if hit.chunk.id not in known]
    if strangers:
        raise FusionError(f"the fuse_fn returned chunks no retrieval found: {strangers}")


def expand_and_retrieve(strategy: Strategy, run: RunContext, retriever: BaseRetriever,
                        transformer: Any | None) -> list[Hit]:
    """Retrieve for the question, or for each expanded query and fuse by RRF."""
    if transformer is None:
        return strategy.retrieve_step(run, retriever, strategy.retrieval_query(run))
    queries = transform_step(run, transformer)
    rankings = retrieve_each(strategy, run, retriever, queries)
    return fuse_step(run, rankings, top_k=run.state["top_k"] or retriever.default_top_k)


def filter_step(run: RunContext, relevance_filter: Any, hits: Sequence[Hit]) -> list[Hit]:
    with run.step("filter", component=relevance_filter.NAME) as entry:
        outcome = relevance_filter.filter(run.state["question"], hits)
        entry.update(kept=[hit.chunk.id for hit in outcome.hits],
                     dropped=[hit.chunk.id for hit in hits if hit.chunk.id not in {h.chunk.id for h in outcome.hits}],
                     details=outcome.details)
    return list(outcome.hits)


def rerank_step(run: RunContext, reranker: Any, hits: Sequence[Hit]) -> list[Hit]:
    with run.step("rerank", component=reranker.NAME) as entry:
        outcome = reranker.rerank(run.state["question"], hits)
        entry.update(order=[hit.chunk.id for hit in outcome.hits], details=outcome.details)
    return list(outcome.hits)


def web_step(run: RunContext, web_retriever: Any) -> list[Hit]:
    with run.step("web_search", component=web_retriever.NAME) as entry:
        outcome = web_retriever.search(run.state["question"])
        entry.update(results=[hit_row(hit) for hit in outcome.hits], details=outcome.details)
    return list(outcome.hits)
