"""``AgenticEnsembleRetriever``: an LLM chooses which children to consult, round by round."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag.core import ComponentRef, children_param, component_param, ml, param, ref, register
from rag.documents.models import Chunk
from rag.llms import (
    LLM,
    LocalLLM,  # noqa: F401  (registers the default llm_model)
)
from rag.prompts import AgenticEnsemblePrompt
from rag.tracing import TraceNode, current_recorder

from ..base import CompositeRetriever, Hit, RetrieverParams
from ..dense import DenseEmbeddingRetriever  # noqa: F401  (registers a default child)
from ..sparse import BM25Retriever  # noqa: F401  (registers a default child)
from .children import search_children
from .ensemble import reciprocal_rank_fusion

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sufficient": {"type": "boolean"},
        "reason": {"type": "string"},
        "operations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"child": {"type": "integer"}, "top_k": {"type": "integer"}},
                "required": ["child", "top_k"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["sufficient", "reason", "operations"],
    "additionalProperties": False,
}


@dataclass
class Evaluation:
    """One planning or judging call after validation: the verdict, its usable operations, what
    was dropped and why, and every attempt made."""

    verdict: dict[str, Any] | None
    operations: list[dict[str, int]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any] | None:
        if self.verdict is None:
            return None
        return {"sufficient": bool(self.verdict["sufficient"]), "reason": self.verdict["reason"]}


def split_operations(
    operations: Sequence[dict[str, Any]], *, children: int, consulted: set[tuple[int, int]]
) -> tuple[list[dict[str, int]], list[dict[str, Any]]]:
    """Valid operations (in order, without repeats) and the dropped ones with their reason: ``why``
    in words (fed back to the model) and a ``code`` (``unknown_child``, ``top_k_below_1``,
    ``repeated``) for the trace view to say it in the reader's language."""
    valid: list[dict[str, int]] = []
    dropped: list[dict[str, Any]] = []
    chosen: set[tuple[int, int]] = set()
    for operation in operations:
        child, top_k = operation.get("child"), operation.get("top_k")
        if not isinstance(child, int) or not 0 <= child < children:
            dropped.append({**operation, "code": "unknown_child",
                            "why": f"no child {child} in the catalog (0 to {children - 1})"})
        elif not isinstance(top_k, int) or top_k < 1:
            dropped.append({**operation, "code": "top_k_below_1", "why": f"top_k {top_k} is below 1"})
        elif (child, top_k) in consulted or (child, top_k) in chosen:
            dropped.append({**operation, "code": "repeated",
                            "why": f"child {child} was already consulted with top_k {top_k}"})
        else:
            chosen.add((child, top_k))
            valid.append({"child": child, "top_k": top_k})
    return valid, dropped


