"""A dataset's corpus as the engine sees it: chunks, documents, and in-memory stores whose
vectors can be cached on disk between runs.

Each corpus document becomes one engine document. Chunking is off by default (one chunk per
document, its whole text); with a chunker each document is cut, and scoring maps every chunk
back to its document (a document ranks where its best chunk ranks).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag.components import load_components
from rag.core import TrellisError, build, iter_nodes, validate_or_raise
from rag.documents.chunkers import Chunker
from rag.documents.models import Chunk, ChunksByDocument, SourceDocument
from rag.embeddings import EmbeddingModel
from rag.embeddings.vector_cache import VectorCache
from rag.stores.chroma import VectorMatch

from .datasets import EvaluationDataset


@dataclass
class EvaluationCorpus:
    """What retrievers are built over, and how their documents map back to corpus ids.

    Parameters
    ----------
    infra : dict
        The keyword arguments of ``inject_infra``: ``chunks``, ``documents``, ``persistence``,
        ``language`` (the dataset's) and ``env_path`` over a knowledge base.
    corpus_ids : dict
        Engine document id → corpus id.
    """

    infra: dict[str, Any]
    corpus_ids: dict[int, str]
    details: dict[str, Any] = field(default_factory=dict)

    def corpus_id_of(self, document_id: int) -> str | None:
        return self.corpus_ids.get(document_id)

    @property
    def chunk_count(self) -> int:
        return sum(len(positions) for positions in self.infra.get("chunks", {}).values())


class MemoryVectorCollection:
    """The vectors of every chunk under one model, searched by brute force with Chroma's
    distances (what ``DenseEmbeddingRetriever`` reads from a knowledge base's collection)."""

    def __init__(self, chunk_ids: np.ndarray, vectors: np.ndarray, metric: str) -> None:
        self.chunk_ids = chunk_ids
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.metric = metric
        self._rows = {int(chunk_id): row for row, chunk_id in enumerate(chunk_ids)}
        norms = np.linalg.norm(self.vectors, axis=1) if len(self.vectors) else np.zeros(0)
        self._unit = self.vectors / np.where(norms == 0, 1.0, norms)[:, None] if len(self.vectors) else self.vectors

    def query(self, embedding: np.ndarray, n_results: int, **_: Any) -> list[VectorMatch]:
        if not len(self.chunk_ids):
            return []
        query = np.asarray(embedding, dtype=np.float32)
        distances: np.ndarray
        if self.metric == "cosine":
            norm = float(np.linalg.norm(query)) or 1.0
            distances = 1.0 - self._unit @ (query / norm)
        elif self.metric == "ip":
            distances = 1.0 - self.vectors @ query
        else:
            distances = ((self.vectors - query) ** 2).sum(axis=1)
        count = min(n_results, len(distances))
        rows = np.argpartition(distances, count - 1)[:count] if count < len(distances) else np.arange(len(distances))
        rows = rows[np.lexsort((rows, distances[rows]))]
        return [VectorMatch(int(self.chunk_ids[row]), float(distances[row])) for row in rows]

    def get_vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        return {int(chunk_id): self.vectors[self._rows[int(chunk_id)]] for chunk_id in chunk_ids
                if int(chunk_id) in self._rows}


class MemoryStores:
    """In-memory stand-in for a knowledge base's stores.

    Dense retrievers read ``vectors(model_key, metric)``: every chunk embedded once per model
    (registered beforehand with :meth:`register_embedding`) and, with ``cache_dir``, saved as
    ``vectors-<digest>.npy`` keyed by the model and the exact texts, so a second run skips the
    embedding. BM25 retrievers read ``bm25(converter)``: one index per analyser, shared.
    """

    def __init__(self, chunks: ChunksByDocument, default_embedding: Mapping[str, Any],
                 cache_dir: str | Path | None = None) -> None:
        self.chunks = chunks
        self.default_embedding = dict(default_embedding)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._embedders: dict[str, Any] = {}
        self._collections: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._bm25: dict[str, Any] = {}
        self._lock = threading.RLock()
        self.embedded: dict[str, dict[str, Any]] = {}
        """Per model key: how many chunks, seconds spent embedding, whether the cache served."""

    def register_embedding(self, config: Mapping[str, Any]) -> str:
        """Make the model of ``config`` (an embedding reference) available; returns its key."""
        component = build(config, kind=EmbeddingModel, registry=load_components())
        with self._lock:
            self._embedders.setdefault(component.model_key, component)
        return component.model_key

    def register_pipeline(self, strategy_config: Mapping[str, Any]) -> None:
        """Register every embedding model the dense retrievers of a strategy tree use."""
        registry = load_components()
        normalised = validate_or_raise(strategy_config, registry=registry)
        for _, node in iter_nodes(normalised, registry=registry):
            if node["component"] == "DenseEmbeddingRetriever":
                self.register_embedding(node["params"].get("embedding_model") or self.default_embedding)

    def vectors(self, model_key: str, metric: str = "cosine") -> MemoryVectorCollection:
        with self._lock:
            if model_key not in self._collections:
                if model_key not in self._embedders:
                    raise TrellisError(f"no embedding model {model_key!r} was registered with the evaluation stores")
                self._collections[model_key] = self._embed(model_key)
            ids, vectors = self._collections[model_key]
        return MemoryVectorCollection(ids, vectors, metric)

    def bm25(self, converter: Any) -> Any:
        from rag.retrievers.sparse import BM25Index
        from rag.stores.knowledge_base import converter_fingerprint

        key = converter_fingerprint(converter.to_config())
        with self._lock:
            if key not in self._bm25:
                ordered = [chunk for positions in self.chunks.values() for chunk in positions.values()]
                self._bm25[key] = BM25Index.from_texts([chunk.text for chunk in ordered], converter,
                                                       doc_ids=[chunk.id for chunk in ordered])
            return self._bm25[key]

    def _embed(self, model_key: str) -> tuple[np.ndarray, np.ndarray]:
        import time

        embedder = self._embedders[model_key]
        ordered = [chunk for positions in self.chunks.values() for chunk in positions.values()]
        ids = np.array([chunk.id for chunk in ordered], dtype=np.int64)
        texts = [chunk.text for chunk in ordered]
        started = time.perf_counter()
        if self.cache_dir is not None:
            # The corpus as one group: an evaluation reads its whole corpus in one file.
            vectors, embedded = VectorCache(self.cache_dir).embed(embedder, [texts])
        else:
            vectors = embedder.embed_documents(texts) if texts else np.zeros((0, 1), dtype=np.float32)
            embedded = len(texts)
        self.embedded[model_key] = {"chunks": len(texts), "seconds": round(time.perf_counter() - started, 2),
                                    "cached": bool(texts) and not embedded}
        return ids, vectors


def build_corpus(dataset: EvaluationDataset, *, default_embedding: Mapping[str, Any],
                 chunker: Mapping[str, Any] | None = None, cache_dir: str | Path | None = None) -> EvaluationCorpus:
    """The dataset's corpus as in-memory engine documents and chunks.

    Parameters
    ----------
    default_embedding : dict
        The embedding reference dense retrievers without their own model use.
    chunker : dict, optional
        A chunker reference; None keeps one chunk per document (empty documents get none).
    cache_dir : path, optional
        Where document vectors are kept between runs.
    """
    splitter = build(chunker, kind=Chunker, registry=load_components()) if chunker else None
    chunks: ChunksByDocument = {}
    documents: dict[int, SourceDocument] = {}
    corpus_ids: dict[int, str] = {}
    chunk_id = 0
    for document_id, record in enumerate(dataset.corpus, start=1):
        corpus_ids[document_id] = record.id
        documents[document_id] = SourceDocument(document_id, record.id, metadata={"title": record.title})
        content = record.content
        pieces = splitter.split_text(content) if splitter is not None else ([content] if content.strip() else [])
        positions: dict[int, Chunk] = {}
        for position, text in enumerate(pieces):
            chunk_id += 1
            positions[position] = Chunk(chunk_id, document_id, position, text, {"title": record.title} if record.title
                                        else {})
        if positions:
            chunks[document_id] = positions
    stores = MemoryStores(chunks, default_embedding, cache_dir)
    return EvaluationCorpus(
        infra={"chunks": chunks, "documents": documents, "persistence": stores, "language": dataset.language},
        corpus_ids=corpus_ids,
        details={"documents": len(documents), "chunks": chunk_id, "chunker": dict(chunker) if chunker else None,
                 "embedding": dict(default_embedding)},
    )
