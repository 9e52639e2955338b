"""``ResponseSynthesizer``: the answer from the chunks, with numbered citations and a token budget."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rag.core import ComponentRef, ConfigObject, Params, component_param, ml, param, ref, register
from rag.documents.models import SourceDocument
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm)
)
from rag.retrievers import Hit

Language = Literal["en", "es", "zh-Hant"]

INSTRUCTIONS: dict[str, str] = {
    "en": (
        "You are a helpful assistant. Use the numbered passages to answer the user's question in 2 to 4 "
        "complete sentences. End each sentence with the number of the passage it comes from in square "
        "brackets, like [1]. If the passages do not contain the answer, say \"I don't know.\" Answer in English."
    ),
    "es": (
        "Eres un asistente útil. Usa los pasajes numerados para responder la pregunta del usuario en 2 a 4 "
        "oraciones completas. Termina cada oración con el número del pasaje del que proviene entre corchetes, "
        "como [1]. Si los pasajes no contienen la respuesta, di \"No lo sé.\" Responde en español."
    ),
    "zh-Hant": (
        "你是一位樂於助人的助理。請根據編號的段落，用 2 到 4 個完整的句子回答使用者的問題。每個句子結尾用方括號標出"
        "其來源段落的編號，例如 [1]。如果段落中沒有答案，就回答「我不知道。」請用繁體中文回答。"
    ),
}
QUESTION_LABEL = {"en": "Question", "es": "Pregunta", "zh-Hant": "問題"}
CONTEXT_LABEL = {"en": "Context", "es": "Contexto", "zh-Hant": "內容"}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_SPANISH = re.compile(r"[¿¡ñáéíóúü]|\b(qué|cómo|cuál|cuáles|dónde|por qué|para|los|las|una|el|es|de|en)\b", re.I)
_CITATION = re.compile(r"\[(\d+(?:\s*[,，、]\s*\d+)*)\]")


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate: a CJK character is about one token, other text
    about four characters per token (BPE tokenizers' usual rate), rounded up."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def detect_language(text: str) -> str:
    """en, es or zh-Hant, from the question itself (enough to choose the answer's language)."""
    if _CJK.search(text):
        return "zh-Hant"
    return "es" if len(_SPANISH.findall(text)) >= 2 or re.search(r"[¿¡ñ]", text) else "en"


@dataclass
class Prepared:
    """What the model is given: the messages, the chunks actually sent (numbered from 1), the
    ones the budget dropped, and the budget's account for the trace."""

    messages: list[dict[str, str]]
    sent: list[Hit]
    dropped: list[Hit] = field(default_factory=list)
    budget: dict[str, Any] = field(default_factory=dict)
    language: str = "en"


@register
class ResponseSynthesizer(ConfigObject["ResponseSynthesizer.Params"]):
    """Writes the answer from the chunks with an LLM, citing them as ``[n]``.

    Chunks are numbered in rank order. When the prompt would exceed ``max_input_tokens``, the
    lowest-ranked chunks are dropped first (the trace lists them); a single chunk too long for
    the budget is cut. Citations map each ``[n]`` in the answer to the n-th chunk sent; numbers
    outside that range are not citations.
    """

    KIND: ClassVar[str] = "synthesizer"
    CATEGORY = "generation"
    ICON = "message-square-quote"
    DISPLAY_NAME = ml("Response synthesizer", "Sintetizador de respuestas", "回答合成器")
    SHORT_NAME = ml("Answer", "Respuesta", "回答")
    DESCRIPTION = ml(
        "Writes the answer from the retrieved chunks with an LLM, citing them as [1], [2]…, within a "
        "token budget.",
        "Redacta la respuesta a partir de los fragmentos recuperados con un LLM, citándolos como [1], "
        "[2]…, dentro de un presupuesto de tokens.",
        "以 LLM 依據檢索到的區塊撰寫回答，並以 [1]、[2]… 標註引用，控制在 token 預算之內。",
    )
    REPRESENTATION = ml(
        "Answer · {llm.component} · ≤{max_input_tokens} tokens in",
        "Respuesta · {llm.component} · ≤{max_input_tokens} tokens de entrada",
        "回答 · {llm.component} · 輸入 ≤{max_input_tokens} token",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(Params):
        llm: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"),
            title=ml("Language model", "Modelo de lenguaje", "語言模型"),
            description=ml("The model that writes the answer.", "El modelo que redacta la respuesta.",
                           "撰寫回答的模型。"),
        )
        max_input_tokens: int = param(
            3000, ge=200, le=200_000,
            title=ml("Input budget (tokens)", "Presupuesto de entrada (tokens)", "輸入預算（token）"),
            description=ml(
                "The most prompt tokens sent; the lowest-ranked chunks are dropped to fit.",
                "El máximo de tokens enviados; se descartan los fragmentos peor clasificados para caber.",
                "送出的提示 token 上限；會先捨棄排名最低的區塊以符合預算。",
            ),
        )
        language: Literal["auto", "en", "es", "zh-Hant"] = param(
            "auto",
            title=ml("Answer language", "Idioma de la respuesta", "回答語言"),
            description=ml(
                "auto answers in the question's language.",
                "auto responde en el idioma de la pregunta.",
                "auto 會以問題的語言回答。",
            ),
        )
        instructions: str | None = param(
            None, min_length=10, max_length=10_000,
            title=ml("Instructions", "Instrucciones", "指示"),
            description=ml(
                "Replaces the built-in instructions (which exist in English, Spanish and Traditional Chinese).",
                "Reemplaza las instrucciones integradas (disponibles en inglés, español y chino tradicional).",
                "取代內建指示（內建指示有英文、西班牙文與繁體中文版本）。",
            ),
        )
        history_turns: int = param(
            3, ge=0, le=20,
            title=ml("Conversation turns remembered", "Turnos de conversación recordados", "記住的對話輪數"),
            description=ml(
                "How many previous question–answer pairs the model sees, so follow-up questions work.",
                "Cuántos pares previos de pregunta y respuesta ve el modelo, para que funcionen las preguntas de seguimiento.",
                "模型可看到的先前問答組數，讓追問得以運作。",
            ),
        )

    def _language(self, question: str) -> str:
        return detect_language(question) if self.params.language == "auto" else self.params.language

    def _passage(self, number: int, hit: Hit, documents: Mapping[int, SourceDocument]) -> str:
        # Only the number: small models copy any label they are shown into the answer. Where a
        # passage comes from is shown to the user through the citations instead.
        return f"[{number}] {hit.chunk.text}"

    def prepare(
        self,
        question: str,
        hits: Sequence[Hit],
        history: Sequence[dict[str, str]] = (),
        documents: Mapping[int, SourceDocument] | None = None,
    ) -> Prepared:
        """The messages for ``question`` over ``hits`` (best first) within the token budget."""
        documents = documents or {}
        language = self._language(question)
        system = self.params.instructions or INSTRUCTIONS[language]
        turns = list(history)[-2 * self.params.history_turns:] if self.params.history_turns else []
        fixed = estimate_tokens(system) + sum(estimate_tokens(turn["content"]) for turn in turns) \
            + estimate_tokens(question) + 16
        budget = self.params.max_input_tokens
        passages = [self._passage(number, hit, documents) for number, hit in enumerate(hits, start=1)]
        costs = [estimate_tokens(passage) + 2 for passage in passages]
        kept = len(hits)
        while kept > 0 and fixed + sum(costs[:kept]) > budget:
            kept -= 1
        truncated = None
        if kept == 0 and hits:
            # Even the best chunk alone is over budget: send as much of it as fits.
            room = max(budget - fixed, 0)
            text = hits[0].chunk.text
            while text and estimate_tokens(text) + 8 > room:
                text = text[: int(len(text) * 0.9)]
            if text:
                kept = 1
                passages[0] = self._passage(1, Hit(_with_text(hits[0].chunk, text), hits[0].score), documents)
                costs[0] = estimate_tokens(passages[0]) + 2
                truncated = hits[0].chunk.id
        sent, dropped = list(hits[:kept]), list(hits[kept:])
        context = "\n\n".join(passages[:kept]) or "(no passages)"
        user = (f"{QUESTION_LABEL[language]}: {question}\n\n{CONTEXT_LABEL[language]}:\n{context}\n\n"
                f"{QUESTION_LABEL[language]}: {question}")
        messages = [{"role": "system", "content": system}, *turns, {"role": "user", "content": user}]
        account = {
            "max_input_tokens": budget,
            "used_tokens": fixed + sum(costs[:kept]),
            "sent": [hit.chunk.id for hit in sent],
            "dropped": [hit.chunk.id for hit in dropped],
            "truncated": truncated,
            "estimate": "CJK characters + other characters / 4",
        }
        return Prepared(messages, sent, dropped, account, language)

    def stream_answer(self, prepared: Prepared) -> Iterator[str]:
        return self.llm.stream(prepared.messages)

    def answer(self, prepared: Prepared) -> str:
        return self.llm.generate(prepared.messages)

    def citations(self, answer: str, prepared: Prepared,
                  documents: Mapping[int, SourceDocument] | None = None) -> list[dict[str, Any]]:
        """Each ``[n]`` of the answer that names a chunk sent, once, in order of first use."""
        documents = documents or {}
        seen: dict[int, dict[str, Any]] = {}
        for match in _CITATION.finditer(answer):
            for number in re.split(r"\s*[,，、]\s*", match.group(1)):
                n = int(number)
                if 1 <= n <= len(prepared.sent) and n not in seen:
                    chunk = prepared.sent[n - 1].chunk
                    document = documents.get(chunk.document_id)
                    seen[n] = {
                        "n": n, "chunk_id": chunk.id, "document_id": chunk.document_id,
                        "document_name": getattr(document, "name", None) or chunk.metadata.get("title"),
                        "position": chunk.position, "page": chunk.metadata.get("page"),
                        "url": chunk.metadata.get("url"), "preview": chunk.text[:300],
                    }
        return list(seen.values())


def _with_text(chunk: Any, text: str) -> Any:
    from dataclasses import replace

    return replace(chunk, text=text)
