"""Whether the passages are about the question at all, before the model is asked.

A small model given passages about something else still answers, and the answer check
(``grounding``) catches most of those answers but not all: an invented answer can borrow enough of
the question's words. The similarity of the question to its best passage, under the pipeline's
own dense embedding model, separates the two cases far better: on XQuAD-es and -zh, with
multilingual-e5-small, fewer than 1 in 100 questions whose passages hold the answer fall below the
floor, and more than 8 in 10 questions about articles the knowledge base lacks do
(``bench/relevance_floor.py`` measures both). Below the floor the reply is "not found" at once,
with the closest passages, and no model call.

The floor belongs to an embedding model and a language (an embedding model's similarities have
their own scale), so it applies only where it was measured, unless the pipeline sets one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.documents.models import Chunk

from .grounding import language_family


@dataclass
class Relevance:
    """The question's similarity to each passage sent, and the floor it was held to."""

    similarities: list[float]
    floor: float
    set_by: str
    """``"pipeline"`` (the synthesizer's ``relevance_floor``) or ``"embedding model"`` (its
    calibrated floor for the question's language)."""
    model: str

    @property
    def best(self) -> float:
        return max(self.similarities, default=0.0)

    @property
    def below(self) -> bool:
        return self.best < self.floor

    def to_dict(self) -> dict[str, Any]:
        return {"best": round(self.best, 4), "floor": self.floor, "set_by": self.set_by, "model": self.model,
                "similarities": [round(value, 4) for value in self.similarities], "declined": self.below}


def dense_retrievers(retriever: Any) -> Iterator[Any]:
    """The dense retrievers in ``retriever``'s tree, first found first."""
    from rag.retrievers.dense import DenseEmbeddingRetriever

    if retriever is None:
        return
    if isinstance(retriever, DenseEmbeddingRetriever):
        yield retriever
    for child in getattr(retriever, "children", None) or ():
        yield from dense_retrievers(child)


def measure(question: str, chunks: Sequence[Chunk], language: str, retriever: Any,
            floor: float | None) -> Relevance | None:
    """The relevance of ``chunks`` to ``question`` under the first dense retriever of
    ``retriever`` whose embedding model has a floor for ``language`` (or the first at all, when
    ``floor`` is set); None when no floor applies (no dense retriever, no floor measured for this
    model and language, or ``floor`` 0). The chunks' vectors come from the index; only a chunk
    without one (a window merged from several) is embedded here."""
    if floor == 0 or not chunks:
        return None
    family = language_family(language)
    for dense in dense_retrievers(retriever):
        embedder = dense.embedder()
        calibrated = type(embedder).RELEVANCE_FLOORS.get(family)
        if floor is None and calibrated is None:
            continue
        query = embedder.embed_query(question)
        stored = dense.get_chunk_vectors([chunk.id for chunk in chunks])
        missing = [chunk for chunk in chunks if chunk.id not in stored]
        if missing:
            stored.update(zip([chunk.id for chunk in missing],
                              embedder.embed_documents([chunk.text for chunk in missing]), strict=True))
        vectors = np.stack([stored[chunk.id] for chunk in chunks])
        similarities = (vectors @ query) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query) + 1e-12)
        return Relevance([float(value) for value in similarities], floor if floor is not None else calibrated,
                         "pipeline" if floor is not None else "embedding model", type(embedder).NAME)
    return None
