"""``LLMRerankRetriever``: the LLM reads the candidates and returns their complete order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rag.core import ComponentRef, children_param, component_param, ml, param, ref, register
from rag.llms import (
    LLM,
    Attempt,
    LocalLLM,  # noqa: F401  (registers the default llm_model)
    Message,
)
from rag.tracing import TraceNode

from ..base import CompositeRetriever, Hit, RerankParams, RetrievalError, RetrieverParams
from ..composite import EnsembleRetriever  # noqa: F401  (registers the default child)

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order": {"type": "array", "items": {"type": "integer"}}},
    "required": ["order"],
    "additionalProperties": False,
}

SYSTEM_PROMPT = (
    "You rank passages by how well they answer a question. You return the ids of ALL passages, "
    "each exactly once, most relevant first."
)


def order_problems(order: Sequence[Any], count: int) -> list[str]:
    """Why ``order`` is not a permutation of ``0..count-1`` (empty when it is)."""
    problems = []
    numbers = [value for value in order if isinstance(value, int) and not isinstance(value, bool)]
    unknown = sorted({value for value in numbers if not 0 <= value < count})
    repeated = sorted(value for value, times in Counter(numbers).items() if times > 1 and 0 <= value < count)
    missing = sorted(set(range(count)) - set(numbers))
    if unknown:
        problems.append(f"ids {unknown} are not candidates (valid ids are 0 to {count - 1})")
    if repeated:
        problems.append(f"ids {repeated} appear more than once")
    if missing:
        problems.append(f"ids {missing} are missing; every id must appear exactly once")
    return problems


def numbered_passages(texts: Sequence[str], passage_characters: int) -> str:
    """``[0] first text`` ... one block per text, each cut to ``passage_characters``."""
    return "\n\n".join(f"[{index}] {text[:passage_characters]}" for index, text in enumerate(texts))


def rerank_messages(question: str, texts: Sequence[str], passage_characters: int) -> list[Message]:
    """The conversation asking for the complete order of ``texts`` as answers to ``question``."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": (
            f"Question: {question}\n\nPassages:\n{numbered_passages(texts, passage_characters)}\n\n"
            f"Return {{\"order\": [...]}} with all {len(texts)} ids from 0 to {len(texts) - 1}, most relevant first."
        )},
    ]


def llm_order(
    llm: LLM, question: str, texts: Sequence[str], *, passage_characters: int, max_trials: int
) -> tuple[list[int] | None, list[Attempt]]:
    """Ask ``llm`` for the complete order of ``texts`` (indices, most relevant first).

    A malformed answer or one that is not a permutation of ``0..len(texts)-1`` is asked again
    with its problems, up to ``max_trials`` attempts in all.

    Returns
    -------
    order : list of int or None
        The accepted order, or None when no attempt was usable.
    attempts : list of Attempt
        Every attempt made, for the trace.
    """
    arguments, attempts = llm.call_function_with_retries(
        rerank_messages(question, texts, passage_characters), ORDER_SCHEMA,
        check=lambda answer: order_problems(answer["order"], len(texts)),
        max_trials=max_trials, name="rank_passages",
        description="the complete order of the passages, most relevant first",
    )
    return (list(arguments["order"]) if arguments is not None else None), attempts


def unusable_order_message(attempts: Sequence[Attempt]) -> str:
    """Why ``llm_order`` gave up, for a trace or an error."""
    problems = "; ".join(attempts[-1].problems) if attempts else "no attempt was made"
    return f"the LLM gave no usable order after {len(attempts)} attempt(s): {problems}"


class LLMOrderParams(RerankParams):
    """How an LLM's order is asked and kept: shared by the LLM re-rank retriever and re-ranker slot."""

    function_call_max_trials: int = param(
        3, ge=1, le=10,
        title=ml("Attempts", "Intentos", "嘗試次數"),
        description=ml(
            "How many times to ask again when the order is malformed or incomplete.",
            "Cuántas veces preguntar de nuevo si el orden está mal formado o incompleto.",
            "當排序格式錯誤或不完整時，最多重新詢問幾次。",
        ),
    )
    passage_characters: int = param(
        600, ge=50, le=20_000,
        title=ml("Characters per candidate", "Caracteres por candidato", "每個候選的字元數"),
        description=ml(
            "Each candidate is shown to the LLM cut to this length.",
            "Cada candidato se muestra al LLM recortado a esta longitud.",
            "每個候選區塊會截短至此長度後提供給 LLM。",
        ),
    )


