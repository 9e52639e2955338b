"""Cosine similarity between a question and texts, with any embedding component."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from rag.embeddings import EmbeddingModel


def cosine_similarities(query_vector: np.ndarray, vectors: np.ndarray) -> list[float]:
    """Cosine similarity of ``query_vector`` with each row of ``vectors`` (0 for a zero vector).

    Vectors are normalised here, so the result does not depend on the embedding model's
    ``normalize`` setting.
    """
    import numpy as np

    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    query = np.asarray(query_vector, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
    dots = matrix @ query
    return [float(dot / norm) if norm > 0 else 0.0 for dot, norm in zip(dots, norms, strict=True)]


def question_similarities(model: EmbeddingModel, question: str, texts: Sequence[str]) -> list[float]:
    """Cosine similarity of ``question`` (embedded as a query) with each of ``texts`` (embedded
    as passages)."""
    if not texts:
        return []
    return cosine_similarities(model.embed_query(question), model.embed_documents(list(texts)))
