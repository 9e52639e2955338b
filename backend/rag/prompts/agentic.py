"""The prompt of the agentic ensemble: the question, the children it may consult, the pool.

The system message (the editable instructions) says what a search is and what a verdict holds.
Small models follow an example far better than a rule, so three worked turns come next, in the
question's language: a plan that splits a two-part question into one search per part, a
judgement that names the part still missing and searches for it, and one that stops. They use a
made-up knowledge base, catalog and question: the packaged 0.5B model copied an example it could
use as is ("The pool is empty; start with the broadest retriever.") word for word as its plan.
The instructions and examples are the same for every question of a language, so the local
model's server reads them once (its prompt cache); what varies is the last user message, which
starts with the tree's catalog (also cached, for the next question asked of the same tree) and
ends by naming the language the reason must be written in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rag.core import ConfigObject, ml, param, register
from rag.core import Params as BaseParams
from rag.documents.focus import focus
from rag.llms.base import estimate_tokens

LANGUAGE_NAMES = {"en": "English", "es": "Spanish", "zh-Hant": "Traditional Chinese", "zh-Hans": "Simplified Chinese"}
"""The question's language as the message names it ("Write the reason in Spanish.")."""

DEFAULT_INSTRUCTIONS = """You choose searches that find the passages answering a question, and after \
each round you read what they found. A writer then answers from the first three passages of the \
pool, so each part of the question needs a passage of its own near the top.

A search is an operation {"child": <catalog number>, "query": <text to search>, "top_k": <results>}:
- query: leave it out to search the whole question. When the question asks two or more things, give \
each thing its own operation whose query names only that thing, in the question's own words and \
language.
- top_k: leave it out to get the child's own number of results.
- child: choose by what the catalog says each child is good at; different children find different \
passages.
- Never make again a search listed under "Already searched" (same child, query and top_k).

Answer with one JSON object:
- "reason": one short sentence in the language the message names. Planning: which parts the \
question has. Judging: which part each useful passage answers, and what is still missing. Never \
answer the question yourself.
- "sufficient": judging only: true when every part of the question has a passage that answers it.
- "operations": the next searches; empty when sufficient."""

