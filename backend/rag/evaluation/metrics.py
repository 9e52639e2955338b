"""Retrieval metrics of one ranking against graded judgements, as trec_eval defines them.

A ranking is a list of corpus ids, best first, each at most once. Judgements map a corpus id to
a grade; a grade above 0 is relevant. nDCG uses the grade itself as the gain with a
``log2(rank + 1)`` discount and the ideal ordering of every judged document; recall, MRR and
average precision count a document as relevant when its grade is above 0. A query with no
relevant document is not scored (trec_eval skips it too): callers keep only judged queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

RETRIEVAL_METRICS: tuple[str, ...] = ("ndcg@10", "recall@1", "recall@5", "recall@10", "recall@100", "mrr@10", "map")
"""The metrics every evaluation reports, in display order."""

RECALL_CURVE_KS: tuple[int, ...] = (1, 2, 3, 5, 10, 20, 30, 50, 100)


def dcg_at(ranking: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    return sum(max(judgements.get(doc, 0), 0) / math.log2(rank + 2) for rank, doc in enumerate(ranking[:k]))


def ndcg_at(ranking: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain of the first ``k`` results."""
    ideal = sorted((grade for grade in judgements.values() if grade > 0), reverse=True)[:k]
    best = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    return dcg_at(ranking, judgements, k) / best if best else 0.0


def recall_at(ranking: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the first ``k`` results."""
    relevant = {doc for doc, grade in judgements.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def mrr_at(ranking: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    """1 / rank of the first relevant result among the first ``k``; 0 when there is none."""
    for rank, doc in enumerate(ranking[:k], start=1):
        if judgements.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def average_precision(ranking: Sequence[str], judgements: Mapping[str, int]) -> float:
    """Mean of the precision at each relevant result, over every relevant document (found or
    not): the per-query term of MAP."""
    relevant = sum(1 for grade in judgements.values() if grade > 0)
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, doc in enumerate(ranking, start=1):
        if judgements.get(doc, 0) > 0:
            found += 1
            total += found / rank
    return total / relevant


def query_metrics(ranking: Sequence[str], judgements: Mapping[str, int]) -> dict[str, float]:
    """Every metric of :data:`RETRIEVAL_METRICS` for one query."""
    return {
        "ndcg@10": ndcg_at(ranking, judgements, 10),
        "recall@1": recall_at(ranking, judgements, 1),
        "recall@5": recall_at(ranking, judgements, 5),
        "recall@10": recall_at(ranking, judgements, 10),
        "recall@100": recall_at(ranking, judgements, 100),
        "mrr@10": mrr_at(ranking, judgements, 10),
        "map": average_precision(ranking, judgements),
    }


def recall_curve(ranking: Sequence[str], judgements: Mapping[str, int],
                 ks: Iterable[int] = RECALL_CURVE_KS) -> dict[int, float]:
    return {k: recall_at(ranking, judgements, k) for k in ks}


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return math.fsum(values) / len(values) if values else float("nan")


def mean_metrics(rows: Sequence[Mapping[str, Any]], names: Sequence[str] = RETRIEVAL_METRICS) -> dict[str, float]:
    """The average of each metric over per-query rows."""
    return {name: mean(row[name] for row in rows) for name in names}


def document_ranking(chunks: Iterable[Any], corpus_id_of: Callable[[int], str | None]) -> list[str]:
    """A chunk ranking as a ranking of corpus documents: each document at the rank of its best
    chunk. Chunks of documents outside the corpus are skipped."""
    seen: dict[str, None] = {}
    for chunk in chunks:
        corpus_id = corpus_id_of(chunk.document_id)
        if corpus_id is not None:
            seen.setdefault(corpus_id, None)
    return list(seen)
