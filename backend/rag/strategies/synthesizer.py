"""``ResponseSynthesizer``: the answer from the chunks, with numbered citations and a token budget."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

from rag.core import ComponentRef, ConfigObject, Params, component_param, ml, param, ref, register
from rag.documents.models import SourceDocument, page_span
from rag.llms import (
    ANSWER_MODEL,
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm)
)
from rag.retrievers import Hit

from . import grounding
from .answer_prompts import INSTRUCTIONS, LANGUAGES, cited_numbers, detect_language, example_turns, user_message
from .context import distinct, fit, searched_parts
from .grounding import Grounding

Language = Literal["en", "es", "zh-Hant", "zh-Hans"]

MIN_PASSAGE_ROOM = 200
"""Below this many tokens for passages, the worked examples and then the oldest conversation
turns are left out to make room (under a reading budget, below half of it: a small reading
budget may be smaller than this)."""
MIN_READING_ROOM = 60
"""The passages' room under a reading budget never falls below this (about two sentences): a
long question or conversation would otherwise leave the model no passage to answer from; it
then reads a little more."""


def _cramped(rooms: dict[str, int], limits: dict[str, int], names: Sequence[str]) -> bool:
    """Whether the passages' room under any limit of ``names`` is below MIN_PASSAGE_ROOM, or, for a
    reading budget (which may be smaller than that), below half of it."""
    def floor(name: str) -> int:
        return min(MIN_PASSAGE_ROOM, limits[name] // 2) if name == "reading_tokens" else MIN_PASSAGE_ROOM
    return any(rooms[name] < floor(name) for name in names)


PASSAGE_OVERHEAD_TOKENS = 6
"""A passage's number and separator in the prompt."""


def _prefix_tokens(count: Callable[[str], int], system: str, examples: list[dict[str, str]]) -> int:
    return count(system) + sum(count(turn["content"]) + 4 for turn in examples) + 4


@dataclass
class Prepared:
    """What the model is given: the messages, the chunks actually sent (numbered from 1), the
    ones the budget dropped, and the budget's account for the trace."""

    messages: list[dict[str, str]]
    sent: list[Hit]
    dropped: list[Hit] = field(default_factory=list)
    budget: dict[str, Any] = field(default_factory=dict)
    language: str = "en"
    question: str = ""


