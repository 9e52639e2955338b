"""``AgenticEnsembleRetriever``: an LLM chooses which children to consult, round by round, and with what query."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rag.core import ComponentRef, children_param, component_param, ml, param, ref, register
from rag.documents.models import Chunk
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm_model)
)
from rag.prompts import AgenticEnsemblePrompt
from rag.tracing import TraceNode, current_recorder

from ...base import CompositeRetriever, Hit, RetrieverParams
from ...dense import DenseEmbeddingRetriever  # noqa: F401  (registers a default child)
from ...sparse import BM25Retriever  # noqa: F401  (registers a default child)
from ..children import search_children
from .catalog import catalog_row, question_language
from .parts import question_parts
from .pool import RankingKey, fuse_pool
from .verdicts import (
    VERDICT_SCHEMA,
    Evaluation,
    OperationKey,
    operation_key,
    question_matcher,
    split_operations,
    verdict_problems,
)


@register
class AgenticEnsembleRetriever(CompositeRetriever["AgenticEnsembleRetriever.Params"]):
    """An LLM plans which children to consult, at what ``top_k`` and with what query, then judges
    after each round whether the pool answers the question (DESIGN §5).

    1. Plan: one evaluation over the empty pool must choose at least one valid operation
       ``{"child", "top_k"?, "query"?}``. A missing ``top_k`` is the child's own; a missing
       ``query`` is the user's question, and a query searches one part of it instead. With
       ``search_one_part_questions_whole``, a question that asks one thing
       (``parts.asks_several_things``) is instead searched whole by the first child at its own
       ``top_k``, with no call; with ``search_question_parts_separately``, a question that asks
       several things has each part (``parts.question_parts``, in the question's own words)
       searched by the first child at its own ``top_k``, with no call. The plan's ``decided_by``
       says "rule" when either rule made it, else "model".
    2. Round r: consult the chosen children, each with its operation's query. The pool fuses
       every ranking so far (``pool.fuse_pool``: children agreeing on one search text rank
       higher, and the search texts take turns, so every part of the question reaches the top);
       it holds at most ``max_chunks``.
    3. Judge after every round but the last, over the pool's passages (within the prompt's
       budget): ``sufficient`` with no operation stops; otherwise its operations choose the
       next round.
    4. Invalid operations (unknown child, top_k < 1, a repeated (child, top_k, query), a query
       sharing no word with the question or the pool) are dropped. An unparseable verdict, a
       plan with nothing valid, or a judgement whose operations are all invalid (repeats
       included, sufficient or not) is asked again with the problems,
       ``function_call_max_trials`` attempts in all. A plan that still fails consults every
       child at its own top_k; a judgement that still fails stops with the pool. Both are
       recorded in the trace.

    The reasons are asked for in the question's language. While it runs, the recorder hears
    the plan (``plan_decided``), each judgement starting (``judging_started``) and each round
    (``round_completed``); the trace node keeps the same: ``details["plan"]`` and ``rounds``.
    """

    CATEGORY = "agentic"
    ICON = "brain-circuit"
    DISPLAY_NAME = ml("Agentic ensemble", "Conjunto agéntico", "代理式集成")
    SHORT_NAME = ml("Agentic", "Agéntico", "代理式")
    DESCRIPTION = ml(
        "An LLM decides, round by round, which retrievers to ask and for how many results, and stops "
        "when the gathered chunks answer the question.",
        "Un LLM decide, ronda a ronda, a qué recuperadores preguntar y cuántos resultados pedir, y se "
        "detiene cuando los fragmentos reunidos responden la pregunta.",
        "由 LLM 逐輪決定要詢問哪些檢索器、各取多少結果，並在蒐集到的區塊足以回答問題時停止。",
    )
    REPRESENTATION = ml(
        "Agentic · {children} · rounds ≤ {max_iters} · pool {max_chunks}",
        "Agéntico · {children} · rondas ≤ {max_iters} · conjunto {max_chunks}",
        "代理式 · {children} · 最多 {max_iters} 輪 · 候選集 {max_chunks}",
    )

    # Built from the slots of ``Params`` (``children`` as on every composite).
    prompt: AgenticEnsemblePrompt
    llm_model: LLM

    class Params(RetrieverParams):
        children: list[ComponentRef] = children_param(
            "retriever", min_children=1,
            default=[ref("DenseEmbeddingRetriever", top_k=10), ref("BM25Retriever", top_k=10)],
            title=ml("Retrievers the LLM may consult", "Recuperadores que el LLM puede consultar",
                     "LLM 可詢問的檢索器"),
            description=ml(
                "The catalog the LLM chooses from, by position.",
                "El catálogo entre el que elige el LLM, por posición.",
                "LLM 依位置從此目錄中選擇。",
            ),
        )
        max_chunks: int = param(
            10, ge=1, le=500,
            title=ml("Pool size", "Tamaño del conjunto", "候選集大小"),
            description=ml("The most chunks kept and returned.", "El máximo de fragmentos conservados y devueltos.",
                           "保留並傳回的區塊上限。"),
        )
        max_iters: int = param(
            3, ge=1, le=10,
            title=ml("Rounds", "Rondas", "輪數"),
            description=ml(
                "The most retrieval rounds; the LLM judges the pool after each round but the last.",
                "El máximo de rondas; el LLM evalúa el conjunto tras cada ronda salvo la última.",
                "檢索輪數上限；除最後一輪外，LLM 每輪結束後都會評估候選集。",
            ),
        )
        function_call_max_trials: int = param(
            3, ge=1, le=10,
            title=ml("Attempts per decision", "Intentos por decisión", "每次決策的嘗試次數"),
            description=ml(
                "How many times an unusable verdict is asked again before the fallback.",
                "Cuántas veces se repite una decisión inservible antes de recurrir a la alternativa.",
                "無法使用的判斷在採用備援方案前最多重新詢問幾次。",
            ),
        )
        search_one_part_questions_whole: bool = param(
            False,
            title=ml("Search one-part questions whole", "Buscar enteras las preguntas de una parte",
                     "單一部分的問題直接整句搜尋"),
            description=ml(
                "A question that asks one thing is searched whole by the first retriever, with no planning "
                "call, and the LLM judges what it found; a question that asks several things is planned (or, with "
                "\"Search each part of a question on its own\", searched part by part). "
                "A small model plans one-part questions worse than one search of them.",
                "Una pregunta que pide una sola cosa se busca entera con el primer recuperador, sin llamada de "
                "planificación, y el LLM evalúa lo encontrado; una pregunta que pide varias cosas se planifica "
                "(o, con \"Buscar por separado cada parte de la pregunta\", se busca parte por parte). Un "
                "modelo pequeño planifica peor una pregunta de una parte que una búsqueda de ella.",
                "只問一件事的問題直接由第一個檢索器整句搜尋，不呼叫規劃，再由 LLM 評估結果；問多件事的問題才會規劃（或在開啟「問題的每個部分分別搜尋」時逐部分搜尋）。"
                "小型模型為單一部分的問題所做的規劃，不如直接搜尋一次。",
            ),
        )
        search_question_parts_separately: bool = param(
            False,
            title=ml("Search each part of a question on its own", "Buscar por separado cada parte de la pregunta",
                     "問題的每個部分分別搜尋"),
            description=ml(
                "A question that asks several things, read from its clauses (\"When did it open, and who painted "
                "it?\"), is searched part by part by the first retriever, each part in the question's own words, "
                "with no planning call; the LLM judges what they found and chooses any further searches. A small "
                "model's own plans search fragments of the parts and miss one part's passages more often.",
                "Una pregunta que pide varias cosas, según sus cláusulas (\"¿Cuándo se inauguró y quién lo "
                "pintó?\"), se busca parte por parte con el primer recuperador, cada parte con las palabras de la "
                "pregunta, sin llamada de planificación; el LLM evalúa lo encontrado y elige las búsquedas "
                "siguientes. Los planes de un modelo pequeño buscan fragmentos de las partes y pierden más a "
                "menudo los pasajes de una de ellas.",
                "依子句判斷問了多件事的問題（「它何時啟用，壁畫是誰畫的？」），由第一個檢索器逐部分搜尋，每個部分使用問題"
                "本身的文字，不呼叫規劃；再由 LLM 評估結果並決定後續搜尋。小型模型自行規劃時只搜尋部分的片段，較常漏掉"
                "某一部分的段落。",
            ),
        )
        prompt: ComponentRef = component_param(
            "prompt", default=ref("AgenticEnsemblePrompt"),
            title=ml("Prompt", "Prompt", "提示詞"),
            description=ml("What the LLM is told.", "Lo que se le indica al LLM.", "提供給 LLM 的指示。"),
        )
        llm_model: ComponentRef = component_param(
            "llm", default=ref("LocalLLM"),
            title=ml("Language model", "Modelo de lenguaje", "語言模型"),
            description=ml("The model that plans and judges.", "El modelo que planifica y evalúa.",
                           "負責規劃與評估的模型。"),
        )

    @property
    def default_top_k(self) -> int:
        return self.params.max_chunks

    def retrieve(self, query: str, top_k: int | None = None, **kwargs: Any) -> tuple[list[Chunk], dict[str, Any]]:
        """Retrieve by consulting LLM-chosen children across rounds.

        Parameters
        ----------
        query : str
            The search query string.
        top_k, **kwargs
            Unused; children choices and sizes come from the LLM verdicts, and ``max_chunks``
            alone bounds the pool. The trace node's ``details["ignored_arguments"]`` lists what
            was passed.

        Returns
        -------
        Tuple[List[Chunk], Dict[str, Any]]
            The final pool (at most ``max_chunks`` chunks) and this retriever's trace node, whose
            ``children`` holds every consulted child node and whose ``rounds`` holds one summary
            per retrieval round.
        """
        hits, node = self.search(query, top_k, **kwargs)
        return [hit.chunk for hit in hits], node.to_dict()

    def search(self, query: str, top_k: int | None = None, **kwargs: Any) -> tuple[list[Hit], TraceNode]:
        """``retrieve`` with scores and the live node; ``top_k`` and ``kwargs`` are unused."""
        given = {"top_k": top_k, **kwargs} if top_k is not None else dict(kwargs)
        details = {"ignored_arguments": {name: _json_value(value) for name, value in given.items()}} if given else None
        return self._traced_search(query, self.params.max_chunks, details)

    def catalog(self, language: str = "en") -> list[dict[str, Any]]:
        """The children as the LLM sees them, named in ``language``."""
        return [catalog_row(index, child, language) for index, child in enumerate(self.children)]

    def _evaluate(self, query: str, language: str, pool: list[Hit], consulted: list[OperationKey], *,
                  round_number: int, planning: bool) -> Evaluation:
        messages = self.prompt.render(
            query=query, catalog=self.catalog(language), pool=[(hit.chunk.id, hit.chunk.text) for hit in pool],
            consulted=consulted, round_number=round_number, max_rounds=self.params.max_iters,
            planning=planning, pool_capacity=self.params.max_chunks, language=language,
            count_tokens=self.llm_model.count_tokens,
        )
        own_top_k = [child.default_top_k for child in self.children]
        on_question = question_matcher(query, [hit.chunk.text for hit in pool], language)
        latest: dict[str, Any] = {}

        def check(verdict: dict[str, Any]) -> list[str]:
            valid, dropped = split_operations(verdict["operations"], own_top_k=own_top_k, consulted=consulted,
                                              question=query, on_question=on_question)
            latest.update(valid=valid, dropped=dropped)
            return verdict_problems(verdict, valid, dropped, planning=planning)

        verdict, attempts = self.llm_model.call_function_with_retries(
            messages, VERDICT_SCHEMA, check=check, max_trials=self.params.function_call_max_trials,
            name="retrieval_verdict",
            description="what the pool holds and lacks, whether it suffices, and which searches to make next",
        )
        return Evaluation(
            verdict=verdict,
            operations=latest.get("valid", []) if verdict is not None else [],
            dropped=latest.get("dropped", []) if verdict is not None else [],
            attempts=[attempt.to_dict() for attempt in attempts],
        )

    def _plan(self, query: str, language: str, consulted: list[OperationKey]) -> tuple[dict[str, Any], list[Any]]:
        """The LLM's plan for ``query`` (or the fallback: every child at its own top_k) as the trace
        records it, and its attempt log."""
        plan = self._evaluate(query, language, [], consulted, round_number=0, planning=True)
        operations = plan.operations
        fallback = None
        if plan.verdict is None:
            operations = [self._own_size(index, None) for index in range(len(self.children))]
            fallback = (f"planning failed after {len(plan.attempts)} attempt(s); "
                        "consulting every child at its own top_k")
        record = {"reason": plan.verdict["reason"] if plan.verdict else None,
                  "operations": self._named(operations, language), "attempts": len(plan.attempts),
                  "dropped": plan.dropped, "fallback": fallback, "decided_by": "model"}
        return record, plan.attempts

    def _rule_plan(self, parts: list[str], language: str) -> dict[str, Any]:
        """Round 1 read from the question's ``parts``, as the trace records a plan: the first child
        searches the whole question (one part) or each part (several) at its own top_k."""
        queries: list[str | None] = [None] if len(parts) == 1 else list(parts)
        operations = self._named([self._own_size(0, query) for query in queries], language)
        reasons = ONE_PART_REASON if len(parts) == 1 else PARTS_REASON
        reason = reasons.get(language, reasons["en"]).format(child=operations[0]["child_name"], count=len(parts))
        return {"reason": reason, "operations": operations, "attempts": 0, "dropped": [], "fallback": None,
                "decided_by": "rule"}

    def _own_size(self, child: int, query: str | None) -> dict[str, Any]:
        """An operation asking ``child`` for its own number of results."""
        return {"child": child, "top_k": self.children[child].default_top_k, "top_k_from": "child", "query": query}

    def _named(self, operations: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
        """``operations`` with each child's name in the question's language, for the trace and the live view."""
        catalog = self.catalog(language)
        return [{**operation, "child_name": catalog[operation["child"]]["name"]} for operation in operations]

    @classmethod
    def depth_limit(cls, params: Mapping[str, Any]) -> tuple[int, str] | None:
        return int(params["max_chunks"]), f"{cls.NAME} keeps at most max_chunks={params['max_chunks']} chunks, chosen by its LLM"

    @property
    def score_scale(self) -> str:
        return "mixed"

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        recorder = current_recorder()
        language = question_language(query)
        # Each (child, search text)'s deepest ranking so far: asking a child again for more results
        # extends its ranking rather than counting its top chunks twice.
        rankings: dict[RankingKey, list[Hit]] = {}
        pool: list[Hit] = []
        consulted: list[OperationKey] = []

        attempt_log: list[Any] = []
        parts = list(dict.fromkeys(question_parts(query, language)))
        if (self.params.search_one_part_questions_whole if len(parts) == 1
                else self.params.search_question_parts_separately):
            plan_record = self._rule_plan(parts, language)
        else:
            plan_record, attempt_log = self._plan(query, language, consulted)
        operations = plan_record["operations"]
        node.details["plan"] = {**plan_record, "language": language, "attempt_log": attempt_log}
        if recorder is not None:
            recorder.plan_decided(node, plan_record)

        for round_number in range(1, self.params.max_iters + 1):
            answers = search_children([self.children[op["child"]] for op in operations], query,
                                      [op["top_k"] for op in operations],
                                      queries=[op["query"] or query for op in operations])
            before = {hit.chunk.id for hit in pool}
            for operation, (hits, child_node) in zip(operations, answers, strict=True):
                key = operation_key(operation, query)
                consulted.append(key)
                node.children.append(child_node)
                ranking = (key[0], key[2])
                if hits and len(hits) > len(rankings.get(ranking, ())):
                    rankings[ranking] = list(hits)
            pool = fuse_pool(rankings, limit=self.params.max_chunks)
            summary: dict[str, Any] = {
                "round": round_number,
                "operations": operations,
                "added": [hit.chunk.id for hit in pool if hit.chunk.id not in before],
                "pool_size": len(pool),
                "verdict": None,
                "attempts": 0,
            }
            if round_number == 1:
                summary["plan"] = plan_record
            stop = round_number == self.params.max_iters
            if not stop:
                if recorder is not None:
                    recorder.judging_started(node, round_number)
                judgement = self._evaluate(query, language, pool, consulted, round_number=round_number,
                                           planning=False)
                summary.update(verdict=judgement.summary(), attempts=len(judgement.attempts),
                               dropped=judgement.dropped, attempt_log=judgement.attempts)
                if judgement.verdict is None:
                    summary["fallback"] = (f"judging failed after {len(judgement.attempts)} attempt(s); "
                                           "stopping with the pool")
                    stop = True
                elif judgement.verdict["sufficient"]:
                    stop = True
                else:
                    operations = self._named(judgement.operations, language)
                    summary["next_operations"] = operations
            node.rounds.append(summary)
            if recorder is not None:
                recorder.round_completed(node, summary)
            if stop:
                break
        return pool


ONE_PART_REASON = {
    "en": "The question asks one thing: {child} searches it whole.",
    "es": "La pregunta pide una sola cosa: {child} la busca entera.",
    "zh-Hant": "問題只問一件事：由{child}搜尋整個問題。",
    "zh-Hans": "问题只问一件事：由{child}搜索整个问题。",
}
"""The plan's reason when the question asks one thing, in the question's language."""

PARTS_REASON = {
    "en": "The question asks {count} things: {child} searches each on its own.",
    "es": "La pregunta pide {count} cosas: {child} busca cada una por separado.",
    "zh-Hant": "問題問了 {count} 件事：由{child}分別搜尋每一件。",
    "zh-Hans": "问题问了 {count} 件事：由{child}分别搜索每一件。",
}
"""The plan's reason when the question asks several things, each searched on its own."""


def _json_value(value: Any) -> Any:
    """``value`` when it is JSON, its ``repr`` otherwise (the trace is stored as JSON)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value
