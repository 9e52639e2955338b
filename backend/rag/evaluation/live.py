"""Scoring a retriever tree on a small test set while it is edited: nDCG@10 and Recall@10 with
their bootstrap intervals, and the paired change against another version of the tree.

The tree is asked each question with its own ``top_k`` (what a pipeline built from it would
retrieve), so an edit of ``top_k`` shows in the score. A change is "within noise" when the
interval of the paired difference holds 0: the test set cannot tell the two versions apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag.tracing import TraceRecorder, recording

from .metrics import document_ranking, ndcg_at, recall_at
from .statistics import bootstrap_ci, paired_bootstrap_test

K = 10
METRICS: tuple[str, ...] = ("ndcg_at_10", "recall_at_10")


@dataclass(frozen=True)
class GoldenQuestion:
    """A question and the documents that should come back for it, by key, with their grades."""

    id: str
    text: str
    judgements: Mapping[str, int] = field(default_factory=dict)


def question_scores(retriever: Any, questions: Sequence[GoldenQuestion],
                    document_key: Callable[[int], str | None]) -> list[dict[str, Any]]:
    """Ask ``retriever`` (a built ``BaseRetriever``) each question; one row per question with its
    ``ndcg_at_10``, ``recall_at_10``, the language-model calls it made and the documents it
    returned, best first. A question with no relevant document is not scored (and not asked)."""
    rows = []
    for question in questions:
        if not any(grade > 0 for grade in question.judgements.values()):
            continue
        with recording(TraceRecorder()) as recorder:
            hits, _ = retriever.search(question.text)
        ranking = document_ranking((hit.chunk for hit in hits), document_key)
        rows.append({"id": question.id, "ndcg_at_10": ndcg_at(ranking, question.judgements, K),
                     "recall_at_10": recall_at(ranking, question.judgements, K),
                     "llm_calls": recorder.llm_calls, "returned": ranking[:K]})
    return rows


def quality_summary(rows: Sequence[Mapping[str, Any]], baseline: Sequence[Mapping[str, Any]] | None = None,
                    *, seed: int = 0) -> dict[str, Any]:
    """Each metric's mean and 95% bootstrap interval; with ``baseline`` (the same questions
    scored on another version), each metric's paired change ``rows − baseline`` with its
    interval, p-value and whether the interval holds 0 (``within_noise``)."""
    summary: dict[str, Any] = {"questions": len(rows), "metrics": {}, "change": None}
    for name in METRICS:
        values = [float(row[name]) for row in rows]
        low, high = bootstrap_ci(values, seed=seed)
        summary["metrics"][name] = {"value": sum(values) / len(values) if values else None,
                                    "ci": [low, high] if values else None}
    if baseline is not None:
        before = {row["id"]: row for row in baseline}
        paired = [row for row in rows if row["id"] in before]
        if len(paired) != len(rows) or len(before) != len(rows):
            raise ValueError("the baseline was scored on other questions")
        summary["change"] = {}
        for name in METRICS:
            test = paired_bootstrap_test([float(row[name]) for row in paired],
                                         [float(before[row["id"]][name]) for row in paired], seed=seed)
            low, high = test["ci"]
            summary["change"][name] = {**test, "within_noise": bool(low <= 0.0 <= high) if paired else True}
    return summary
