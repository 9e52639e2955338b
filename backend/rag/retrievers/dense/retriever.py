"""``DenseEmbeddingRetriever``: nearest chunks by embedding similarity."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rag.core import ComponentRef, TrellisError, component_param, ml, param, register
from rag.tracing import TraceNode

from ..base import BaseRetriever, Hit, RetrieverParams

if TYPE_CHECKING:
    from rag.embeddings import EmbeddingModel


@register
class DenseEmbeddingRetriever(BaseRetriever["DenseEmbeddingRetriever.Params"]):
    """Embeds the question and returns the chunks whose vectors are nearest.

    Vectors live in the knowledge base's Chroma collection for the embedding model and metric;
    without a knowledge base (the engine used on its own) the chunks are embedded in memory.
    Scores are similarities (higher is closer): cosine and inner product ``1 - distance``,
    l2 ``-distance`` (Chroma's squared L2).
    """

    CATEGORY = "dense"
    ICON = "sparkles"
    DISPLAY_NAME = ml("Dense semantic retriever", "Recuperador semántico denso", "稠密語意檢索器")
    SHORT_NAME = ml("Dense", "Denso", "稠密")
    DESCRIPTION = ml(
        "Finds chunks whose meaning is close to the question using an embedding model; catches "
        "paraphrases and synonyms that keyword search misses.",
        "Encuentra fragmentos de significado cercano a la pregunta con un modelo de embeddings; "
        "capta paráfrasis y sinónimos que la búsqueda por palabras no ve.",
        "使用嵌入模型找出語意與問題相近的區塊；能捕捉關鍵字搜尋遺漏的改寫與同義詞。",
    )
    REPRESENTATION = ml(
        "Dense · {embedding_model.component|knowledge base model} · {similarity_metric} · top {top_k}",
        "Denso · {embedding_model.component|modelo de la base} · {similarity_metric} · {top_k} mejores",
        "稠密 · {embedding_model.component|知識庫模型} · {similarity_metric} · 前 {top_k} 名",
    )

    # Built from the slots of ``Params``.
    embedding_model: EmbeddingModel | None

    class Params(RetrieverParams):
        top_k: int = param(
            10, ge=1, le=1000,
            title=ml("Results", "Resultados", "結果數"),
            description=ml("How many chunks to return.", "Cuántos fragmentos devolver.", "要傳回的區塊數。"),
        )
        similarity_metric: Literal["cosine", "l2", "ip"] = param(
            "cosine",
            title=ml("Similarity", "Similitud", "相似度"),
            labels={"cosine": ml("cosine", "coseno", "餘弦"), "l2": ml("L2", "L2", "L2"),
                    "ip": ml("inner product", "producto interno", "內積")},
            description=ml(
                "Cosine (the usual choice), L2 (Euclidean distance) or inner product.",
                "Coseno (lo habitual), L2 (distancia euclídea) o producto interno.",
                "餘弦（最常用）、L2（歐氏距離）或內積。",
            ),
        )
        embedding_model: ComponentRef | None = component_param(
            "embedding",
            optional=True,
            title=ml("Embedding model", "Modelo de embeddings", "嵌入模型"),
            description=ml(
                "Leave empty to use the knowledge base's own model; another model adds a vector index "
                "to the knowledge base, built in the background.",
                "Déjalo vacío para usar el modelo de la base de conocimiento; otro modelo añade un "
                "índice vectorial, que se construye en segundo plano.",
                "留空即使用知識庫本身的模型；選擇其他模型會為知識庫新增一個向量索引，並在背景建立。",
            ),
        )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._embedding: Any = None
        self._memory: tuple[np.ndarray, np.ndarray] | None = None
        # Two locks, not one: building the in-memory index asks for the embedder, which may
        # have to load the knowledge base's model under its own lock first.
        self._embedding_lock = threading.Lock()
        self._memory_lock = threading.Lock()

    def init_model(self) -> None:
        self.embedder().init_model()

    def embedder(self) -> Any:
        """The embedding component in use: the configured one, else the knowledge base's."""
        if self.embedding_model is not None:
            return self.embedding_model
        with self._embedding_lock:
            if self._embedding is None:
                default = getattr(self.persistence, "default_embedding", None)
                if default is None:
                    raise TrellisError(
                        "DenseEmbeddingRetriever has no embedding_model and no knowledge base to take one from"
                    )
                component = self.registry().get(default["component"])(**default["params"])
                component.init_model()
                self._embedding = component
            return self._embedding

    def close(self) -> None:
        if self._embedding is not None:
            self._embedding.close()
            self._embedding = None
        super().close()

    def _has_vector_store(self) -> bool:
        return callable(getattr(self.persistence, "vectors", None))

    def _collection(self) -> Any:
        return self.persistence.vectors(self.embedder().model_key, self.params.similarity_metric)

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        vector = self.embedder().embed_query(query)
        if not self._has_vector_store():
            return self._search_in_memory(vector, top_k)
        collection = self._collection()
        chunks = self.chunks_by_id
        # The collection may also hold vectors of documents still being ingested (not yet
        # ready, so not in ``chunks``); ask for more until top_k known chunks are found.
        wanted = top_k + 8
        while True:
            matches = collection.query(vector, wanted)
            hits = [Hit(chunks[match.chunk_id], self._similarity(match.distance))
                    for match in matches if match.chunk_id in chunks]
            if len(hits) >= top_k or len(matches) < wanted:
                return hits[:top_k]
            wanted *= 4

    @property
    def score_scale(self) -> str:
        return {"cosine": "cosine", "ip": "inner_product", "l2": "negative_l2"}[self.params.similarity_metric]

    def _similarity(self, distance: float) -> float:
        return -distance if self.params.similarity_metric == "l2" else 1.0 - distance

    def _memory_index(self) -> tuple[np.ndarray, np.ndarray]:
        with self._memory_lock:
            if self._memory is None:
                ordered = [chunk for positions in self.chunks.values() for chunk in positions.values()]
                ids = np.array([chunk.id for chunk in ordered], dtype=np.int64)
                cache = getattr(self.persistence, "vector_cache", None)
                if not ordered:
                    vectors = np.zeros((0, 1), dtype=np.float32)
                elif cache is not None:
                    # One group per document: a changed file re-embeds only its own chunks.
                    groups = [[chunk.text for chunk in positions.values()] for positions in self.chunks.values()]
                    vectors, _ = cache.embed(self.embedder(), groups)
                else:
                    vectors = self.embedder().embed_documents([chunk.text for chunk in ordered])
                self._memory = (ids, vectors)
            return self._memory

    def _search_in_memory(self, vector: np.ndarray, top_k: int) -> list[Hit]:
        ids, vectors = self._memory_index()
        if not len(ids):
            return []
        distances = distances_to(vector, vectors, self.params.similarity_metric)
        order = np.argsort(distances, kind="stable")[:top_k]
        chunks = self.chunks_by_id
        return [Hit(chunks[int(ids[row])], self._similarity(float(distances[row]))) for row in order]

    def get_chunk_vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        if not self._has_vector_store():
            ids, vectors = self._memory_index()
            position = {int(chunk_id): row for row, chunk_id in enumerate(ids)}
            return {int(i): vectors[position[int(i)]] for i in chunk_ids if int(i) in position}
        return self._collection().get_vectors(list(chunk_ids))

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        """Distances as the collection measures them; a chunk without a vector gets +inf."""
        vector = self.embedder().embed_query(query)
        stored = self.get_chunk_vectors(chunk_ids)
        result = []
        for chunk_id in chunk_ids:
            if int(chunk_id) in stored:
                distance = float(distances_to(vector, stored[int(chunk_id)][None, :], self.params.similarity_metric)[0])
            else:
                distance = float("inf")
            result.append((int(chunk_id), distance))
        return sorted(result, key=lambda pair: pair[1])


def distances_to(query: np.ndarray, vectors: np.ndarray, metric: str) -> np.ndarray:
    """Chroma's distances: cosine ``1 - cos``, l2 squared Euclidean, ip ``1 - dot``."""
    query = np.asarray(query, dtype=np.float64)
    vectors = np.asarray(vectors, dtype=np.float64)
    if metric == "l2":
        return ((vectors - query) ** 2).sum(axis=1)
    dots = vectors @ query
    if metric == "ip":
        return 1.0 - dots
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(query)
    return 1.0 - dots / np.where(norms == 0, 1.0, norms)