@register
class ResponseSynthesizer(ConfigObject["ResponseSynthesizer.Params"]):
    """Writes the answer from the chunks with an LLM, citing them as ``[n]``.

    The model is asked for the direct answer first, in one short sentence of the question's
    language, then its citation, or to say the passages do not hold the answer
    (``rag.strategies.answer_prompts``: instructions and five worked examples per language). It
    reads distinct passages (``rag.strategies.context``): repeated text removed, at most
    ``max_passages`` (or what ``prepare`` is told), numbered in rank order, sharing the token
    budget, the best the largest share (fewer passages when the budget cannot give each about
    three sentences); a passage over its share is cut to the sentences around
    the question's words, and one that cannot keep a sentence is dropped (the trace lists what
    was removed, cut and dropped, and which limit set the budget). Citations map each ``[n]`` in
    the answer to the n-th passage sent; numbers outside that range are not citations. ``ground``
    checks each cited sentence against its passage (``rag.strategies.grounding``); ``asking`` puts
    one part of a several-part question to the same passages, when the answer left it out
    (``ask_left_out_parts``, ``rag.strategies.left_out_parts``).
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
        "Answer · {llm.component} · ≤{max_passages} passages · ≤{max_input_tokens} tokens in",
        "Respuesta · {llm.component} · ≤{max_passages} pasajes · ≤{max_input_tokens} tokens de entrada",
        "回答 · {llm.component} · ≤{max_passages} 段 · 輸入 ≤{max_input_tokens} token",
    )

    # Built from the slots of ``Params``.
    llm: LLM

    class Params(Params):
        llm: ComponentRef = component_param(
            "llm", default=ref("LocalLLM", model=ANSWER_MODEL),
            title=ml("Language model", "Modelo de lenguaje", "語言模型"),
            description=ml(
                "The model that writes the answer; by default the packaged local 1.5B model, which answers "
                "about twice as often as the 0.5B and starts within seconds.",
                "El modelo que redacta la respuesta; por defecto el modelo local 1.5B incluido, que acierta "
                "cerca del doble de veces que el 0.5B y empieza en pocos segundos.",
                "撰寫回答的模型；預設為內建的本機 1.5B 模型，答對的次數約為 0.5B 的兩倍，且數秒內即開始回答。",
            ),
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
        language: Literal["auto", "en", "es", "zh-Hant", "zh-Hans"] = param(
            "auto",
            title=ml("Answer language", "Idioma de la respuesta", "回答語言"),
            description=ml(
                "auto answers in the question's language (Chinese in the question's script).",
                "auto responde en el idioma de la pregunta (el chino, en la escritura de la pregunta).",
                "auto 會以問題的語言回答（中文依問題所用的繁體或簡體）。",
            ),
        )
        max_passages: int | None = param(
            None, ge=1, le=1000,
            title=ml("Passages sent", "Pasajes enviados", "送出的段落數"),
            description=ml(
                "The most passages the model reads, best first, after repeated text is removed, always within "
                "the input budget. Empty: as many as the strategy hands over (a re-ranker's top_k, "
                "MapReduceRAG's top_k, else every chunk retrieved), except that a small local model reads a few "
                "within its reading budget, so its answer starts within seconds.",
                "El máximo de pasajes que lee el modelo, los mejores primero, tras quitar el texto repetido, "
                "siempre dentro del presupuesto de entrada. Vacío: tantos como entrega la estrategia (el top_k "
                "de un reordenador, el top_k de MapReduceRAG, si no todos los fragmentos recuperados), salvo "
                "que un modelo local pequeño lee unos pocos dentro de su presupuesto de lectura, para que su "
                "respuesta empiece en segundos.",
                "模型最多閱讀的段落數（最佳者優先，已去除重複文字），一律在輸入預算之內。留空：策略交來多少就讀多少"
                "（重新排序器的 top_k、MapReduceRAG 的 top_k，否則為全部檢索到的區塊），但小型本機模型只在其閱讀"
                "預算內讀少數幾段，讓回答在數秒內開始。",
            ),
        )
        max_answer_tokens: int = param(
            200, ge=16, le=32768,
            title=ml("Longest answer (tokens)", "Respuesta más larga (tokens)", "回答長度上限（token）"),
            description=ml(
                "The answer stops after this many tokens (and never runs past the model's own limit): a "
                "direct answer and its citation need far fewer, and a model that rambles stops in time.",
                "La respuesta se detiene tras esta cantidad de tokens (y nunca supera el límite del propio "
                "modelo): una respuesta directa y su cita necesitan muchos menos, y un modelo que divaga se "
                "detiene a tiempo.",
                "回答在此數量的 token 後停止（且不超過模型自身的上限）：直接的回答加上引用所需遠少於此，"
                "離題的模型也能及時停下。",
            ),
        )
        relevance_floor: float | None = param(
            None, ge=0.0, le=1.0,
            title=ml("Relevance floor", "Umbral de relevancia", "相關性下限"),
            description=ml(
                "When the question's similarity to its best passage (under the pipeline's dense embedding "
                "model) is below this, the reply says the documents do not hold the answer, without asking "
                "the model. Empty: the floor measured for the embedding model and the question's language "
                "(multilingual-e5-small: Spanish and Chinese), none elsewhere. 0: never.",
                "Si la similitud de la pregunta con su mejor pasaje (según el modelo de embeddings denso de la "
                "canalización) queda por debajo, la respuesta dice que los documentos no la contienen, sin "
                "preguntar al modelo. Vacío: el umbral medido para el modelo de embeddings y el idioma de la "
                "pregunta (multilingual-e5-small: español y chino); ninguno en otros casos. 0: nunca.",
                "若問題與最佳段落的相似度（依管線的稠密嵌入模型）低於此值，回覆會說明文件中沒有答案，"
                "不必詢問模型。留空：採用為該嵌入模型與問題語言量測的下限（multilingual-e5-small：西班牙文與中文），"
                "其他情況不設下限。0：永不。",
            ),
        )
        instructions: str | None = param(
            None, min_length=10, max_length=10_000,
            title=ml("Instructions", "Instrucciones", "指示"),
            description=ml(
                "Replaces the built-in instructions and their worked examples (which exist in English, "
                "Spanish and Chinese).",
                "Reemplaza las instrucciones integradas y sus ejemplos resueltos (disponibles en inglés, "
                "español y chino).",
                "取代內建指示及其範例（內建版本有英文、西班牙文與中文）。",
            ),
        )
        ask_left_out_parts: bool = param(
            True,
            title=ml("Ask again for a part left out", "Volver a preguntar por una parte sin respuesta",
                     "再問一次未回答的部分"),
            description=ml(
                "When a question asks two things or more and the answer leaves one out (or only repeats it), "
                "that part is asked on its own over the same passages, and its supported answer completes the "
                "reply: one more model call per part left out.",
                "Si una pregunta pide dos cosas o más y la respuesta deja una fuera (o solo la repite), esa "
                "parte se pregunta sola sobre los mismos pasajes, y su respuesta respaldada completa la "
                "respuesta: una llamada más al modelo por parte omitida.",
                "當問題同時問兩件以上的事，而回答漏掉其中一件（或只是重述它）時，會針對該部分在相同段落上單獨再問一次，"
                "並以有依據的回答補全回覆：每個遺漏的部分多一次模型呼叫。",
            ),
        )
        history_turns: int = param(
            0, ge=0, le=20,
            title=ml("Conversation turns shown", "Turnos de conversación mostrados", "顯示的對話輪數"),
            description=ml(
                "How many previous question–answer pairs the answering model reads. Each question is first "
                "rewritten to stand alone (the strategy's follow-up model), so none are needed to answer a "
                "follow-up; more cost reading time.",
                "Cuántos pares previos de pregunta y respuesta lee el modelo que responde. Cada pregunta se "
                "reescribe antes para que se entienda sola (el modelo de seguimiento de la estrategia), así que "
                "no hacen falta para responder a un seguimiento; más cuestan tiempo de lectura.",
                "回答模型會讀取的先前問答組數。每個問題都會先改寫成可獨立理解的問題（由策略的追問模型），"
                "因此回答追問不需要它們；設得越多，閱讀時間越長。",
            ),
        )

    def _language(self, question: str, hits: Sequence[Hit]) -> str:
        if self.params.language != "auto":
            return self.params.language
        return detect_language(question, " ".join(hit.chunk.text[:200] for hit in hits[:3]))

    def prepare(
        self,
        question: str,
        hits: Sequence[Hit],
        history: Sequence[dict[str, str]] = (),
        documents: Mapping[int, SourceDocument] | None = None,
        passages: int | None = None,
    ) -> Prepared:
        """The messages for ``question`` over ``hits`` (best first) within the token budget.

        How many passages: ``max_passages`` if set, else ``passages`` (what the strategy says it
        hands over), else every hit; a model with reading defaults (a small local model) reads
        its default count within its reading budget when neither says. They share what the
        budget leaves after the instructions, the examples, the conversation and the question: the
        least of ``max_input_tokens``, the model's context window less its answer, and the model's
        reading budget (its explicit ``reading_tokens``, or its default one as above, once per
        part of the question the retrieval searched on its own, ``context.searched_parts``). Nothing
        measured at run time enters: the same question gets the same prompt on any machine.
        """
        language = self._language(question, hits)
        system = self.params.instructions or INSTRUCTIONS[language]
        turns = list(history)[-2 * self.params.history_turns:] if self.params.history_turns else []
        limits = dict(self.llm.input_limits())
        examples = [] if self.params.instructions else example_turns(language)
        count_given = self.params.max_passages if self.params.max_passages is not None else passages
        defaults = self.llm.reading_defaults() if count_given is None else None
        parts, default_reading = 1, None
        if defaults is not None:
            # A question the retrieval searched part by part reads the default once per part (at
            # most one part per default passage): within the 1.5B's default budget the answer
            # model read one passage, so only one fact of a two-fact question, whichever pipeline
            # found both. The model's own reading_tokens, when set, is obeyed as it is.
            parts = min(searched_parts(hits), defaults.passages)
            count_given = defaults.passages
            default_reading = defaults.reading_tokens * parts
            limits.setdefault("reading_tokens", default_reading)
        passage_count = count_given if count_given is not None else len(hits)

        count = self.llm.count_tokens

        def new_tokens() -> int:
            return sum(count(turn["content"]) + 4 for turn in turns) \
                + count(user_message(language, question, [])) + 8

        new = new_tokens()
        rooms = self._rooms(limits, system, examples, new)
        # A tight budget goes to the passages, which hold the answer: first without the worked
        # examples, then without the oldest turns of the conversation.
        # The examples are read once and cached, so leaving them out saves no reading.
        if examples and _cramped(rooms, limits, [name for name in rooms if name != "reading_tokens"]):
            examples = []
            rooms = self._rooms(limits, system, examples, new)
        while turns and _cramped(rooms, limits, list(rooms)):
            turns = turns[2:]
            new = new_tokens()
            rooms = self._rooms(limits, system, examples, new)
        prefix = _prefix_tokens(count, system, examples)
        limited_by = min(rooms, key=rooms.__getitem__)
        room = max(rooms[limited_by], 0)

        unique = distinct(hits)
        candidates = unique.hits[:passage_count]
        over_limit = [hit.chunk.id for hit in unique.hits[passage_count:]]
        fitted = fit(candidates, question, room, count, PASSAGE_OVERHEAD_TOKENS)
        sent = fitted.hits
        texts = [hit.chunk.text for hit in sent]
        messages = [{"role": "system", "content": system}, *examples, *turns,
                    {"role": "user", "content": user_message(language, question, texts)}]
        passage_tokens = sum(count(text) + PASSAGE_OVERHEAD_TOKENS for text in texts)
        cut = [entry for entry in fitted.trimmed if entry["reason"] == "budget"]
        account = {
            "max_input_tokens": self.params.max_input_tokens,
            "model_limits": limits,
            "passages": {"count": passage_count,
                         "set_by": ("max_passages" if self.params.max_passages is not None
                                    else "strategy" if passages is not None
                                    else "model default" if defaults is not None else "retrieved")},
            "limited_by": limited_by,
            "reading_tokens_set_by": (None if "reading_tokens" not in limits
                                      else "model default" if limits["reading_tokens"] == default_reading
                                      else "model"),
            "parts": parts,
            "examples": len(examples) // 2,
            "history_turns": len(turns) // 2,
            "history_turns_asked": min(self.params.history_turns, len(history) // 2),
            "passage_tokens": room,
            "used_tokens": prefix + new + passage_tokens,
            "new_tokens": new + passage_tokens,
            "sent": [hit.chunk.id for hit in sent],
            "dropped": fitted.dropped + over_limit,
            "beyond_max_passages": over_limit,
            "duplicates": unique.duplicates,
            "trimmed": unique.trimmed + fitted.trimmed,
            "truncated": cut[0]["chunk_id"] if cut else None,
            "tokens_counted_by": self.llm.tokens_counted_by(),
        }
        dropped_ids = {*fitted.dropped, *over_limit}
        dropped = [hit for hit in unique.hits if hit.chunk.id in dropped_ids]
        return Prepared(messages, sent, dropped, account, language, question)

    def _rooms(self, limits: dict[str, int], system: str, examples: list[dict[str, str]], new: int) -> dict[str, int]:
        """The tokens left for passages under each limit: the synthesizer's own, the model's
        window (less its answer), and the model's reading budget (new tokens only: the
        instructions and examples are the same every time and cached)."""
        prefix = _prefix_tokens(self.llm.count_tokens, system, examples)
        rooms = {"max_input_tokens": self.params.max_input_tokens - prefix - new}
        if limits.get("context_tokens"):
            answer = min(limits.get("answer_tokens", self.params.max_answer_tokens), self.params.max_answer_tokens)
            rooms["context_tokens"] = limits["context_tokens"] - answer - prefix - new
        if limits.get("reading_tokens"):
            rooms["reading_tokens"] = max(limits["reading_tokens"] - new, MIN_READING_ROOM)
        return rooms

    def warm(self, languages: Sequence[str] = LANGUAGES) -> None:
        """Load the model and have it read the instructions and examples of each language, so
        that even the first question reads only its passages (models that cannot prefill are
        only loaded)."""
        self.llm.init_model()
        prefill = getattr(self.llm, "prefill", None)
        if prefill is None:
            return
        for language in languages:
            system = self.params.instructions or INSTRUCTIONS[language]
            examples = [] if self.params.instructions else example_turns(language)
            prefill([{"role": "system", "content": system}, *examples])

    def asking(self, prepared: Prepared, question: str) -> Prepared:
        """``prepared`` asking ``question`` instead (a part of it): the same passages, as cut, under
        the same numbers, so the answers' citations name the same passages."""
        texts = [hit.chunk.text for hit in prepared.sent]
        user = {"role": "user", "content": user_message(prepared.language, question, texts)}
        return replace(prepared, messages=[*prepared.messages[:-1], user], question=question)

    def without_examples(self, prepared: Prepared) -> Prepared:
        """``prepared`` with its worked examples left out: the instructions, the conversation and
        the same passages under the same numbers."""
        examples = 2 * prepared.budget.get("examples", 0)
        messages = [prepared.messages[0], *prepared.messages[1 + examples:]]
        return replace(prepared, messages=messages, budget={**prepared.budget, "examples": 0})

    def stream_answer(self, prepared: Prepared) -> Iterator[str]:
        return self.llm.stream(prepared.messages, max_tokens=self.params.max_answer_tokens)

    def answer(self, prepared: Prepared) -> str:
        return self.llm.generate(prepared.messages, max_tokens=self.params.max_answer_tokens)

    def ground(self, answer: str, prepared: Prepared) -> Grounding:
        """Whether each sentence of ``answer`` is supported by the passage it cites, and whether
        the answer is declined (the model said the passages do not hold it, or nothing it says is
        supported by them): ``rag.strategies.grounding``."""
        return grounding.check(answer, prepared.question, [hit.chunk.text for hit in prepared.sent],
                               prepared.language)

    def passage_refs(self, prepared: Prepared, documents: Mapping[int, SourceDocument] | None = None,
                     numbers: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The passages sent (or those ``numbers`` name, from 1), as a citation shows them:
        ``page`` and ``last_page`` are the first and last page the chunk covers (equal for one
        page, None for an unpaged document)."""
        documents = documents or {}
        refs = []
        for n in numbers if numbers is not None else range(1, len(prepared.sent) + 1):
            chunk = prepared.sent[n - 1].chunk
            document = documents.get(chunk.document_id)
            first, last = page_span(chunk.metadata) or (None, None)
            refs.append({
                "n": n, "chunk_id": chunk.id, "document_id": chunk.document_id,
                "document_name": getattr(document, "name", None) or chunk.metadata.get("title"),
                "position": chunk.position, "page": first, "last_page": last,
                "url": chunk.metadata.get("url"), "preview": chunk.text[:300],
            })
        return refs

    def citations(self, answer: str, prepared: Prepared,
                  documents: Mapping[int, SourceDocument] | None = None) -> list[dict[str, Any]]:
        """Each ``[n]`` of the answer that names a chunk sent, once, in order of first use."""
        numbers = [n for n in dict.fromkeys(cited_numbers(answer)) if 1 <= n <= len(prepared.sent)]
        return self.passage_refs(prepared, documents, numbers)
