"""Ready-made retriever trees a user starts from, offered by the catalog."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .core import MultilingualString, ml
from .core.params import ref


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
        return copy.deepcopy(self.tree)


def _hybrid(top_k: int = 10) -> dict[str, Any]:
    return ref("EnsembleRetriever", fusion="rrf", top_k=top_k,
               children=[ref("BM25Retriever", top_k=20), ref("DenseEmbeddingRetriever", top_k=20)])


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
        ml("BM25 and dense retrieval fused with reciprocal rank fusion: the robust default.",
           "BM25 y recuperación densa fusionados con reciprocal rank fusion: la opción robusta por defecto.",
           "以倒數排名融合（RRF）結合 BM25 與稠密檢索：穩健的預設選擇。"),
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
        ml("Hybrid candidates re-scored by a cross-encoder model (needs one installed locally).",
           "Candidatos híbridos puntuados de nuevo por un modelo cross-encoder (requiere uno instalado localmente).",
           "以交叉編碼器模型重新評分混合檢索的候選（需在本機安裝模型）。"),
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
        ref("AgenticEnsembleRetriever"),
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