# A made-up case per language: (question, catalog rows, [(pool, searched, planning, verdict)]).
# Its words must not fit a real question: the model would copy them.
_Step = tuple[list[str], list[tuple[int, int, "str | None"]], bool, dict[str, Any]]
EXAMPLES: dict[str, tuple[str, list[dict[str, Any]], list[_Step]]] = {
    "en": (
        "When did the Lebre Point lighthouse open, and who painted its murals?",
        [{"index": 0, "name": "Shelf index", "kind": "keyword search", "top_k": 8,
          "description": "exact names, numbers and rare words"},
         {"index": 1, "name": "Meaning finder", "kind": "semantic search", "top_k": 6,
          "description": "the meaning, also said in other words"}],
        [([], [], True,
          {"reason": "Two parts: when the lighthouse opened, and who painted its murals.", "sufficient": False,
           "operations": [{"child": 0, "query": "Lebre Point lighthouse opened"},
                          {"child": 1, "query": "who painted the lighthouse murals"}]}),
         (["The Lebre Point lighthouse was first lit in 1912, on a granite ledge.",
           "The road to the cape was paved decades later."],
          [(0, 8, "Lebre Point lighthouse opened"), (1, 6, "who painted the lighthouse murals")], False,
          {"reason": "[1] gives the opening year; who painted the murals is still missing.", "sufficient": False,
           "operations": [{"child": 0, "query": "murals Lebre Point painter"}]}),
         (["The Lebre Point lighthouse was first lit in 1912, on a granite ledge.",
           "Its murals are the work of the painter Aurora Vilas.", "The road to the cape was paved decades later."],
          [(0, 8, "Lebre Point lighthouse opened"), (1, 6, "who painted the lighthouse murals"),
           (0, 8, "murals Lebre Point painter")], False,
          {"reason": "[1] gives the year and [2] the painter.", "sufficient": True, "operations": []})],
    ),
    "es": (
        "¿En qué año se inauguró el faro de Punta Lebre y quién pintó sus murales?",
        [{"index": 0, "name": "Índice de estantes", "kind": "búsqueda por palabras clave", "top_k": 8,
          "description": "nombres, números y palabras poco comunes exactos"},
         {"index": 1, "name": "Buscador de sentido", "kind": "búsqueda semántica", "top_k": 6,
          "description": "el sentido, también dicho con otras palabras"}],
        [([], [], True,
          {"reason": "Dos partes: el año de inauguración del faro y quién pintó sus murales.", "sufficient": False,
           "operations": [{"child": 0, "query": "inauguración del faro de Punta Lebre"},
                          {"child": 1, "query": "quién pintó los murales del faro"}]}),
         (["El faro de Punta Lebre se encendió por primera vez en 1912, sobre una roca de granito.",
           "La carretera al cabo se asfaltó décadas después."],
          [(0, 8, "inauguración del faro de Punta Lebre"), (1, 6, "quién pintó los murales del faro")], False,
          {"reason": "[1] da el año de inauguración; aún falta quién pintó los murales.", "sufficient": False,
           "operations": [{"child": 0, "query": "murales Punta Lebre pintora"}]}),
         (["El faro de Punta Lebre se encendió por primera vez en 1912, sobre una roca de granito.",
           "Sus murales son obra de la pintora Aurora Vilas.", "La carretera al cabo se asfaltó décadas después."],
          [(0, 8, "inauguración del faro de Punta Lebre"), (1, 6, "quién pintó los murales del faro"),
           (0, 8, "murales Punta Lebre pintora")], False,
          {"reason": "[1] da el año y [2] la pintora.", "sufficient": True, "operations": []})],
    ),
    "zh-Hant": (
        "龜嶼燈塔是哪一年啟用的？它的壁畫是誰畫的？",
        [{"index": 0, "name": "書架索引", "kind": "關鍵字搜尋", "top_k": 8, "description": "確切的名稱、數字與罕見詞"},
         {"index": 1, "name": "語意尋找器", "kind": "語意搜尋", "top_k": 6, "description": "意思相近、換了說法的內容"}],
        [([], [], True,
          {"reason": "兩個部分：燈塔啟用的年份，以及壁畫的作者。", "sufficient": False,
           "operations": [{"child": 0, "query": "龜嶼燈塔 啟用"}, {"child": 1, "query": "燈塔壁畫是誰畫的"}]}),
         (["龜嶼燈塔於1912年首次點燈，建在花崗岩礁上。", "通往海岬的道路數十年後才鋪上柏油。"],
          [(0, 8, "龜嶼燈塔 啟用"), (1, 6, "燈塔壁畫是誰畫的")], False,
          {"reason": "[1] 給出啟用年份；還缺壁畫的作者。", "sufficient": False,
           "operations": [{"child": 0, "query": "龜嶼 壁畫 畫家"}]}),
         (["龜嶼燈塔於1912年首次點燈，建在花崗岩礁上。", "燈塔的壁畫出自畫家林秋月之手。", "通往海岬的道路數十年後才鋪上柏油。"],
          [(0, 8, "龜嶼燈塔 啟用"), (1, 6, "燈塔壁畫是誰畫的"), (0, 8, "龜嶼 壁畫 畫家")], False,
          {"reason": "[1] 給出年份，[2] 給出畫家。", "sufficient": True, "operations": []})],
    ),
    "zh-Hans": (
        "龟屿灯塔是哪一年启用的？它的壁画是谁画的？",
        [{"index": 0, "name": "书架索引", "kind": "关键字搜索", "top_k": 8, "description": "确切的名称、数字与罕见词"},
         {"index": 1, "name": "语义寻找器", "kind": "语义搜索", "top_k": 6, "description": "意思相近、换了说法的内容"}],
        [([], [], True,
          {"reason": "两个部分：灯塔启用的年份，以及壁画的作者。", "sufficient": False,
           "operations": [{"child": 0, "query": "龟屿灯塔 启用"}, {"child": 1, "query": "灯塔壁画是谁画的"}]}),
         (["龟屿灯塔于1912年首次点灯，建在花岗岩礁上。", "通往海岬的道路数十年后才铺上柏油。"],
          [(0, 8, "龟屿灯塔 启用"), (1, 6, "灯塔壁画是谁画的")], False,
          {"reason": "[1] 给出启用年份；还缺壁画的作者。", "sufficient": False,
           "operations": [{"child": 0, "query": "龟屿 壁画 画家"}]}),
         (["龟屿灯塔于1912年首次点灯，建在花岗岩礁上。", "灯塔的壁画出自画家林秋月之手。", "通往海岬的道路数十年后才铺上柏油。"],
          [(0, 8, "龟屿灯塔 启用"), (1, 6, "灯塔壁画是谁画的"), (0, 8, "龟屿 壁画 画家")], False,
          {"reason": "[1] 给出年份，[2] 给出画家。", "sufficient": True, "operations": []})],
    ),
}


