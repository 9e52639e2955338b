"""Ready-made retriever trees a user starts from, offered by the catalog."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from .core import MultilingualString, ml
from .core.multilingual import LANGUAGES
from .core.params import ref
from .retrievers.cross_encoder.retriever import DEFAULT_MODEL as DEFAULT_CROSS_ENCODER


@dataclass(frozen=True)
class Preset:
    """A named retriever tree. ``default`` marks the one new pipelines start from."""

    name: str
    display_name: MultilingualString
    description: MultilingualString
    icon: str
    tree: dict[str, Any]
    default: bool = False

    def config(self) -> dict[str, Any]:
        """The tree, with an installed cross-encoder in place of the default one when this
        machine has that one and not the default."""
        return with_installed_cross_encoder(copy.deepcopy(self.tree))


CROSS_ENCODER_COMPONENTS = ("SentenceTransformerCrossEncoderRetriever", "CrossEncoderReranker")


def with_installed_cross_encoder(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` with every cross-encoder left at the default model (which no package ships)
    pointed at the first installed cross-encoder the current viewer may use
    (``ModelStore.visible``), when the default has no local copy and such a cross-encoder is
    installed; changed in place and returned."""
    nodes = [node for node in _nodes(tree) if node.get("component") in CROSS_ENCODER_COMPONENTS
             and node.setdefault("params", {}).get("model_name") in (None, DEFAULT_CROSS_ENCODER)]
    if not nodes:
        return tree
    from .models_manager import CROSS_ENCODER, store
    from .retrievers.cross_encoder.retriever import cross_encoder_problem

    if cross_encoder_problem(DEFAULT_CROSS_ENCODER) is None:
        return tree
    installed = store().visible(CROSS_ENCODER)
    if installed:
        for node in nodes:
            node["params"]["model_name"] = installed[0].name
    return tree


def _nodes(value: Any) -> list[dict[str, Any]]:
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "component" in item:
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


HYBRID_CHILD_DEPTH = 100
"""How many results each child of the Hybrid preset gives the fusion: min–max normalisation
needs the tail of a list to place its head (measured in ``bench/quality.md``)."""


_RETRIEVER_NOUNS = {
    "BM25Retriever": ml("BM25", "BM25", "BM25"),
    "DenseEmbeddingRetriever": ml("dense retrieval", "recuperación densa", "稠密檢索"),
}

_FUSION_SENTENCES = {
    "rrf": ml("{children}, their rankings merged by reciprocal rank fusion",
              "{children}, con sus clasificaciones combinadas por fusión de rangos recíprocos",
              "結合 {children}，以倒數排名融合合併其排名"),
    "weighted": ml("{children}, their scores normalised and added",
                   "{children}, con sus puntuaciones normalizadas y sumadas",
                   "結合 {children}，將其分數正規化後相加"),
    "weighted-unequal": ml("{children}, their scores normalised, weighted {weights} and added",
                           "{children}, con sus puntuaciones normalizadas, ponderadas {weights} y sumadas",
                           "結合 {children}，將其分數正規化後依權重 {weights} 相加"),
}


def _joined(items: list[str], language: str) -> str:
    if len(items) < 2:
        return "".join(items)
    if language == "zh-Hant":
        # Chinese sets Latin words off by a space, and nothing else.
        return _CJK_LATIN.sub(" ", "、".join(items[:-1]) + "與" + items[-1])
    return ", ".join(items[:-1]) + {"en": " and ", "es": " y "}[language] + items[-1]


_CJK_LATIN = re.compile(r"(?<=[A-Za-z0-9])(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])(?=[A-Za-z0-9])")


def concat(*parts: MultilingualString | str) -> MultilingualString:
    """Texts put end to end in each language (a plain string is the same in all)."""
    return MultilingualString.from_dict({
        language: "".join(part if isinstance(part, str) else part.get(language) for part in parts)
        for language in LANGUAGES
    })


def fusion_sentence(tree: dict[str, Any]) -> MultilingualString:
    """What the first ``EnsembleRetriever`` in ``tree`` does, read off its settings (the retrievers
    it fuses, the method, unequal weights), so a description cannot promise another fusion than
    the one configured. Raises ``ValueError`` for a tree without one."""
    ensemble = next((node for node in _nodes(tree) if node.get("component") == "EnsembleRetriever"), None)
    if ensemble is None:
        raise ValueError("the tree has no EnsembleRetriever")
    params = ensemble.get("params", {})
    # Unset params are the component's defaults (a stored tree is normalised; a preset may be not).
    from .retrievers.composite.ensemble import EnsembleRetriever

    defaults = EnsembleRetriever.Params()
    fusion = params.get("fusion", defaults.fusion)
    children = params.get("children") or [child.model_dump() for child in defaults.children]
    weights = params.get("weights")
    key = "weighted-unequal" if fusion == "weighted" and weights and len(set(weights)) > 1 else fusion
    texts = {}
    for language in LANGUAGES:
        nouns = [(_RETRIEVER_NOUNS.get(child["component"]) or ml(child["component"])).get(language)
                 for child in children]
        texts[language] = _FUSION_SENTENCES[key].get(language).format(
            children=_joined(nouns, language), weights=" / ".join(f"{weight:g}" for weight in weights or ()))
    return MultilingualString.from_dict(texts)


