"""Chroma as the vector store: one collection per knowledge base, embedding model and metric.

Embeddings are always computed by Trellis and passed in; Chroma's own embedding function
(which downloads a model) is never used.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import numpy as np

from rag.core import TrellisError

Metric = Literal["cosine", "l2", "ip"]
METRICS: tuple[str, ...] = ("cosine", "l2", "ip")


class VectorStoreError(TrellisError):
    """The vector store refused or could not be reached."""


@dataclass(frozen=True)
class VectorMatch:
    chunk_id: int
    distance: float


def collection_name(knowledge_base_id: int, model_key: str, metric: str) -> str:
    """A Chroma-legal collection name (3-512 chars of [a-zA-Z0-9._-], alphanumeric ends)."""
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_key).strip("-._") or "model"
    return f"kb{knowledge_base_id}-{slug}-{metric}"


class VectorCollection:
    """The vectors of one knowledge base under one embedding model and distance metric."""

    def __init__(self, collection: Any, metric: str) -> None:
        self._collection = collection
        self.metric = metric

    @property
    def name(self) -> str:
        return self._collection.name

    def count(self) -> int:
        return self._collection.count()

    def upsert(
        self,
        chunk_ids: Sequence[int],
        embeddings: np.ndarray,
        metadatas: Sequence[Mapping[str, Any]],
        batch_size: int = 2048,
    ) -> None:
        """Store vectors by chunk id; ``metadatas`` carry at least ``document_id`` and ``position``."""
        if len(chunk_ids) != len(embeddings) or len(chunk_ids) != len(metadatas):
            raise ValueError("chunk_ids, embeddings and metadatas must have the same length")
        for start in range(0, len(chunk_ids), batch_size):
            stop = start + batch_size
            self._collection.upsert(
                ids=[str(chunk_id) for chunk_id in chunk_ids[start:stop]],
                embeddings=np.asarray(embeddings[start:stop], dtype=np.float32),
                metadatas=[_clean_metadata(metadata) for metadata in metadatas[start:stop]],
            )

    def delete_chunks(self, chunk_ids: Sequence[int]) -> None:
        if chunk_ids:
            self._collection.delete(ids=[str(chunk_id) for chunk_id in chunk_ids])

    def delete_documents(self, document_ids: Sequence[int]) -> None:
        if document_ids:
            self._collection.delete(where={"document_id": {"$in": [int(i) for i in document_ids]}})

    def query(self, embedding: np.ndarray, n_results: int, *, document_ids: Sequence[int] | None = None) -> list[VectorMatch]:
        """The ``n_results`` nearest chunks, closest first (Chroma's distance for the metric)."""
        total = self.count()
        if total == 0:
            return []
        where = {"document_id": {"$in": [int(i) for i in document_ids]}} if document_ids is not None else None
        result = self._collection.query(
            query_embeddings=np.asarray(embedding, dtype=np.float32).reshape(1, -1),
            n_results=min(n_results, total),
            where=where,
            include=["distances"],
        )
        return [VectorMatch(int(chunk_id), float(distance))
                for chunk_id, distance in zip(result["ids"][0], result["distances"][0], strict=True)]

    def get_vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        if not chunk_ids:
            return {}
        result = self._collection.get(ids=[str(chunk_id) for chunk_id in chunk_ids], include=["embeddings"])
        return {int(chunk_id): np.asarray(vector, dtype=np.float32)
                for chunk_id, vector in zip(result["ids"], result["embeddings"], strict=True)}

    def chunk_ids(self) -> set[int]:
        return {int(chunk_id) for chunk_id in self._collection.get(include=[])["ids"]}


def _clean_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    # Chroma accepts only scalar metadata values.
    return {key: value for key, value in metadata.items() if isinstance(value, (str, int, float, bool))}


class ChromaStore:
    """A Chroma client: the persistent local one under ``path`` or the HTTP one for ``url``."""

    def __init__(self, *, path: str | Path | None = None, url: str | None = None) -> None:
        if (path is None) == (url is None):
            raise ValueError("give exactly one of path (local Chroma) or url (Chroma server)")
        self.path = Path(path) if path is not None else None
        self.url = url
        self._client: Any = None
        self._lock = threading.Lock()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import chromadb
                from chromadb.config import Settings

                settings = Settings(anonymized_telemetry=False, allow_reset=False)
                try:
                    if self.url is not None:
                        parsed = urlparse(self.url)
                        self._client = chromadb.HttpClient(
                            host=parsed.hostname or "localhost",
                            port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                            ssl=parsed.scheme == "https",
                            settings=settings,
                        )
                    else:
                        assert self.path is not None
                        self.path.mkdir(parents=True, exist_ok=True)
                        self._client = chromadb.PersistentClient(path=str(self.path), settings=settings)
                except Exception as exc:
                    where = self.url or str(self.path)
                    raise VectorStoreError(f"cannot open the Chroma store at {where}: {exc}") from exc
            return self._client

    def collection(self, knowledge_base_id: int, model_key: str, metric: str = "cosine") -> VectorCollection:
        """The collection for a knowledge base, model and metric, created when missing."""
        if metric not in METRICS:
            raise ValueError(f"unknown similarity metric {metric!r}; use one of {', '.join(METRICS)}")
        name = collection_name(knowledge_base_id, model_key, metric)
        collection = self._get_client().get_or_create_collection(
            name=name, metadata={"hnsw:space": metric}, embedding_function=None
        )
        return VectorCollection(collection, metric)

    def drop_knowledge_base(self, knowledge_base_id: int) -> int:
        """Delete every collection of a knowledge base; returns how many were dropped."""
        client = self._get_client()
        prefix = f"kb{knowledge_base_id}-"
        names = [getattr(item, "name", item) for item in client.list_collections()]
        dropped = 0
        for name in names:
            if name.startswith(prefix):
                client.delete_collection(name)
                dropped += 1
        return dropped

    def heartbeat(self) -> None:
        """Raise ``VectorStoreError`` when the store cannot answer."""
        try:
            self._get_client().heartbeat()
        except VectorStoreError:
            raise
        except Exception as exc:
            raise VectorStoreError(f"Chroma did not answer: {exc}") from exc