@register
class AgenticEnsemblePrompt(ConfigObject["AgenticEnsemblePrompt.Params"]):
    """Instructions plus the rendered situation (question, catalog, pool, round)."""

    KIND: ClassVar[str] = "prompt"
    CATEGORY = "prompts"
    ICON = "message-square-text"
    DISPLAY_NAME = ml("Agentic planning prompt", "Prompt de planificación agéntica", "代理規劃提示詞")
    SHORT_NAME = ml("Planning prompt", "Prompt de planificación", "規劃提示詞")
    DESCRIPTION = ml(
        "What the agentic ensemble tells its LLM: how to choose retrievers and when the pool is enough.",
        "Lo que el conjunto agéntico le indica a su LLM: cómo elegir recuperadores y cuándo basta el conjunto de fragmentos.",
        "代理集成告訴其 LLM 的內容：如何選擇檢索器，以及何時候選集已足夠。",
    )
    REPRESENTATION = ml(
        "Planning prompt · {pool_preview_characters} chars per chunk",
        "Prompt de planificación · {pool_preview_characters} caracteres por fragmento",
        "規劃提示詞 · 每個區塊 {pool_preview_characters} 字元",
    )

    class Params(BaseParams):
        instructions: str = param(
            DEFAULT_INSTRUCTIONS, min_length=20, max_length=20_000,
            title=ml("Instructions", "Instrucciones", "指示"),
            description=ml(
                "The system message. The question, the catalog of retrievers and the pool are added after it.",
                "El mensaje de sistema. La pregunta, el catálogo de recuperadores y el conjunto se añaden después.",
                "系統訊息。問題、檢索器目錄與候選集會接在其後。",
            ),
        )
        pool_preview_characters: int = param(
            200, ge=40, le=5000,
            title=ml("Characters per pooled chunk", "Caracteres por fragmento del conjunto", "每個候選區塊的字元數"),
            description=ml(
                "How much of each pooled chunk the LLM reads when judging: a longer chunk shows the sentences "
                "around the one the question is about.",
                "Cuánto de cada fragmento del conjunto lee el LLM al evaluar: de un fragmento más largo se muestran "
                "las oraciones en torno a la que trata de la pregunta.",
                "LLM 評估時讀取每個候選區塊的長度：較長的區塊只顯示與問題最相關的句子及其前後文。",
            ),
        )
        pool_preview_passages: int = param(
            3, ge=1, le=500,
            title=ml("Pooled chunks shown when judging", "Fragmentos del conjunto mostrados al evaluar",
                     "評估時顯示的候選區塊數"),
            description=ml(
                "How many of the pool's best chunks one judging prompt shows; the rest are only counted. The "
                "instructions tell the LLM that the answer is written from the first three.",
                "Cuántos de los mejores fragmentos del conjunto muestra una evaluación; el resto solo se cuenta. "
                "Las instrucciones le dicen al LLM que la respuesta se escribe a partir de los tres primeros.",
                "單次評估提示顯示候選集中最佳的幾個區塊；其餘僅計數。指示會告訴 LLM 回答是根據前三個區塊寫成的。",
            ),
        )
        pool_preview_tokens: int = param(
            400, ge=50, le=20_000,
            title=ml("Pool shown when judging (tokens)", "Conjunto mostrado al evaluar (tokens)",
                     "評估時顯示的候選集（token）"),
            description=ml(
                "The most tokens of pooled chunks one judging prompt shows, best chunks first; the rest are "
                "only counted. A small local model reads a long prompt slowly.",
                "El máximo de tokens de fragmentos del conjunto que muestra una evaluación, los mejores primero; "
                "el resto solo se cuenta. Un modelo local pequeño lee despacio una instrucción larga.",
                "單次評估提示最多顯示的候選區塊 token 數，最佳區塊優先；其餘僅計數。小型本機模型讀長提示很慢。",
            ),
        )

    def render(
        self,
        *,
        query: str,
        catalog: Sequence[dict[str, Any]],
        pool: Sequence[tuple[int, str]],
        consulted: Sequence[tuple[int, int, str | None]],
        round_number: int,
        max_rounds: int,
        planning: bool,
        pool_capacity: int | None = None,
        language: str = "en",
        count_tokens: Callable[[str], int] | None = None,
    ) -> list[dict[str, str]]:
        """The messages of one evaluation.

        Parameters
        ----------
        query : str
            The user's question.
        catalog : sequence of dict
            One row per child: ``index``, ``name``, ``kind``, ``top_k`` (its own) and
            ``description`` (what it is good at); ``representation`` when ``kind`` is missing.
        pool : sequence of (chunk id, text)
            The pool, best first. Passages are numbered from 1 in that order; each shows at most
            ``pool_preview_characters`` (of a longer passage, the sentences around the one sharing
            the most words with ``query``, marked "…" where cut); at most ``pool_preview_passages``
            of them show, together within ``pool_preview_tokens`` (counted by
            ``count_tokens``, the planning model's own count), so a small model's prompt stays
            small; the rest are counted, not shown.
        consulted : sequence of (child, top_k, query)
            The searches already made; query None is the question itself.
        language : str
            The question's language (``en``, ``es``, ``zh-Hant``, ``zh-Hans``): the message asks
            for the reason in it.
        """
        example_question, example_catalog, steps = EXAMPLES.get(language, EXAMPLES["en"])
        examples: list[dict[str, str]] = []
        for number, (example_pool, searched, example_planning, answer) in enumerate(steps):
            examples.append({"role": "user", "content": self._situation(
                query=example_question, catalog=example_catalog, pool=[(0, text) for text in example_pool],
                consulted=searched, round_number=number, max_rounds=3, planning=example_planning,
                pool_capacity=10, language=language, count_tokens=None)})
            examples.append({"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)})
        situation = self._situation(query=query, catalog=catalog, pool=pool, consulted=consulted,
                                    round_number=round_number, max_rounds=max_rounds, planning=planning,
                                    pool_capacity=pool_capacity, language=language, count_tokens=count_tokens)
        return [{"role": "system", "content": self.params.instructions}, *examples,
                {"role": "user", "content": situation}]

    def _situation(self, *, query: str, catalog: Sequence[dict[str, Any]], pool: Sequence[tuple[int, str]],
                   consulted: Sequence[tuple[int, int, str | None]], round_number: int, max_rounds: int,
                   planning: bool, pool_capacity: int | None, language: str,
                   count_tokens: Callable[[str], int] | None) -> str:
        language_name = LANGUAGE_NAMES.get(language, "English")
        catalog_text = "\n".join(
            f"{row['index']}. {row['name']} ({row.get('kind') or row['representation']}), "
            f"own top_k {row['top_k']}" + (f". Good at: {row['description']}" if row.get("description") else "")
            for row in catalog
        )
        searched = "\n".join(
            f"- child {child}, top_k {top_k}, query: " + (json.dumps(text, ensure_ascii=False) if text else
                                                         "(the whole question)")
            for child, top_k, text in consulted
        ) or "(nothing yet)"
        capacity = f" of at most {pool_capacity}" if pool_capacity else ""
        pool_text = self._pool_text(pool, query, count_tokens) if pool else "(empty)"
        task = (
            "Plan the first searches: say which parts the question has and choose at least one operation."
            if planning else
            f"Round {round_number} of at most {max_rounds} is done. Judge the pool: which part of the question "
            "does each useful passage answer, and what is still missing? If a part is missing, search for that "
            "part (a query naming it) with a child or query not used for it yet; otherwise answer sufficient."
        )
        # The catalog first: the same for every question a tree is asked, so the local model's
        # prompt cache holds it with the instructions and reads only from the question on.
        return (f"Catalog:\n{catalog_text}\n\nQuestion: {query}\n\nAlready searched:\n{searched}\n\n"
                f"Pool ({len(pool)} passages{capacity}):\n{pool_text}\n\n{task}\n"
                f"Write the reason in {language_name}.")

    def _pool_text(self, pool: Sequence[tuple[int, str]], query: str,
                   count_tokens: Callable[[str], int] | None) -> str:
        limit = self.params.pool_preview_characters
        budget = self.params.pool_preview_tokens
        most = self.params.pool_preview_passages
        count = count_tokens or estimate_tokens
        lines: list[str] = []
        spent = 0
        for number, (_, text) in enumerate(pool, start=1):
            flat = " ".join(text.split())
            # A long passage shows the sentences around the one the question is about, as the
            # answer model reads it: its first characters often are not what answers a part.
            shown = flat if len(flat) <= limit else focus(flat, query, limit, clip=True, count=len)
            line = (f"[{number}] " + ("…" if not flat.startswith(shown) else "") + shown
                    + ("…" if not flat.endswith(shown) else ""))
            cost = count(line)
            if lines and (spent + cost > budget or len(lines) == most):
                lines.append(f"({len(pool) - len(lines)} more passages not shown)")
                break
            lines.append(line)
            spent += cost
        return "\n".join(lines)