@register
class LLMRerankRetriever(CompositeRetriever["LLMRerankRetriever.Params"]):
    """Asks its one child for candidates, then asks an LLM for the complete order of them.

    The answer must be ``{"order": [...]}`` naming every candidate id exactly once; a malformed
    answer, a missing, repeated or unknown id is rejected and asked again with the problems
    (up to ``function_call_max_trials`` attempts), after which the node fails with the reason.
    Only then is ``top_k`` kept. Scores are ``1 - position / candidates``.
    """

    CATEGORY = "re-ranking"
    ICON = "list-ordered"
    DISPLAY_NAME = ml("LLM re-ranker", "Reordenador con LLM", "LLM 重新排序")
    SHORT_NAME = ml("LLM re-rank", "Reordenar con LLM", "LLM 重新排序")
    DESCRIPTION = ml(
        "An LLM reads the candidates of its child retriever and puts them in order of relevance. "
        "Works offline with the local model.",
        "Un LLM lee los candidatos de su recuperador hijo y los ordena por relevancia. Funciona sin "
        "conexión con el modelo local.",
        "由 LLM 閱讀子檢索器的候選區塊並依相關性排序。使用本機模型即可離線運作。",
    )
    REPRESENTATION = ml(
        "LLM re-rank · {llm_model.component} · keep {top_k}",
        "Reordenar con LLM · {llm_model.component} · conserva {top_k}",
        "LLM 重新排序 · {llm_model.component} · 保留 {top_k}",
    )

    # Built from the slots of ``Params`` (``children`` as on every composite).
    llm_model: LLM

    class Params(LLMOrderParams, RetrieverParams):
        children: list[ComponentRef] = children_param(
            "retriever", min_children=1, max_children=1, default=[ref("EnsembleRetriever")],
            title=ml("Candidate retriever", "Recuperador de candidatos", "候選檢索器"),
            description=ml(
                "Exactly one child; its own top_k sets how many candidates the LLM orders.",
                "Exactamente un hijo; su propio top_k fija cuántos candidatos ordena el LLM.",
                "恰好一個子檢索器；其 top_k 決定 LLM 要排序的候選數量。",
            ),
        )
        llm_model: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"),
            title=ml("Language model", "Modelo de lenguaje", "語言模型"),
            description=ml("The model that orders the candidates.", "El modelo que ordena los candidatos.",
                           "負責排序候選區塊的模型。"),
        )

    def messages(self, query: str, candidates: Sequence[Hit]) -> list[Message]:
        return rerank_messages(query, [hit.chunk.text for hit in candidates], self.params.passage_characters)

    @classmethod
    def depth_limit(cls, params: Mapping[str, Any]) -> tuple[int, str] | None:
        child = params["children"][0]["params"]
        child_top_k = int(child.get("top_k") or child.get("max_chunks") or 10)
        # Deepening the child would put that many passages into one prompt.
        return child_top_k, f"{cls.NAME} re-orders its child's {child_top_k} candidates with an LLM"

    @property
    def score_scale(self) -> str:
        return "llm_rank"

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        candidates, child_node = self.children[0].search(query)
        node.children = [child_node]
        if len(candidates) <= 1:
            return candidates[:top_k]
        order, attempts = llm_order(
            self.llm_model, query, [hit.chunk.text for hit in candidates],
            passage_characters=self.params.passage_characters, max_trials=self.params.function_call_max_trials,
        )
        node.details["attempts"] = [attempt.to_dict() for attempt in attempts]
        if order is None:
            raise RetrievalError(unusable_order_message(attempts))
        count = len(candidates)
        return [
            Hit(candidates[index].chunk, 1.0 - position / count, ({"child": 0, "rank": index + 1,
                                                                   "score": candidates[index].score},))
            for position, index in enumerate(order[:top_k])
        ]

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        """The child's distances (asking an LLM to order arbitrary chunks is not worth its cost)."""
        return self.children[0].score_chunks(chunk_ids, query)
