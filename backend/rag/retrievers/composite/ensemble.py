"""``EnsembleRetriever``: fuse the rankings of several retrievers (RRF or weighted scores)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import model_validator

from rag.core import ComponentRef, children_param, ml, param, ref, register
from rag.tracing import TraceNode

from ..base import CompositeRetriever, Hit, RetrievalError, RetrieverParams
from ..dense import DenseEmbeddingRetriever  # noqa: F401  (registers a default child)
from ..sparse import BM25Retriever  # noqa: F401  (registers a default child)
from .children import search_children


def _wider(kept: Any, other: Any) -> Any:
    """Of two versions of one chunk, the one expanded to a wider window (a child that expands
    and one that does not may both return it)."""
    def width(chunk: Any) -> int:
        window = chunk.metadata.get("window")
        return window[1] - window[0] + 1 if window else 1

    return other if width(other) > width(kept) else kept


RRF_K = 60
"""Reciprocal rank fusion's standard damping constant."""


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hit]], k: int = RRF_K) -> list[Hit]:
    """Score each chunk by Σ 1 / (k + rank) over the rankings it appears in (rank from 1).

    Ties keep the order in which chunks were first seen, child by child. Each fused hit's
    ``sources`` lists ``{"child", "rank", "score", "contribution"}`` for every ranking it came
    from; the contributions add up to its score.
    """
    fused: dict[int, list[Any]] = {}
    for child, ranking in enumerate(rankings):
        for rank, hit in enumerate(ranking, start=1):
            entry = fused.setdefault(hit.chunk.id, [hit.chunk, 0.0, []])
            entry[0] = _wider(entry[0], hit.chunk)
            entry[1] += 1.0 / (k + rank)
            entry[2].append({"child": child, "rank": rank, "score": hit.score, "contribution": 1.0 / (k + rank)})
    ordered = sorted(fused.values(), key=lambda entry: -entry[1])
    return [Hit(chunk, score, tuple(sources)) for chunk, score, sources in ordered]


def weighted_fusion(rankings: Sequence[Sequence[Hit]], weights: Sequence[float]) -> list[Hit]:
    """Score each chunk by Σ weight × min–max normalised score over the rankings it appears in.

    A ranking whose scores are all equal normalises to 1 for each of its chunks. Sources add
    ``normalised`` to RRF's keys.
    """
    fused: dict[int, list[Any]] = {}
    for child, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        if not ranking:
            continue
        scores = [hit.score for hit in ranking]
        low, high = min(scores), max(scores)
        for rank, hit in enumerate(ranking, start=1):
            normalised = (hit.score - low) / (high - low) if high > low else 1.0
            entry = fused.setdefault(hit.chunk.id, [hit.chunk, 0.0, []])
            entry[0] = _wider(entry[0], hit.chunk)
            entry[1] += weight * normalised
            entry[2].append({"child": child, "rank": rank, "score": hit.score, "normalised": normalised,
                             "contribution": weight * normalised})
    ordered = sorted(fused.values(), key=lambda entry: -entry[1])
    return [Hit(chunk, score, tuple(sources)) for chunk, score, sources in ordered]