def _hybrid(top_k: int = 10) -> dict[str, Any]:
    # The BM25 child stems in the knowledge base's language: the dense child already meets other
    # word forms, and a stemmed keyword list adds what it misses (measured in ``bench/quality.md``).
    # The Keyword preset keeps exact words, as rank-bm25 counts them.
    return ref("EnsembleRetriever", fusion="weighted", top_k=top_k,
               children=[ref("BM25Retriever", top_k=HYBRID_CHILD_DEPTH,
                             vectorizer=ref("BagOfWordsConverter", stemmer="auto")),
                         ref("DenseEmbeddingRetriever", top_k=HYBRID_CHILD_DEPTH)])


PRESETS: tuple[Preset, ...] = (
    Preset(
        "keyword",
        ml("Keyword", "Palabras clave", "關鍵字"),
        ml("BM25 alone: exact words, names, codes and numbers.",
           "Solo BM25: palabras exactas, nombres, códigos y cifras.",
           "僅使用 BM25：精確的詞語、名稱、代碼與數字。"),
        "text-search",
        ref("BM25Retriever", top_k=10),
    ),
    Preset(
        "semantic",
        ml("Semantic", "Semántico", "語意"),
        ml("Dense embeddings alone: meaning, paraphrases, other wordings.",
           "Solo embeddings densos: significado, paráfrasis, otras formulaciones.",
           "僅使用稠密嵌入：語意、改寫與不同說法。"),
        "sparkles",
        ref("DenseEmbeddingRetriever", top_k=10),
    ),
    Preset(
        "hybrid",
        ml("Hybrid", "Híbrido", "混合"),
        concat(fusion_sentence(_hybrid()), ml(": the robust default.", ": la opción robusta por defecto.",
                                              "：穩健的預設選擇。")),
        "merge",
        _hybrid(),
        default=True,
    ),
    Preset(
        "hybrid-llm-rerank",
        ml("Hybrid + LLM re-rank", "Híbrido + reordenación con LLM", "混合 + LLM 重新排序"),
        ml("Hybrid candidates re-ordered by the local LLM; slower, often more precise.",
           "Candidatos híbridos reordenados por el LLM local; más lento, a menudo más preciso.",
           "由本機 LLM 重新排序混合檢索的候選；較慢，但通常更精確。"),
        "list-ordered",
        ref("LLMRerankRetriever", top_k=5, children=[_hybrid(top_k=10)]),
    ),
    Preset(
        "hybrid-cross-encoder",
        ml("Hybrid + cross-encoder", "Híbrido + cross-encoder", "混合 + 交叉編碼器"),
        ml("Hybrid candidates re-scored by a cross-encoder model (install one on the Models page).",
           "Candidatos híbridos puntuados de nuevo por un modelo cross-encoder (instale uno en la página Modelos).",
           "以交叉編碼器模型重新評分混合檢索的候選（請在模型頁面安裝一個）。"),
        "list-ordered",
        ref("SentenceTransformerCrossEncoderRetriever", top_k=5, children=[_hybrid(top_k=20)]),
    ),
    Preset(
        "agentic",
        ml("Agentic", "Agéntico", "代理式"),
        ml("The LLM plans which retrievers to consult, round by round, until the chunks answer the question.",
           "El LLM planifica a qué recuperadores consultar, ronda a ronda, hasta que los fragmentos responden la pregunta.",
           "由 LLM 逐輪規劃要詢問哪些檢索器，直到區塊足以回答問題。"),
        "brain-circuit",
        # The Hybrid tree first (the catalog calls it a fusion, good at both kinds of match), then
        # keyword and dense alone, so a judgement can send a missing part to another kind of
        # search. Round 1 is read from the question's clauses, not planned: a question that asks
        # one thing is searched whole by the Hybrid tree, and each part of one that asks several
        # is searched on its own. The 0.5B's plans searched rewordings and fragments that ranked
        # below both (bench/README.md, agentic.py).
        ref("AgenticEnsembleRetriever", children=[_hybrid(), ref("BM25Retriever", top_k=10),
                                                  ref("DenseEmbeddingRetriever", top_k=10)],
            search_one_part_questions_whole=True, search_question_parts_separately=True),
    ),
)


def preset(name: str) -> Preset:
    for candidate in PRESETS:
        if candidate.name == name:
            return candidate
    raise KeyError(f"no preset named {name!r}; presets: {', '.join(p.name for p in PRESETS)}")


def default_retriever() -> dict[str, Any]:
    """The retriever tree of a new pipeline: the Hybrid preset."""
    return next(candidate for candidate in PRESETS if candidate.default).config()
