"""Dense (embedding) retrieval over a knowledge base's vector collection."""

from .retriever import DenseEmbeddingRetriever

__all__ = ["DenseEmbeddingRetriever"]