@register
class EnsembleRetriever(CompositeRetriever["EnsembleRetriever.Params"]):
    """Queries every child in parallel and fuses their rankings, one entry per chunk.

    ``rrf``: reciprocal rank fusion, Σ 1 / (rrf_k + rank). ``weighted``: each child's scores
    min–max normalised to [0, 1], times its weight, summed. A child that fails is recorded in
    the trace and the others still answer.
    """

    CATEGORY = "fusion"
    ICON = "merge"
    DISPLAY_NAME = ml("Fusion (ensemble)", "Fusión (conjunto)", "融合（集成）")
    SHORT_NAME = ml("Fusion", "Fusión", "融合")
    DESCRIPTION = ml(
        "Runs several retrievers at once and merges their results, so keyword and semantic "
        "search cover each other's blind spots (hybrid search). Unless told otherwise it merges "
        "their rankings by reciprocal rank fusion (RRF), which needs no tuning.",
        "Ejecuta varios recuperadores a la vez y combina sus resultados, para que la búsqueda "
        "por palabras y la semántica cubran los puntos ciegos de la otra (búsqueda híbrida). Salvo "
        "que se indique otra cosa, combina sus clasificaciones por fusión de rangos recíprocos (RRF), "
        "que no necesita ajuste.",
        "同時執行多個檢索器並合併結果，讓關鍵字與語意搜尋互補彼此的盲點（混合搜尋）。"
        "除非另行設定，否則以倒數排名融合（RRF）合併其排名，無需調整。",
    )
    REPRESENTATION = ml(
        "Fusion · {fusion} · {children} · top {top_k}",
        "Fusión · {fusion} · {children} · {top_k} mejores",
        "融合 · {fusion} · {children} · 前 {top_k} 名",
    )

    class Params(RetrieverParams):
        children: list[ComponentRef] = children_param(
            "retriever",
            min_children=2,
            default=[ref("BM25Retriever"), ref("DenseEmbeddingRetriever")],
            title=ml("Retrievers to fuse", "Recuperadores a fusionar", "要融合的檢索器"),
            description=ml(
                "Each child answers with its own top_k.",
                "Cada hijo responde con su propio top_k.",
                "每個子檢索器依各自的 top_k 回答。",
            ),
        )
        fusion: Literal["rrf", "weighted"] = param(
            "rrf",
            title=ml("Fusion method", "Método de fusión", "融合方式"),
            labels={"rrf": ml("RRF", "RRF", "RRF"), "weighted": ml("weighted", "ponderada", "加權")},
            description=ml(
                "RRF ranks by 1/(rrf_k + rank) summed over children and needs no tuning; weighted "
                "sums min–max normalised scores times each child's weight.",
                "RRF ordena por la suma de 1/(rrf_k + posición) y no necesita ajuste; la ponderada suma "
                "las puntuaciones normalizadas (mín–máx) por el peso de cada hijo.",
                "RRF 依各子檢索器 1/(rrf_k + 名次) 的總和排序，無需調整；加權則將最小–最大正規化後的分數乘以各自權重後加總。",
            ),
        )
        rrf_k: int = param(
            60, ge=1, le=10_000,
            title=ml("RRF k", "k de RRF", "RRF k"),
            description=ml(
                "Damps the weight of top ranks in RRF; 60 is the standard value.",
                "Atenúa el peso de las primeras posiciones en RRF; 60 es el valor estándar.",
                "在 RRF 中降低前幾名的權重；標準值為 60。",
            ),
        )
        weights: list[float] | None = param(
            None,
            title=ml("Weights", "Pesos", "權重"),
            description=ml(
                "One weight ≥ 0 per child for weighted fusion; empty means equal weights.",
                "Un peso ≥ 0 por hijo para la fusión ponderada; vacío significa pesos iguales.",
                "加權融合時每個子檢索器一個 ≥ 0 的權重；留空表示權重相同。",
            ),
        )
        top_k: int = param(
            10, ge=1, le=1000,
            title=ml("Results", "Resultados", "結果數"),
            description=ml("How many fused chunks to return.", "Cuántos fragmentos fusionados devolver.",
                           "要傳回的融合後區塊數。"),
        )

        @model_validator(mode="after")
        def _weights_fit_children(self) -> EnsembleRetriever.Params:
            if self.weights is not None:
                if len(self.weights) != len(self.children):
                    raise ValueError(
                        f"weights has {len(self.weights)} value(s) but there are {len(self.children)} children"
                    )
                if any(weight < 0 for weight in self.weights):
                    raise ValueError("weights must be ≥ 0")
            return self

    @property
    def score_scale(self) -> str:
        return "rrf" if self.params.fusion == "rrf" else "weighted"

    def explain(self, query: str, hits: Sequence[Hit]) -> list[dict[str, Any]]:
        """Each child that returned the hit: its rank and score there (on the child's scale) and
        what that added to the fused score, 1 / (rrf_k + rank) or weight × normalised score."""
        children = [{"component": child.NAME, "score_scale": child.score_scale} for child in self.children]
        weights = self.params.weights or [1.0] * len(self.children)
        return [
            {"sources": [{**source, **children[source["child"]],
                          **({"weight": weights[source["child"]]} if self.params.fusion == "weighted" else {})}
                         for source in hit.sources]}
            for hit in hits
        ]

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        answers = search_children(self.children, query)
        node.children = [child_node for _, child_node in answers]
        rankings = [hits for hits, _ in answers if hits is not None]
        if not rankings:
            raise RetrievalError("every child retriever failed")
        if self.params.fusion == "rrf":
            fused = reciprocal_rank_fusion([hits if hits is not None else [] for hits, _ in answers], self.params.rrf_k)
        else:
            weights = self.params.weights or [1.0] * len(self.children)
            fused = weighted_fusion([hits if hits is not None else [] for hits, _ in answers], weights)
        return fused[:top_k]
