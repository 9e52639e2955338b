"""Query transformers: rephrasings of the question (multi-query) and a hypothetical answer (HyDE)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag.core import ComponentRef, component_param, ml, param, ref, register
from rag.core import Params as BaseParams
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm)
)

from ..slots import QueryTransformer

_LLM_TITLE = ml("Language model", "Modelo de lenguaje", "語言模型")

MULTI_QUERY_PROMPT = (
    "You rewrite a search question into other phrasings with the same meaning, so that a search "
    "finds passages the original wording would miss: use synonyms, name the underlying concepts, "
    "make implicit terms explicit. Keep the language of the question."
)

HYDE_PROMPT = (
    "You write the passage of a reference document that would answer the question: factual in tone, "
    "as in an encyclopedia or a manual, in the language of the question. Write only the passage; do "
    "not mention the question, doubts or that the passage is hypothetical."
)


def queries_schema(n: int) -> dict[str, Any]:
    """The arguments of the rephrasing call: exactly ``n`` non-empty strings."""
    return {
        "type": "object",
        "properties": {"queries": {"type": "array", "items": {"type": "string", "minLength": 1},
                                   "minItems": n, "maxItems": n}},
        "required": ["queries"],
        "additionalProperties": False,
    }


def _comparable(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip("?.!。？！ ")


def rephrasing_problems(question: str, queries: Sequence[str], n: int) -> list[str]:
    """Why ``queries`` are not ``n`` distinct rephrasings of ``question`` (empty when they are).

    Two texts count as the same when they differ only in case, spacing or final punctuation.
    """
    problems = []
    if len(queries) != n:
        problems.append(f"{len(queries)} queries were given; exactly {n} are needed")
    original = _comparable(question)
    seen: dict[str, int] = {}
    for index, query in enumerate(queries):
        key = _comparable(query)
        if not key:
            problems.append(f"queries[{index}] is empty")
        elif key == original:
            problems.append(f"queries[{index}] repeats the original question; rephrase it")
        elif key in seen:
            problems.append(f"queries[{index}] repeats queries[{seen[key]}]; every rephrasing must differ")
        else:
            seen[key] = index
    return problems


@register
class MultiQueryTransformer(QueryTransformer["MultiQueryTransformer.Params"]):
    """Asks an LLM for ``n`` distinct rephrasings of the question and retrieves with all of them.

    One function call answers ``{"queries": [...]}`` with exactly ``n`` rephrasings, different from
    the question and from each other; an unusable answer is asked again with its problems, up to
    ``function_call_max_trials`` attempts. ``transform`` returns ``[question, *rephrasings]``; when
    no attempt is usable it returns ``[question]`` and its details say so.
    """

    ICON = "copy-plus"
    DISPLAY_NAME = ml("Multi-query rephrasing", "Reformulación múltiple", "多重查詢改寫")
    SHORT_NAME = ml("Multi-query", "Multiconsulta", "多重查詢")
    DESCRIPTION = ml(
        "An LLM rewrites the question in several ways; every version is searched, so passages worded "
        "differently from the question are found too.",
        "Un LLM reescribe la pregunta de varias maneras; se busca con cada versión, de modo que también "
        "se encuentran pasajes redactados de forma distinta a la pregunta.",
        "由 LLM 以多種方式改寫問題，並以每個版本分別搜尋，藉此找出措辭與問題不同的段落。",
    )
    REPRESENTATION = ml(
        "Multi-query · {llm.component} · {n} rephrasings",
        "Multiconsulta · {llm.component} · {n} reformulaciones",
        "多重查詢 · {llm.component} · {n} 個改寫",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(BaseParams):
        llm: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"), title=_LLM_TITLE,
            description=ml("The model that writes the rephrasings.", "El modelo que escribe las reformulaciones.",
                           "負責撰寫改寫版本的模型。"),
        )
        n: int = param(
            3, ge=1, le=10,
            title=ml("Rephrasings", "Reformulaciones", "改寫數量"),
            description=ml(
                "How many rephrasings to search with, besides the original question.",
                "Con cuántas reformulaciones buscar, además de la pregunta original.",
                "除原始問題外，要用幾個改寫版本搜尋。",
            ),
        )
        function_call_max_trials: int = param(
            3, ge=1, le=10,
            title=ml("Attempts", "Intentos", "嘗試次數"),
            description=ml(
                "How many times to ask when the rephrasings are malformed, too few or repeated.",
                "Cuántas veces preguntar si las reformulaciones están mal formadas, faltan o se repiten.",
                "當改寫格式錯誤、數量不足或重複時，最多詢問幾次。",
            ),
        )

    def transform(self, question: str) -> tuple[list[str], dict[str, Any]]:
        """``([question, *rephrasings], details)``; ``details`` holds the attempts and, when no
        attempt was usable, ``fallback`` saying that only the question is used."""
        n = self.params.n
        messages = [
            {"role": "system", "content": MULTI_QUERY_PROMPT},
            {"role": "user", "content": (
                f"Question: {question}\n\nReturn {{\"queries\": [...]}} with exactly {n} rephrasings, each "
                "different from the question and from one another."
            )},
        ]
        arguments, attempts = self.llm.call_function_with_retries(
            messages, queries_schema(n), check=lambda answer: rephrasing_problems(question, answer["queries"], n),
            max_trials=self.params.function_call_max_trials, name="rephrase_question",
            description=f"{n} rephrasings of the question",
        )
        details: dict[str, Any] = {"attempts": [attempt.to_dict() for attempt in attempts]}
        if arguments is None:
            problems = "; ".join(attempts[-1].problems) if attempts else "no attempt was made"
            details["fallback"] = (
                f"the LLM gave no usable rephrasings after {len(attempts)} attempt(s) ({problems}); "
                "searching with the original question alone"
            )
            return [question], details
        variants = [query.strip() for query in arguments["queries"]]
        details["variants"] = variants
        return [question, *variants], details


@register
class HyDETransformer(QueryTransformer["HyDETransformer.Params"]):
    """Hypothetical document embeddings: an LLM writes a short passage that would answer the
    question, and retrieval searches with that passage (which reads like the documents) as well
    as, by default, with the question.

    The length is asked for in the prompt (``passage_words``); the LLM's own ``max_tokens`` is
    the hard limit. An empty passage falls back to the question alone, and the details say so.
    """

    ICON = "lightbulb"
    DISPLAY_NAME = ml("Hypothetical answer (HyDE)", "Respuesta hipotética (HyDE)", "假設性答案（HyDE）")
    SHORT_NAME = ml("HyDE", "HyDE", "HyDE")
    DESCRIPTION = ml(
        "An LLM writes a short passage that would answer the question; searching with it finds "
        "documents that read like an answer, not like a question.",
        "Un LLM escribe un pasaje breve que respondería la pregunta; buscar con él encuentra documentos "
        "que se parecen a una respuesta, no a una pregunta.",
        "由 LLM 撰寫一段可回答問題的短文，以它搜尋，可找到讀起來像答案而非問題的文件。",
    )
    REPRESENTATION = ml(
        "HyDE · {llm.component} · ~{passage_words} words",
        "HyDE · {llm.component} · ~{passage_words} palabras",
        "HyDE · {llm.component} · 約 {passage_words} 字",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(BaseParams):
        llm: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"), title=_LLM_TITLE,
            description=ml("The model that writes the passage.", "El modelo que escribe el pasaje.",
                           "負責撰寫段落的模型。"),
        )
        passage_words: int = param(
            100, ge=20, le=500,
            title=ml("Passage length (words)", "Longitud del pasaje (palabras)", "段落長度（字數）"),
            description=ml(
                "About how long the passage should be; the model's own maximum answer length still applies.",
                "Longitud aproximada del pasaje; sigue valiendo la longitud máxima de respuesta del modelo.",
                "段落的大約長度；模型本身的回答長度上限仍然適用。",
            ),
        )
        include_original: bool = param(
            True,
            title=ml("Search with the question too", "Buscar también con la pregunta", "也以原問題搜尋"),
            description=ml(
                "Search with the original question as well as with the passage.",
                "Buscar con la pregunta original además de con el pasaje.",
                "除段落外，也以原始問題搜尋。",
            ),
        )

    def transform(self, question: str) -> tuple[list[str], dict[str, Any]]:
        """``([question, passage], details)`` (``[passage]`` without ``include_original``);
        ``details["passage"]`` is the passage written."""
        messages = [
            {"role": "system", "content": HYDE_PROMPT},
            {"role": "user", "content": (
                f"Question: {question}\n\nWrite a passage of at most {self.params.passage_words} words that "
                "answers it."
            )},
        ]
        passage = self.llm.generate(messages).strip()
        if not passage:
            return [question], {"passage": "", "fallback": "the LLM wrote an empty passage; searching with the "
                                                            "original question alone"}
        queries = [question, passage] if self.params.include_original else [passage]
        return queries, {"passage": passage}
