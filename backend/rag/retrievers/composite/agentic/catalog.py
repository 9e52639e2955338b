"""How the planning LLM sees its children: a kind and what each kind is good at, in the question's language."""

from __future__ import annotations

from typing import Any

from rag.core import MultilingualString, ml

from ...base import BaseRetriever

# By CATEGORY. A component's DESCRIPTION explains it to a person building a pipeline (how it
# works, its settings); the planner needs one line on which searches it wins.
KINDS: dict[str, tuple[MultilingualString, MultilingualString]] = {
    "sparse": (
        ml("keyword search", "búsqueda por palabras clave", "關鍵字搜尋"),
        ml("the exact words of the query: names, numbers, dates, rare terms",
           "las palabras exactas de la consulta: nombres, números, fechas, términos poco comunes",
           "查詢中的確切字詞：名稱、數字、日期、罕見詞"),
    ),
    "dense": (
        ml("semantic search", "búsqueda semántica", "語意搜尋"),
        ml("the meaning of the query, also when the passage says it in other words",
           "el sentido de la consulta, también cuando el fragmento lo dice con otras palabras",
           "查詢的意思，即使段落換了說法也找得到"),
    ),
    "fusion": (
        ml("hybrid search", "búsqueda híbrida", "混合搜尋"),
        ml("exact words and meaning together: the broadest single search",
           "palabras exactas y sentido a la vez: la búsqueda única más amplia",
           "同時比對確切字詞與語意：範圍最廣的單次搜尋"),
    ),
    "re-ranking": (
        ml("re-ranker", "reordenador", "重新排序器"),
        ml("putting the few best passages first; slower",
           "poner primero los pocos mejores fragmentos; más lento",
           "把最相關的少數段落排在最前面；較慢"),
    ),
    "agentic": (
        ml("agentic search", "búsqueda agéntica", "代理式搜尋"),
        ml("planning several searches of its own; slow",
           "planificar varias búsquedas propias; lento",
           "自行規劃多次搜尋；較慢"),
    ),
}

def question_language(question: str) -> str:
    """en, es, zh-Hant or zh-Hans, as the answering model detects it, so the plan's reasons
    and the answer are in the same language."""
    # Imported here: rag.strategies imports the retrievers, so a module-level import would be a cycle.
    from rag.strategies.answer_prompts import detect_language

    return detect_language(question)


def catalog_language(language: str) -> str:
    """The shipped language for component names: Simplified Chinese reads the Traditional names
    (closer to the question than English)."""
    return "zh-Hant" if language.startswith("zh") else language


def catalog_row(index: int, child: BaseRetriever, language: str) -> dict[str, Any]:
    """One child as the prompt lists it: index, name, kind, representation, own top_k, good at."""
    shipped = catalog_language(language)
    kind, good_at = KINDS.get(child.CATEGORY, (None, None))
    return {"index": index, "name": child.DISPLAY_NAME.get(shipped),
            "kind": kind.get(shipped) if kind else child.CATEGORY,
            "representation": child.render_representation(shipped), "top_k": child.default_top_k,
            "description": (good_at or child.DESCRIPTION).get(shipped)}