@register
class AgenticEnsembleRetriever(CompositeRetriever["AgenticEnsembleRetriever.Params"]):
    """An LLM plans which children to consult and at what ``top_k``, then judges after each
    round whether the pool answers the question (DESIGN §5).

    1. Plan: one evaluation over the empty pool must choose at least one valid operation.
    2. Round r: consult the chosen children. The pool is the reciprocal rank fusion of every
       child's deepest ranking so far (all rounds), so a chunk found by two children ranks
       above one found once; it holds at most ``max_chunks``.
    3. Judge after every round but the last: ``sufficient`` stops; otherwise its operations
       choose the next round.
    4. Invalid operations (unknown child, top_k < 1, a repeated (child, top_k)) are dropped; an
       unparseable verdict, or an insufficient one with nothing valid left, is asked again with
       the problems, ``function_call_max_trials`` attempts in all. A plan that still fails
       consults every child at its own top_k; a judgement that still fails stops with the pool.
       Both are recorded in the trace.
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
        return [
            {"index": index, "name": child.DISPLAY_NAME.get(language),
             "representation": child.render_representation(language), "top_k": child.default_top_k,
             "description": child.DESCRIPTION.get(language)}
            for index, child in enumerate(self.children)
        ]

    def _evaluate(self, query: str, pool: list[Hit], consulted: set[tuple[int, int]], *, round_number: int,
                  planning: bool) -> Evaluation:
        messages = self.prompt.render(
            query=query, catalog=self.catalog(), pool=[(hit.chunk.id, hit.chunk.text) for hit in pool],
            consulted=sorted(consulted), round_number=round_number, max_rounds=self.params.max_iters,
            planning=planning, pool_capacity=self.params.max_chunks,
        )
        latest: dict[str, Any] = {}

        def check(verdict: dict[str, Any]) -> list[str]:
            valid, dropped = split_operations(verdict["operations"], children=len(self.children),
                                              consulted=consulted)
            latest.update(valid=valid, dropped=dropped)
            if valid or (not planning and verdict["sufficient"]):
                return []
            reasons = [operation["why"] for operation in dropped] or ["no operation was given"]
            need = "the plan must choose at least one valid operation" if planning else (
                "an insufficient verdict must choose at least one valid operation")
            return [f"{need}: " + "; ".join(reasons)]

        verdict, attempts = self.llm_model.call_function_with_retries(
            messages, VERDICT_SCHEMA, check=check, max_trials=self.params.function_call_max_trials,
            name="retrieval_verdict", description="whether the pool suffices and which retrievers to consult next",
        )
        return Evaluation(
            verdict=verdict,
            operations=latest.get("valid", []) if verdict is not None else [],
            dropped=latest.get("dropped", []) if verdict is not None else [],
            attempts=[attempt.to_dict() for attempt in attempts],
        )

    @classmethod
    def depth_limit(cls, params: Mapping[str, Any]) -> tuple[int, str] | None:
        return int(params["max_chunks"]), f"{cls.NAME} keeps at most max_chunks={params['max_chunks']} chunks, chosen by its LLM"

    @property
    def score_scale(self) -> str:
        return "mixed"

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        recorder = current_recorder()
        # Each child's deepest ranking so far: asking a child again for more results extends its
        # ranking rather than counting its top chunks twice.
        rankings: dict[int, list[Hit]] = {}
        pool: list[Hit] = []
        consulted: set[tuple[int, int]] = set()

        plan = self._evaluate(query, [], consulted, round_number=0, planning=True)
        plan_record: dict[str, Any] = {"reason": plan.verdict["reason"] if plan.verdict else None,
                                       "attempts": len(plan.attempts), "dropped": plan.dropped,
                                       "fallback": None}
        operations = plan.operations
        if plan.verdict is None:
            operations = [{"child": index, "top_k": child.default_top_k} for index, child in enumerate(self.children)]
            plan_record["fallback"] = (f"planning failed after {len(plan.attempts)} attempt(s); "
                                       "consulting every child at its own top_k")
        node.details["plan"] = {**plan_record, "attempt_log": plan.attempts}

        for round_number in range(1, self.params.max_iters + 1):
            answers = search_children([self.children[op["child"]] for op in operations], query,
                                      [op["top_k"] for op in operations])
            before = {hit.chunk.id for hit in pool}
            for operation, (hits, child_node) in zip(operations, answers, strict=True):
                consulted.add((operation["child"], operation["top_k"]))
                node.children.append(child_node)
                if hits and len(hits) > len(rankings.get(operation["child"], ())):
                    rankings[operation["child"]] = list(hits)
            pool = self._fused_pool(rankings)
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
                judgement = self._evaluate(query, pool, consulted, round_number=round_number, planning=False)
                summary.update(verdict=judgement.summary(), attempts=len(judgement.attempts),
                               dropped=judgement.dropped, attempt_log=judgement.attempts)
                if judgement.verdict is None:
                    summary["fallback"] = (f"judging failed after {len(judgement.attempts)} attempt(s); "
                                           "stopping with the pool")
                    stop = True
                elif judgement.verdict["sufficient"]:
                    stop = True
                else:
                    operations = judgement.operations
            node.rounds.append(summary)
            if recorder is not None:
                recorder.round_completed(node, summary)
            if stop:
                break
        return pool

    def _fused_pool(self, rankings: Mapping[int, list[Hit]]) -> list[Hit]:
        """The best ``max_chunks`` of the children's rankings fused by RRF (k 60, as the
        EnsembleRetriever), children in catalog order; each hit's ``sources`` name catalog indices."""
        children = sorted(rankings)
        fused = reciprocal_rank_fusion([rankings[child] for child in children])
        return [Hit(hit.chunk, hit.score, tuple({**source, "child": children[source["child"]]}
                                                for source in hit.sources))
                for hit in fused[: self.params.max_chunks]]


def _json_value(value: Any) -> Any:
    """``value`` when it is JSON, its ``repr`` otherwise (the trace is stored as JSON)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value
