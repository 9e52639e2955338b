"""The agentic pool: every operation's ranking fused, one voice per search text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...base import Hit
from ..ensemble import reciprocal_rank_fusion

RankingKey = tuple[int, str | None]
"""(child, search text); None is the user's question."""


def fuse_pool(rankings: Mapping[RankingKey, Sequence[Hit]], *, limit: int) -> list[Hit]:
    """The best ``limit`` chunks of ``rankings``, fused in two levels of reciprocal rank fusion (k 60).

    1. Per search text: the rankings of the children that searched it, in catalog order, so a
       chunk two children found for the same text ranks above one found once.
    2. Across search texts, each text's fused ranking counts once, the user's question first and
       then the sub-queries in the order they were first made. A two-part question searched
       part by part thus gets each part's best chunk among the first few of the pool: in one flat
       fusion, the part the whole question's words already favour would fill the top, found
       again by every child, and the other part's best chunk would sink below what the answer
       model reads.

    With one search text, level 2 changes nothing and the scores are level 1's. Each hit's
    ``sources`` name the catalog ``child``, its ``query`` (None: the question), its ``rank`` and
    ``score`` there, and a ``contribution``; the contributions add up to the hit's score.
    """
    texts: list[str | None] = []
    for _, text in rankings:
        if text not in texts:
            texts.append(text)
    texts.sort(key=lambda text: text is not None)  # the question first; the sort is stable
    per_text: list[list[Hit]] = []
    for text in texts:
        children = sorted(child for child, searched in rankings if searched == text)
        fused = reciprocal_rank_fusion([rankings[(child, text)] for child in children])
        per_text.append([Hit(hit.chunk, hit.score, tuple({**source, "child": children[source["child"]],
                                                          "query": text} for source in hit.sources))
                         for hit in fused])
    if len(per_text) == 1:
        return per_text[0][:limit]
    fused = reciprocal_rank_fusion(per_text)
    by_chunk = [{hit.chunk.id: hit for hit in ranking} for ranking in per_text]
    pool = []
    for hit in fused[:limit]:
        sources: list[dict[str, Any]] = []
        for group in hit.sources:
            # Level 2's contribution of this text is shared among its children as level 1 shared it.
            inner = by_chunk[group["child"]][hit.chunk.id]
            sources.extend({**source, "contribution": group["contribution"] * source["contribution"] / inner.score}
                           for source in inner.sources)
        pool.append(Hit(hit.chunk, hit.score, tuple(sources)))
    return pool
