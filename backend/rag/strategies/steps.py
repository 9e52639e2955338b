"""Steps several strategies share, each recorded in the run's trace."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rag.core import TrellisError
from rag.documents.models import Chunk
from rag.retrievers import BaseRetriever, Hit
from rag.retrievers.composite import reciprocal_rank_fusion

from .base import RunContext, Strategy, hit_row

FuseFunction = Callable[[list[list[Chunk]]], list[Chunk]]
"""A custom fusion: the variants' result lists (chunks, best first) in, the fused chunks out."""


def transform_step(run: RunContext, transformer: Any) -> list[str]:
    question = run.strategy.search_question(run)
    with run.step("transform_query", component=transformer.NAME) as entry:
        queries, details = transformer.transform(question)
        entry.update(queries=list(queries), details=details)
    return list(queries) or [question]


def retrieve_each(strategy: Strategy, run: RunContext, retriever: BaseRetriever, queries: Sequence[str]) -> list[list[Hit]]:
    """One retrieval per query, in order, each its own step."""
    return [strategy.retrieve_step(run, retriever, query, name=f"retrieve[{index}]")
            for index, query in enumerate(queries)]


def fuse_step(run: RunContext, rankings: Sequence[Sequence[Hit]], *, fuse: FuseFunction | None = None,
              rrf_k: int = 60, top_k: int | None = None) -> list[Hit]:
    """Fuse the rankings with reciprocal rank fusion (or ``fuse``); keep ``top_k``."""
    with run.step("fuse", method="custom" if fuse else "rrf", rankings=len(rankings)) as entry:
        fused = custom_fusion(fuse, rankings) if fuse else reciprocal_rank_fusion(rankings, k=rrf_k)
        if top_k is not None:
            fused = fused[:top_k]
        entry["results"] = [{"chunk_id": hit.chunk.id, "score": hit.score, "sources": list(hit.sources)}
                            for hit in fused]
    return fused


class FusionError(TrellisError, ValueError):
    """A custom ``fuse_fn`` returned something a strategy cannot use; the message says what."""


def custom_fusion(fuse: FuseFunction, rankings: Sequence[Sequence[Hit]]) -> list[Hit]:
    """Call ``fuse`` with the rankings as lists of chunks and check what it returns: a list of
    chunks the retrievals found, each once. The fused order scores ``1 / rank``; each hit's
    ``sources`` say which variants found it, at which rank and score."""
    fused = fuse([[hit.chunk for hit in ranking] for ranking in rankings])
    if not isinstance(fused, (list, tuple)) or not all(isinstance(chunk, Chunk) for chunk in fused):
        raise FusionError(f"a fuse_fn must return a list of Chunk, got {_describe(fused)}")
    found: dict[int, list[Chunk]] = {}
    sources: dict[int, list[dict[str, Any]]] = {}
    for variant, ranking in enumerate(rankings):
        for rank, hit in enumerate(ranking, start=1):
            found.setdefault(hit.chunk.id, []).append(hit.chunk)
            sources.setdefault(hit.chunk.id, []).append({"child": variant, "rank": rank, "score": hit.score})
    strangers = [chunk.id for chunk in fused if chunk not in found.get(chunk.id, [])]
    if strangers:
        raise FusionError(f"the fuse_fn returned chunks no retrieval found: {strangers}")
    ids = [chunk.id for chunk in fused]
    repeated = sorted({chunk_id for chunk_id in ids if ids.count(chunk_id) > 1})
    if repeated:
        raise FusionError(f"the fuse_fn returned chunks {repeated} more than once")
    return [Hit(chunk, 1.0 / rank, tuple(sources[chunk.id])) for rank, chunk in enumerate(fused, start=1)]


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        kinds = sorted({type(item).__name__ for item in value})
        return f"a {type(value).__name__} of {', '.join(kinds) or 'nothing'}"
    return type(value).__name__


def expand_and_retrieve(strategy: Strategy, run: RunContext, retriever: BaseRetriever,
                        transformer: Any | None) -> list[Hit]:
    """Retrieve for the question, or for each expanded query and fuse by RRF."""
    if transformer is None:
        return strategy.retrieve_step(run, retriever, strategy.search_question(run))
    queries = transform_step(run, transformer)
    rankings = retrieve_each(strategy, run, retriever, queries)
    return fuse_step(run, rankings, top_k=run.state["top_k"] or retriever.default_top_k)


def filter_step(run: RunContext, relevance_filter: Any, hits: Sequence[Hit]) -> list[Hit]:
    question = run.strategy.search_question(run)
    with run.step("filter", component=relevance_filter.NAME) as entry:
        outcome = relevance_filter.filter(question, hits)
        entry.update(kept=[hit.chunk.id for hit in outcome.hits],
                     dropped=[hit.chunk.id for hit in hits if hit.chunk.id not in {h.chunk.id for h in outcome.hits}],
                     details=outcome.details)
    return list(outcome.hits)


def rerank_step(run: RunContext, reranker: Any, hits: Sequence[Hit]) -> list[Hit]:
    """Re-rank ``hits``; a re-ranker that fails leaves its error (and details, such as an LLM's
    attempts) in the step before the run fails."""
    question = run.strategy.search_question(run)
    with run.step("rerank", component=reranker.NAME) as entry:
        try:
            outcome = reranker.rerank(question, hits)
        except Exception as exc:
            entry["error"] = str(exc)
            entry["details"] = getattr(exc, "details", {})
            raise
        entry.update(order=[hit.chunk.id for hit in outcome.hits], details=outcome.details)
    return list(outcome.hits)


def web_step(run: RunContext, web_retriever: Any) -> list[Hit]:
    question = run.strategy.search_question(run)
    with run.step("web_search", component=web_retriever.NAME) as entry:
        outcome = web_retriever.search(question)
        entry.update(results=[hit_row(hit) for hit in outcome.hits], details=outcome.details)
    return list(outcome.hits)
