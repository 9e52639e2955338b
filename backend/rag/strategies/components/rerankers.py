"""Re-rankers over a given list of hits: an LLM's complete order, or a cross-encoder's scores.

They share their logic with ``LLMRerankRetriever`` and ``SentenceTransformerCrossEncoderRetriever``
(which re-rank their child's candidates instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag.core import ComponentRef, TrellisError, component_param, ml, ref, register
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm)
)
from rag.retrievers import Hit
from rag.retrievers.cross_encoder.retriever import (
    CrossEncoderParams,
    cross_encoder_logits,
    cross_encoder_problem,
    load_cross_encoder,
    sigmoid,
)
from rag.retrievers.llm_rerank.retriever import LLMOrderParams, llm_order, unusable_order_message

from ..slots import Outcome, Reranker


class RerankError(TrellisError, ValueError):
    """A re-ranker gave no usable order; ``details`` holds what the trace shows (its attempts)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


def reranked_rows(hits: Sequence[Hit], ranks: Sequence[int]) -> list[dict[str, Any]]:
    """``{"chunk_id", "score", "from_rank"}`` per kept hit, for the trace (ranks are 1-based)."""
    return [{"chunk_id": hit.chunk.id, "score": hit.score, "from_rank": rank} for hit, rank in zip(hits, ranks,
                                                                                                 strict=True)]


@register
class LLMReranker(Reranker["LLMReranker.Params"]):
    """An LLM reads the hits and returns their complete order; the best ``top_k`` are kept.

    The answer must be ``{"order": [...]}`` naming every hit's id exactly once (asked again with
    the problems, up to ``function_call_max_trials`` attempts). Scores become
    ``1 - position / len(hits)``. When no answer is usable it raises ``RerankError`` (a
    ``ValueError``) with the reason and the attempts: the run fails and its trace says why; the
    incoming order is never kept in silence. One hit or none needs no call.
    """

    ICON = "list-ordered"
    DISPLAY_NAME = ml("LLM re-ranker", "Reordenador con LLM", "LLM 重新排序")
    SHORT_NAME = ml("LLM re-rank", "Reordenar con LLM", "LLM 重新排序")
    DESCRIPTION = ml(
        "An LLM reads the retrieved chunks and puts them in order of relevance to the question.",
        "Un LLM lee los fragmentos recuperados y los ordena por relevancia para la pregunta.",
        "由 LLM 閱讀檢索到的區塊，依與問題的相關性排序。",
    )
    REPRESENTATION = ml(
        "LLM re-rank · {llm.component} · keep {top_k}",
        "Reordenar con LLM · {llm.component} · conserva {top_k}",
        "LLM 重新排序 · {llm.component} · 保留 {top_k}",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(LLMOrderParams):
        llm: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"),
            title=ml("Language model", "Modelo de lenguaje", "語言模型"),
            description=ml("The model that orders the chunks.", "El modelo que ordena los fragmentos.",
                           "負責排序區塊的模型。"),
        )

    def rerank(self, question: str, hits: Sequence[Hit]) -> Outcome:
        """The best ``top_k`` hits in the LLM's order; details hold ``attempts``, ``order`` and
        ``reranked`` (kept chunk ids with their new score and former rank)."""
        top_k = self.params.top_k
        if len(hits) <= 1:
            return Outcome(list(hits[:top_k]), {"candidates": len(hits), "attempts": []})
        order, attempts = llm_order(
            self.llm, question, [hit.chunk.text for hit in hits],
            passage_characters=self.params.passage_characters, max_trials=self.params.function_call_max_trials,
        )
        details: dict[str, Any] = {"candidates": len(hits), "attempts": [attempt.to_dict() for attempt in attempts]}
        if order is None:
            raise RerankError(unusable_order_message(attempts), details)
        count = len(hits)
        kept = [Hit(hits[index].chunk, 1.0 - position / count, hits[index].sources)
                for position, index in enumerate(order[:top_k])]
        details["order"] = order
        details["reranked"] = reranked_rows(kept, [index + 1 for index in order[:top_k]])
        return Outcome(kept, details)


@register
class CrossEncoderReranker(Reranker[CrossEncoderParams]):
    """Scores each (question, chunk) pair with a sentence-transformers cross-encoder and keeps
    the best ``top_k``. Scores are ``sigmoid(logit)`` in (0, 1); ties keep the incoming order."""

    ICON = "arrow-up-down"
    DISPLAY_NAME = ml("Cross-encoder re-ranker", "Reordenador cross-encoder", "交叉編碼器重新排序")
    SHORT_NAME = ml("Cross-encoder", "Cross-encoder", "交叉編碼器")
    DESCRIPTION = ml(
        "Reads the question together with each retrieved chunk with a cross-encoder model and re-orders "
        "the chunks by relevance; slower than retrieval, usually more precise.",
        "Lee la pregunta junto con cada fragmento recuperado mediante un modelo cross-encoder y reordena "
        "los fragmentos por relevancia; más lento que recuperar, normalmente más preciso.",
        "以交叉編碼器模型同時讀取問題與每個檢索到的區塊，依相關性重新排序；比檢索慢，但通常更精確。",
    )
    REPRESENTATION = ml(
        "Cross-encoder · {model_name} · keep {top_k}",
        "Cross-encoder · {model_name} · conserva {top_k}",
        "交叉編碼器 · {model_name} · 保留 {top_k}",
    )

    Params = CrossEncoderParams

    @classmethod
    def availability_problem(cls, params: Mapping[str, Any]) -> str | None:
        return cross_encoder_problem(params["model_name"])

    def init_model(self) -> None:
        load_cross_encoder(self.params.model_name, self.params.device)

    def rerank(self, question: str, hits: Sequence[Hit]) -> Outcome:
        """The best ``top_k`` hits by cross-encoder score; ``details["reranked"]`` lists the kept
        chunk ids with their score and former rank."""
        if not hits:
            return Outcome([], {"candidates": 0, "reranked": []})
        model = load_cross_encoder(self.params.model_name, self.params.device)
        logits = cross_encoder_logits(model, question, [hit.chunk.text for hit in hits],
                                      batch_size=self.params.batch_size)
        ranked = sorted(
            ((rank, Hit(hit.chunk, sigmoid(logit), hit.sources))
             for rank, (hit, logit) in enumerate(zip(hits, logits, strict=True), start=1)),
            key=lambda pair: -pair[1].score,
        )[:self.params.top_k]
        kept = [hit for _, hit in ranked]
        return Outcome(kept, {"candidates": len(hits), "reranked": reranked_rows(kept, [rank for rank, _ in ranked])})
