"""Relevance: an embedding-similarity threshold, and an LLM judge that gives a verdict per chunk
(as an evaluator for CRAG, or as a filter)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from rag.core import ComponentRef, component_param, ml, param, ref, register
from rag.core import Params as BaseParams
from rag.embeddings import (
    AllMiniLML6V2OnnxEmbedding,  # noqa: F401  (registers the default embedding_model)
    EmbeddingModel,
)
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm)
)
from rag.retrievers import Hit
from rag.retrievers.llm_rerank.retriever import numbered_passages, order_problems

from ..slots import Judgement, Outcome, RelevanceEvaluator, RelevanceFilter
from .similarity import question_similarities

VERDICTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "relevant": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["id", "relevant", "reason"],
        "additionalProperties": False,
    }}},
    "required": ["verdicts"],
    "additionalProperties": False,
}

JUDGE_PROMPT = (
    "You judge whether passages are relevant to a question. A passage is relevant when it states "
    "something that answers the question or a part of it; sharing words with the question is not "
    "enough. Give one verdict for EVERY passage id, each exactly once, with a short reason."
)


def verdict_messages(question: str, texts: Sequence[str], passage_characters: int) -> list[dict[str, str]]:
    """The conversation asking for one verdict per text of a batch."""
    return [
        {"role": "system", "content": JUDGE_PROMPT},
        {"role": "user", "content": (
            f"Question: {question}\n\nPassages:\n{numbered_passages(texts, passage_characters)}\n\n"
            f"Return {{\"verdicts\": [{{\"id\": ..., \"relevant\": true or false, \"reason\": \"...\"}}, ...]}} "
            f"with one verdict for each id from 0 to {len(texts) - 1}."
        )},
    ]


def _verdict_problems(answer: dict[str, Any], count: int) -> list[str]:
    return order_problems([verdict["id"] for verdict in answer["verdicts"]], count)


def judge_relevance(
    llm: LLM,
    question: str,
    hits: Sequence[Hit],
    *,
    batch_size: int,
    max_trials: int,
    passage_characters: int,
) -> tuple[list[Judgement], dict[str, Any]]:
    """One verdict per hit, in the hits' order, from one function call per batch of ``batch_size``.

    A batch's answer must name every id of the batch exactly once; otherwise it is asked again
    with the problems, up to ``max_trials`` attempts. The chunks of a batch that never gets a
    usable answer are judged not relevant, with a reason saying the judge failed.

    Returns
    -------
    judgements : list of Judgement
    details : dict
        ``batches`` (per batch: ``chunk_ids``, ``judged``, ``attempts``) and the counts
        ``relevant``, ``not_relevant`` and ``not_judged``.
    """
    judgements: list[Judgement] = []
    batches: list[dict[str, Any]] = []
    not_judged = 0
    for start in range(0, len(hits), batch_size):
        batch = list(hits[start:start + batch_size])
        arguments, attempts = llm.call_function_with_retries(
            verdict_messages(question, [hit.chunk.text for hit in batch], passage_characters), VERDICTS_SCHEMA,
            check=functools.partial(_verdict_problems, count=len(batch)),
            max_trials=max_trials, name="judge_passages",
            description="whether each passage is relevant to the question",
        )
        batches.append({"chunk_ids": [hit.chunk.id for hit in batch], "judged": arguments is not None,
                        "attempts": [attempt.to_dict() for attempt in attempts]})
        if arguments is None:
            problems = "; ".join(attempts[-1].problems) if attempts else "no attempt was made"
            reason = f"not judged: the LLM gave no usable verdicts after {len(attempts)} attempt(s) ({problems})"
            judgements.extend(Judgement(hit.chunk.id, False, reason) for hit in batch)
            not_judged += len(batch)
            continue
        verdicts = {verdict["id"]: verdict for verdict in arguments["verdicts"]}
        judgements.extend(
            Judgement(hit.chunk.id, verdicts[index]["relevant"], verdicts[index]["reason"].strip())
            for index, hit in enumerate(batch)
        )
    relevant = sum(judgement.relevant for judgement in judgements)
    return judgements, {"batches": batches, "relevant": relevant,
                        "not_relevant": len(judgements) - relevant - not_judged, "not_judged": not_judged}


def judgement_rows(judgements: Sequence[Judgement]) -> list[dict[str, Any]]:
    """Judgements as JSON rows for a trace."""
    return [{"chunk_id": judgement.chunk_id, "relevant": judgement.relevant, "reason": judgement.reason}
            for judgement in judgements]


class LLMJudgeParams(BaseParams):
    """The parameters of the LLM relevance judge (evaluator and filter alike)."""

    llm: ComponentRef = component_param(
        "llm", default=ref("LocalLLM"),
        title=ml("Language model", "Modelo de lenguaje", "語言模型"),
        description=ml("The model that judges the chunks.", "El modelo que juzga los fragmentos.",
                       "負責判斷區塊的模型。"),
    )
    batch_size: int = param(
        5, ge=1, le=20,
        title=ml("Chunks per call", "Fragmentos por llamada", "每次呼叫的區塊數"),
        description=ml(
            "How many chunks the model judges in one call; fewer is more reliable with small models.",
            "Cuántos fragmentos juzga el modelo en una llamada; menos es más fiable con modelos pequeños.",
            "模型每次呼叫要判斷的區塊數；小型模型用較少的數量較可靠。",
        ),
    )
    function_call_max_trials: int = param(
        3, ge=1, le=10,
        title=ml("Attempts", "Intentos", "嘗試次數"),
        description=ml(
            "How many times to ask again when the verdicts are malformed or miss a chunk.",
            "Cuántas veces preguntar de nuevo si los veredictos están mal formados u omiten un fragmento.",
            "當判斷結果格式錯誤或遺漏區塊時，最多重新詢問幾次。",
        ),
    )
    passage_characters: int = param(
        800, ge=50, le=20_000,
        title=ml("Characters per chunk", "Caracteres por fragmento", "每個區塊的字元數"),
        description=ml(
            "Each chunk is shown to the model cut to this length.",
            "Cada fragmento se muestra al modelo recortado a esta longitud.",
            "每個區塊會截短至此長度後提供給模型。",
        ),
    )


@register
class LLMRelevanceEvaluator(RelevanceEvaluator["LLMRelevanceEvaluator.Params"]):
    """An LLM judges each chunk relevant or not to the question, a batch of chunks per call.

    Each call answers ``{"verdicts": [{"id", "relevant", "reason"}, ...]}`` naming every id of
    its batch exactly once (else asked again with the problems). A batch that never gets a usable
    answer counts its chunks as not relevant, their reason saying the judge failed.
    """

    ICON = "scale"
    DISPLAY_NAME = ml("LLM relevance judge", "Juez de relevancia con LLM", "LLM 相關性評審")
    SHORT_NAME = ml("LLM judge", "Juez LLM", "LLM 評審")
    DESCRIPTION = ml(
        "An LLM reads each retrieved chunk and says whether it helps answer the question, with a reason.",
        "Un LLM lee cada fragmento recuperado y dice si ayuda a responder la pregunta, con un motivo.",
        "由 LLM 閱讀每個檢索到的區塊，判斷它是否有助於回答問題，並說明理由。",
    )
    REPRESENTATION = ml(
        "LLM judge · {llm.component} · {batch_size} per call",
        "Juez LLM · {llm.component} · {batch_size} por llamada",
        "LLM 評審 · {llm.component} · 每次 {batch_size} 個",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(LLMJudgeParams):
        pass

    def evaluate(self, question: str, hits: Sequence[Hit]) -> tuple[list[Judgement], dict[str, Any]]:
        """One ``Judgement`` per hit, in order; details as ``judge_relevance`` gives them."""
        return judge_relevance(
            self.llm, question, hits, batch_size=self.params.batch_size,
            max_trials=self.params.function_call_max_trials, passage_characters=self.params.passage_characters,
        )


@register
class LLMRelevanceFilter(RelevanceFilter["LLMRelevanceFilter.Params"]):
    """Keeps the chunks an LLM judges relevant to the question (the judge of
    ``LLMRelevanceEvaluator``); chunks of a batch the judge failed on are dropped, and the
    details say so."""

    ICON = "list-filter"
    DISPLAY_NAME = ml("LLM relevance filter", "Filtro de relevancia con LLM", "LLM 相關性篩選")
    SHORT_NAME = ml("LLM filter", "Filtro LLM", "LLM 篩選")
    DESCRIPTION = ml(
        "An LLM reads each retrieved chunk and only the chunks it finds relevant to the question are kept.",
        "Un LLM lee cada fragmento recuperado y solo se conservan los que considera relevantes para la pregunta.",
        "由 LLM 閱讀每個檢索到的區塊，只保留它認為與問題相關的區塊。",
    )
    REPRESENTATION = ml(
        "LLM filter · {llm.component} · {batch_size} per call",
        "Filtro LLM · {llm.component} · {batch_size} por llamada",
        "LLM 篩選 · {llm.component} · 每次 {batch_size} 個",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(LLMJudgeParams):
        pass

    def filter(self, question: str, hits: Sequence[Hit]) -> Outcome:
        """The hits judged relevant, in their order; ``details["judgements"]`` lists every verdict."""
        judgements, details = judge_relevance(
            self.llm, question, hits, batch_size=self.params.batch_size,
            max_trials=self.params.function_call_max_trials, passage_characters=self.params.passage_characters,
        )
        kept = [hit for hit, judgement in zip(hits, judgements, strict=True) if judgement.relevant]
        return Outcome(kept, {"judgements": judgement_rows(judgements), **details})


@register
class SimilarityThresholdFilter(RelevanceFilter["SimilarityThresholdFilter.Params"]):
    """Keeps the chunks whose cosine similarity to the question, with an embedding model, is at
    least ``threshold``; the details list every chunk's similarity."""

    ICON = "filter"
    DISPLAY_NAME = ml("Similarity threshold", "Umbral de similitud", "相似度門檻")
    SHORT_NAME = ml("Similarity", "Similitud", "相似度")
    DESCRIPTION = ml(
        "Drops the chunks whose embedding is not similar enough to the question's. Fast, no LLM needed.",
        "Descarta los fragmentos cuyo embedding no se parece lo bastante al de la pregunta. Rápido y sin LLM.",
        "捨棄嵌入向量與問題不夠相似的區塊。速度快，不需要 LLM。",
    )
    REPRESENTATION = ml(
        "Similarity ≥ {threshold} · {embedding_model.component}",
        "Similitud ≥ {threshold} · {embedding_model.component}",
        "相似度 ≥ {threshold} · {embedding_model.component}",
    )

    # Built from the slots of ``Params``.
    embedding_model: EmbeddingModel

    class Params(BaseParams):
        embedding_model: ComponentRef = component_param(
            "embedding", default=ref("AllMiniLML6V2OnnxEmbedding"),
            title=ml("Embedding model", "Modelo de embeddings", "嵌入模型"),
            description=ml(
                "The model that embeds the question and the chunks.",
                "El modelo que vectoriza la pregunta y los fragmentos.",
                "將問題與區塊轉為向量的模型。",
            ),
        )
        threshold: float = param(
            0.3, ge=-1.0, le=1.0,
            title=ml("Minimum similarity", "Similitud mínima", "最低相似度"),
            description=ml(
                "Cosine similarity from -1 to 1 a chunk needs to be kept; what counts as similar depends "
                "on the model.",
                "Similitud coseno, de -1 a 1, que necesita un fragmento para conservarse; qué se considera "
                "similar depende del modelo.",
                "區塊需達到的餘弦相似度（-1 至 1）才會保留；多相似才算相似取決於模型。",
            ),
        )

    def filter(self, question: str, hits: Sequence[Hit]) -> Outcome:
        """The hits at or above the threshold, in their order; ``details["similarities"]`` holds
        ``{"chunk_id", "similarity", "kept"}`` per hit."""
        similarities = question_similarities(self.embedding_model, question, [hit.chunk.text for hit in hits])
        threshold = self.params.threshold
        rows = [{"chunk_id": hit.chunk.id, "similarity": similarity, "kept": similarity >= threshold}
                for hit, similarity in zip(hits, similarities, strict=True)]
        kept = [hit for hit, row in zip(hits, rows, strict=True) if row["kept"]]
        return Outcome(kept, {"threshold": threshold, "similarities": rows})
