"""The prompt of the agentic ensemble: the question, the children it may consult, the pool."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from rag.core import ConfigObject, ml, param, register
from rag.core import Params as BaseParams

DEFAULT_INSTRUCTIONS = """You plan the retrieval of passages that answer a question. You may consult \
the retrievers listed in the catalog, each as often as useful, asking each for as many results \
(top_k) as you think worthwhile. Keyword retrievers find exact words, names and numbers; dense \
retrievers find paraphrases; re-rankers are slower and precise.

Answer with a verdict: "sufficient" is true when the pool already holds what is needed to answer \
the question; "reason" says why in one sentence; "operations" lists the retrievers to consult next \
as {"child": <catalog index>, "top_k": <number of results>}. Never repeat a (child, top_k) pair that \
was already consulted. While the pool is empty or not sufficient, operations must not be empty.

The catalog lists the broadest retriever first: start with it, asking for as many results as the \
pool holds. Results from several retrievers are fused, so a passage that two retrievers find ranks \
above one that only one finds; when the pool lacks something the question needs, consult another \
retriever that is good at it.

Example: {"sufficient": false, "reason": "The pool is empty; start with the broadest retriever.", \
"operations": [{"child": 0, "top_k": 10}]}"""


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
            300, ge=40, le=5000,
            title=ml("Characters per pooled chunk", "Caracteres por fragmento del conjunto", "每個候選區塊的字元數"),
            description=ml(
                "How much of each pooled chunk the LLM reads when judging.",
                "Cuánto de cada fragmento del conjunto lee el LLM al evaluar.",
                "LLM 評估時讀取每個候選區塊的長度。",
            ),
        )

    def render(
        self,
        *,
        query: str,
        catalog: Sequence[dict[str, Any]],
        pool: Sequence[tuple[int, str]],
        consulted: Sequence[tuple[int, int]],
        round_number: int,
        max_rounds: int,
        planning: bool,
        pool_capacity: int | None = None,
    ) -> list[dict[str, str]]:
        """The messages of one evaluation. ``catalog`` rows: index, name, representation, top_k and
        optionally description (what the child is good at);
        ``pool``: (chunk id, text); ``consulted``: (child, top_k) pairs already asked."""
        limit = self.params.pool_preview_characters
        pool_text = "\n".join(f"- [{chunk_id}] {text[:limit]}" for chunk_id, text in pool) or "(empty)"
        catalog_text = "\n".join(
            f"{row['index']}. {row['name']} — {row['representation']} (default top_k {row['top_k']})"
            + (f"\n   Good at: {row['description']}" if row.get("description") else "")
            for row in catalog
        )
        capacity = f", holds at most {pool_capacity}" if pool_capacity else ""
        task = (
            "This is the planning step: the pool is empty. Choose at least one operation."
            if planning else
            f"Round {round_number} of at most {max_rounds} has finished. Judge the pool: is it sufficient? "
            "If not, choose the next operations."
        )
        return [
            {"role": "system", "content": self.params.instructions},
            {"role": "user", "content": (
                f"Question: {query}\n\nCatalog of retrievers:\n{catalog_text}\n\n"
                f"Already consulted (child, top_k): {json.dumps([list(pair) for pair in consulted])}\n\n"
                f"Pool ({len(pool)} chunks{capacity}):\n{pool_text}\n\n{task}"
            )},
        ]

