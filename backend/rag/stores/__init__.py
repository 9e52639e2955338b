"""Where retrievers' data lives: Chroma collections and persisted BM25 indices."""

from .chroma import METRICS, ChromaStore, VectorCollection, VectorMatch, VectorStoreError, collection_name
from .knowledge_base import KnowledgeBaseStores, converter_fingerprint

__all__ = [
    "METRICS",
    "ChromaStore",
    "KnowledgeBaseStores",
    "VectorCollection",
    "VectorMatch",
    "VectorStoreError",
    "collection_name",
    "converter_fingerprint",
]
