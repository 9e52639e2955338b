"""``BM25Retriever``: keyword retrieval with rank-bm25's scores on a precomputed sparse index."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from rag.core import ComponentRef, component_param, ml, param, ref, register
from rag.tracing import TraceNode

from ..base import BaseRetriever, Hit, RetrieverParams
from .bag_of_words import BagOfWordsConverter
from .bm25 import BM25Index, BM25Parameters, top_k_indices
from .storage import BM25IndexError, load_index, save_index


@register
class BM25Retriever(BaseRetriever["BM25Retriever.Params"]):
    """Ranks chunks by BM25 over the tokens its ``vectorizer`` produces.

    Scores equal rank-bm25's ``BM25Okapi.get_scores`` (``delta = 0``) or ``BM25Plus``
    (``delta > 0``) on the same tokens. The index is the knowledge base's, shared by every
    retriever with the same vectorizer; ``k1``, ``b`` and ``delta`` only re-weight it.

    DashAI prints this retriever with ``similarity_function: "cosine"``; that value is accepted
    so its configurations import verbatim, and has no effect (BM25 ranks by its own score).
    """

    CATEGORY = "sparse"
    ICON = "text-search"
    DISPLAY_NAME = ml("BM25 keyword retriever", "Recuperador por palabras clave BM25", "BM25 關鍵字檢索器")
    SHORT_NAME = ml("BM25", "BM25", "BM25")
    DESCRIPTION = ml(
        "Finds chunks that share words with the question, weighting rare words more (BM25). Fast, "
        "exact on names, codes and numbers; blind to synonyms.",
        "Encuentra fragmentos que comparten palabras con la pregunta y da más peso a las palabras "
        "raras (BM25). Rápido y exacto con nombres, códigos y cifras; no ve sinónimos.",
        "找出與問題共用詞語的區塊，並對罕見詞給予較高權重（BM25）。速度快，對名稱、代碼與數字精確；但無法辨識同義詞。",
    )
    REPRESENTATION = ml(
        "BM25 · top {top_k} · k1={k1} · b={b}",
        "BM25 · {top_k} mejores · k1={k1} · b={b}",
        "BM25 · 前 {top_k} 名 · k1={k1} · b={b}",
    )

    # Built from the slots of ``Params``.
    vectorizer: BagOfWordsConverter

    class Params(RetrieverParams):
        top_k: int = param(
            10, ge=1, le=1000,
            title=ml("Results", "Resultados", "結果數"),
            description=ml("How many chunks to return.", "Cuántos fragmentos devolver.", "要傳回的區塊數。"),
        )
        k1: float = param(
            1.5, ge=0.0, le=10.0,
            title=ml("k1 (term saturation)", "k1 (saturación de términos)", "k1（詞頻飽和）"),
            description=ml(
                "How quickly repeated words stop adding to the score; 1.2–2.0 is usual.",
                "Con qué rapidez las palabras repetidas dejan de sumar; lo habitual es 1,2–2,0.",
                "重複詞語多快停止增加分數；常見值為 1.2–2.0。",
            ),
        )
        b: float = param(
            0.75, ge=0.0, le=1.0,
            title=ml("b (length normalisation)", "b (normalización por longitud)", "b（長度正規化）"),
            description=ml(
                "0 ignores chunk length, 1 fully favours short chunks.",
                "0 ignora la longitud del fragmento; 1 favorece del todo a los cortos.",
                "0 表示忽略區塊長度，1 表示完全偏好短區塊。",
            ),
        )
        delta: float = param(
            0.0, ge=0.0, le=10.0,
            title=ml("delta (BM25+)", "delta (BM25+)", "delta（BM25+）"),
            description=ml(
                "0 scores with BM25Okapi. Above 0, scores with rank-bm25's BM25Plus (BM25+), which "
                "adds idf × delta for every query word so long chunks are not over-penalised.",
                "Con 0 puntúa con BM25Okapi. Por encima de 0 usa BM25Plus de rank-bm25 (BM25+), que "
                "suma idf × delta por cada palabra de la consulta para no penalizar de más los fragmentos largos.",
                "0 時使用 BM25Okapi 計分；大於 0 時使用 rank-bm25 的 BM25Plus（BM25+），每個查詢詞都加上 idf × delta，避免過度懲罰長區塊。",
            ),
        )
        similarity_function: SkipJsonSchema[Literal["cosine"]] = Field("cosine", exclude=True)

        vectorizer: ComponentRef = component_param(
            "vectorizer",
            default=ref("BagOfWordsConverter"),
            title=ml("Tokenizer", "Tokenizador", "分詞器"),
            description=ml(
                "How text becomes words: analyzer, case, accents, stop words, stemming, n-grams, Chinese segmentation.",
                "Cómo el texto se convierte en palabras: analizador, mayúsculas, acentos, palabras vacías, raíces, n-gramas, segmentación del chino.",
                "文字如何切成詞：分析器、大小寫、重音、停用詞、詞幹還原、n-gram、中文斷詞。",
            ),
        )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._index: BM25Index | None = None
        self._base: BM25Index | None = None
        self._lock = threading.Lock()
        self._language: str | None = None
        self._converter: tuple[BagOfWordsConverter, BagOfWordsConverter] | None = None

    def inject_infra(self, *, language: str | None = None, **infra: Any) -> None:
        """``language``: the knowledge base's, which a vectorizer stemming in ``"auto"`` follows."""
        super().inject_infra(**infra)
        self._language = language
        self._converter = None
        self._index = self._base = None

    @property
    def converter(self) -> BagOfWordsConverter:
        """The vectorizer as it analyses this knowledge base (``"auto"`` stemming resolved)."""
        if self._converter is None or self._converter[0] is not self.vectorizer:
            self._converter = (self.vectorizer, self.vectorizer.for_language(self._language))
        return self._converter[1]

    @property
    def bm25_parameters(self) -> BM25Parameters:
        return BM25Parameters.for_delta(k1=self.params.k1, b=self.params.b, delta=self.params.delta)

    def index(self) -> BM25Index:
        """The weighted index over this retriever's chunks (built or loaded on first use)."""
        with self._lock:
            if self._index is None:
                if self._base is None:
                    self._base = self._load_or_build()
                self._index = self._base.with_params(self.bm25_parameters)
            return self._index

    def _load_or_build(self) -> BM25Index:
        if self.persistence is not None and hasattr(self.persistence, "bm25"):
            return self.persistence.bm25(self.converter)
        if self.load() and self._base is not None:
            return self._base
        ordered = [chunk for positions in self.chunks.values() for chunk in positions.values()]
        return BM25Index.from_texts([chunk.text for chunk in ordered], self.converter,
                                    doc_ids=[chunk.id for chunk in ordered])

    def _saved_dir(self):
        if self.env_path is None or self.get_id() is None:
            return None
        return self.env_path / f"bm25-{self.get_id()}"

    def save(self) -> None:
        directory = self._saved_dir()
        if directory is not None:
            save_index(self.index(), directory)

    def load(self) -> bool:
        directory = self._saved_dir()
        if directory is None:
            return False
        try:
            self._base = load_index(directory)
        except BM25IndexError:
            return False
        return True

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        index = self.index()
        tokens = self.converter.analyze(query)
        scores = index.scores(tokens)
        # Chunks that share no word with the query are not results, even to fill top_k; a
        # matching chunk stays one even when a tiny corpus gives its words an idf of 0.
        matched = index.matches(tokens)
        rows = top_k_indices(np.where(matched, scores, -np.inf), top_k)
        rows = rows[matched[rows]]
        chunks = self.chunks_by_id
        ids = index.doc_ids
        return [Hit(chunks[int(ids[row])], float(scores[row])) for row in rows if int(ids[row]) in chunks]

    @property
    def score_scale(self) -> str:
        return "bm25"

    def explain(self, query: str, hits: Sequence[Hit]) -> list[dict[str, Any]]:
        """The query's terms as the index analyses them, and each one's part of the hit's score
        (``BM25Index.contributions``: they add up to it). An expanded window keeps the id, and
        so the explanation, of the chunk that was retrieved."""
        index = self.index()
        tokens = self.converter.analyze(query)
        rows = index.rows_of([hit.chunk.id for hit in hits])
        return [{"terms": index.contributions(tokens, int(row)) if row >= 0 else []} for row in rows]

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        """Distance = minus the BM25 score (a chunk the index lacks gets +inf)."""
        index = self.index()
        scores = index.scores(self.converter.analyze(query))
        rows = index.rows_of(chunk_ids)
        distances = [(int(chunk_id), -float(scores[row]) if row >= 0 else float("inf"))
                     for chunk_id, row in zip(chunk_ids, rows, strict=True)]
        return sorted(distances, key=lambda pair: pair[1])

    def get_chunk_vectors(self, chunk_ids: Sequence[int]) -> dict[int, Any]:
        """Each chunk's row of term counts (a 1 × vocabulary sparse matrix)."""
        index = self.index()
        rows = index.rows_of(chunk_ids)
        counts = index.counts.tocsr()
        return {int(chunk_id): counts[row] for chunk_id, row in zip(chunk_ids, rows, strict=True) if row >= 0}
