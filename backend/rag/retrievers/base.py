"""The retriever contract, retrieve-then-expand, and composites."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from rag.core import ConfigObject, Params, TrellisError, ml, param, readable_error
from rag.documents.models import Chunk, ChunksByDocument, SourceDocument
from rag.tracing import TraceNode, TraceRecorder, current_recorder, recording

from .expansion import expand, merge

logger = logging.getLogger(__name__)


class RetrievalError(TrellisError):
    """A retriever could not answer. ``node`` is its trace node, error recorded."""

    def __init__(self, message: str, node: TraceNode | None = None) -> None:
        super().__init__(message)
        self.node = node


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk and its score (higher is better; the scale is the retriever's own).

    ``sources`` says, for a fused result, which children returned it at which rank and score.
    """

    chunk: Chunk
    score: float
    sources: tuple[dict[str, Any], ...] = ()


class RerankParams(Params):
    """How many re-ranked chunks a re-ranker keeps (retriever or strategy slot alike)."""

    top_k: int = param(
        5, ge=1, le=1000,
        title=ml("Keep", "Conservar", "保留數"),
        description=ml("How many re-ranked chunks to keep.", "Cuántos fragmentos reordenados conservar.",
                       "重新排序後要保留的區塊數。"),
    )


class RetrieverParams(Params):
    enable_retrieve_then_expand: bool = param(
        False,
        title=ml("Expand retrieved chunks", "Ampliar fragmentos recuperados", "擴展檢索到的區塊"),
        description=ml(
            "Return each retrieved chunk together with its neighbours in the document; overlapping "
            "windows of one document merge into one passage.",
            "Devuelve cada fragmento recuperado junto con sus vecinos en el documento; las ventanas "
            "que se solapan en un mismo documento se fusionan en un solo pasaje.",
            "將每個檢索到的區塊連同文件中相鄰的區塊一起傳回；同一文件中重疊的視窗會合併為一段。",
        ),
    )
    expand_window: int = param(
        3,
        title=ml("Expansion window", "Ventana de ampliación", "擴展視窗"),
        description=ml(
            "Chunks per window, the retrieved one included: odd sizes centre on it, even sizes put "
            "the extra chunk after it. Windows stop at the document's first and last chunk.",
            "Fragmentos por ventana, incluido el recuperado: los tamaños impares lo centran y los "
            "pares añaden el fragmento extra después. Las ventanas no salen del documento.",
            "每個視窗的區塊數（含檢索到的區塊）：奇數時置中，偶數時多出的區塊放在其後。視窗不會超出文件的首尾。",
        ),
        ge=1,
        le=21,
    )


RetrieverParamsT = TypeVar("RetrieverParamsT", bound=RetrieverParams)


class BaseRetriever(ConfigObject[RetrieverParamsT]):
    """Base of every retriever.

    Subclasses implement ``_search`` (and ``score_chunks``); ``retrieve`` adds timing, the trace
    node, error capture and retrieve-then-expand around it.
    """

    KIND: ClassVar[str] = "retriever"
    Params: ClassVar[type[RetrieverParams]] = RetrieverParams

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.env_path: Path | None = None
        self.chunks: ChunksByDocument = {}
        self.documents: Mapping[int, SourceDocument] = {}
        self.persistence: Any = None
        self._id: str | None = None
        self._chunks_by_id: dict[int, Chunk] | None = None

    # -- infrastructure ---------------------------------------------------------------------

    def inject_infra(
        self,
        *,
        env_path: str | Path | None = None,
        chunks: ChunksByDocument | None = None,
        persistence: Any = None,
        documents: Mapping[int, SourceDocument] | None = None,
        **other: Any,
    ) -> None:
        """Receive the knowledge base: where to keep files, its chunks by document and position,
        its stores, and its documents."""
        self.env_path = Path(env_path) if env_path is not None else None
        self.chunks = chunks if chunks is not None else {}
        self.persistence = persistence
        self.documents = documents if documents is not None else {}
        self._chunks_by_id = None

    @property
    def chunks_by_id(self) -> dict[int, Chunk]:
        """Every chunk this retriever may return, by id."""
        if self._chunks_by_id is None:
            self._chunks_by_id = {chunk.id: chunk for positions in self.chunks.values() for chunk in positions.values()}
        return self._chunks_by_id

    def set_id(self, identifier: str) -> None:
        """Name this retriever's saved state (under ``env_path``)."""
        self._id = identifier

    def get_id(self) -> str | None:
        return self._id

    def save(self) -> None:
        """Persist built state (indices). Stateless retrievers have nothing to save."""

    def load(self) -> bool:
        """Load saved state; ``False`` when there is none (the caller then builds it)."""
        return True

    # -- retrieval --------------------------------------------------------------------------

    @property
    def default_top_k(self) -> int:
        return int(getattr(self.params, "top_k", 10))

    @classmethod
    def depth_limit(cls, params: Mapping[str, Any]) -> tuple[int, str] | None:
        """How many results this retriever returns at most whatever ``top_k`` it is asked for,
        and why, when that is not up to ``top_k`` (an LLM chooses, or re-orders a fixed candidate
        list); None when a larger ``top_k`` (here and in the children) gives more results.
        ``params`` are validated and complete. Evaluation depth (``rag.evaluation.deepen``)
        reads it."""
        return None

    def retrieve(self, query: str, top_k: int | None = None) -> tuple[list[Chunk], dict[str, Any]]:
        """Retrieve the chunks for ``query``.

        Parameters
        ----------
        query : str
            The search query string.
        top_k : int, optional
            How many chunks to return; the retriever's own ``top_k`` when omitted.

        Returns
        -------
        Tuple[List[Chunk], Dict[str, Any]]
            The chunks, best first, and this invocation's trace node as a plain JSON-serialisable
            dict (DESIGN §4: ``id``, ``class``, ``params``, ``query``, ``top_k``, ``elapsed_ms``,
            ``results``, ``children``, ``rounds``, ``error``).

        Raises
        ------
        RetrievalError
            When retrieval fails; its ``node`` carries the trace with the error recorded.
        """
        hits, node = self.search(query, top_k)
        return [hit.chunk for hit in hits], node.to_dict()

    def search(self, query: str, top_k: int | None = None) -> tuple[list[Hit], TraceNode]:
        """Like ``retrieve`` but with scores and the live trace node; composites and strategies
        combine retrievers through it."""
        k = self.default_top_k if top_k is None else int(top_k)
        if k < 1:
            raise ValueError(f"top_k must be ≥ 1, got {k}")
        return self._traced_search(query, k)

    def _traced_search(self, query: str, k: int, details: dict[str, Any] | None = None) -> tuple[list[Hit], TraceNode]:
        recorder = current_recorder()
        if recorder is None:
            with recording(TraceRecorder()):
                return self._traced_search(query, k, details)
        node = TraceNode(
            id=recorder.next_id(),
            component=self.NAME,
            params=self.trace_params or self.to_config()["params"],
            query=query,
            top_k=k,
            details=dict(details or {}),
            score_scale=self.score_scale,
        )
        started = time.perf_counter()
        try:
            hits = self._search(query, k, node)
            if self.params.enable_retrieve_then_expand:
                hits = self._expand_hits(hits)
        except Exception as exc:
            node.elapsed_ms = (time.perf_counter() - started) * 1000
            if not isinstance(exc, TrellisError):
                logger.error("%s failed on %r", self.NAME, query[:200], exc_info=exc)
            node.error = readable_error(exc).message
            recorder.node_completed(node)
            if isinstance(exc, RetrievalError) and exc.node is None:
                exc.node = node
                raise
            raise RetrievalError(node.error, node) from exc
        node.elapsed_ms = (time.perf_counter() - started) * 1000
        node.results = [result_row(hit, rank, self.documents) for rank, hit in enumerate(hits, start=1)]
        recorder.node_completed(node)
        return hits, node

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        raise NotImplementedError(f"{type(self).__name__} does not implement _search")

    @property
    def score_scale(self) -> str | None:
        """What this retriever's scores measure, by a stable name the interface translates:
        ``bm25`` (BM25 score), ``cosine`` / ``inner_product`` / ``negative_l2`` (a vector
        similarity), ``rrf`` (rank-fusion score), ``weighted`` (fused score), ``relevance`` (a
        cross-encoder's probability), ``llm_rank`` (1 − position / candidates, an LLM's order)
        or ``mixed`` (each result keeps the score of the child that found it); None when unnamed."""
        return None

    def explain(self, query: str, hits: Sequence[Hit]) -> list[dict[str, Any]]:
        """Why each of ``hits`` (this retriever's answer to ``query``) scored what it did, one
        dict per hit; empty when the score is its own explanation."""
        return [{} for _ in hits]

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        """``(chunk_id, distance)`` for each id, sorted ascending: lower is closer."""
        raise NotImplementedError(f"{type(self).__name__} cannot score arbitrary chunks")

    def get_chunk_vectors(self, chunk_ids: Sequence[int]) -> dict[int, Any]:
        """The representation this retriever scores with, per chunk id."""
        raise NotImplementedError(f"{type(self).__name__} has no chunk vectors")

    # -- retrieve-then-expand ---------------------------------------------------------------

    def expand_retrieved_chunks(self, chunks: Sequence[Chunk], window_size: int) -> list[Chunk]:
        """Expand chunks into centred windows (DESIGN §4), one per chunk, in order.

        A window holds ``window_size`` chunks of the chunk's document, the chunk included: odd
        sizes centre on it, even sizes put the extra chunk after it, and a window never leaves
        its document. Its text is the document's text over the covered chunks' span (their
        overlap once); its metadata adds ``window`` (first and last position),
        ``window_chunk_ids`` and ``retrieved_positions``. A window that covers only the chunk
        itself (``window_size=1``, a one-chunk document) is the chunk, unchanged.

        Parameters
        ----------
        chunks : List[Chunk]
            Chunks of documents this retriever holds (``inject_infra``), best first.
        window_size : int
            Chunks per window, at least 1.

        Returns
        -------
        List[Chunk]
            One chunk per input chunk; merge overlapping ones with ``merge_expanded_chunks``.
        """
        try:
            return expand(chunks, window_size, self.chunks)
        except LookupError as exc:
            raise RetrievalError(str(exc)) from None

    def merge_expanded_chunks(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        """Merge overlapping expanded units without widening plain chunks.

        Expanded units (windows from ``expand_retrieved_chunks``) of one document that share a
        position become one chunk: the document's text over the covered span, under the id of
        the best-ranked unit it absorbed and at that unit's rank, its ``retrieved_positions``
        the union. Units that only touch stay apart. Plain chunks are returned as they are.

        Parameters
        ----------
        chunks : List[Chunk]
            Expanded units and plain chunks, best first.

        Returns
        -------
        List[Chunk]
            Best first, each merged unit where its best-ranked member was.
        """
        return merge(chunks, self.chunks)

    def _expand_hits(self, hits: Sequence[Hit]) -> list[Hit]:
        """Retrieve-then-expand on hits: a merged window keeps the score and sources of the
        best-ranked hit it absorbed (whose chunk id it carries)."""
        best: dict[int, Hit] = {}
        for hit in hits:
            best.setdefault(hit.chunk.id, hit)
        merged = self.merge_expanded_chunks(
            self.expand_retrieved_chunks([hit.chunk for hit in hits], self.params.expand_window))
        return [Hit(chunk, best[chunk.id].score, best[chunk.id].sources) for chunk in merged]


# How much of a chunk's text a trace row carries, so a trace reads without looking chunks up.
PREVIEW_CHARACTERS = 200


def result_row(hit: Hit, rank: int, documents: Mapping[int, SourceDocument] | None = None) -> dict[str, Any]:
    """One row of a trace node's results: where the chunk is, how it scored, and enough to show
    it (its document's name when known, the start of its text)."""
    chunk = hit.chunk
    row: dict[str, Any] = {
        "chunk_id": chunk.id,
        "document_id": chunk.document_id,
        "position": chunk.position,
        "score": float(hit.score),
        "rank": rank,
    }
    document = (documents or {}).get(chunk.document_id)
    if document is not None:
        row["document_name"] = document.name
    text = " ".join(chunk.text.split())
    row["preview"] = text if len(text) <= PREVIEW_CHARACTERS else text[: PREVIEW_CHARACTERS - 1].rstrip() + "…"
    if "window" in chunk.metadata:
        row["window"] = chunk.metadata["window"]
    if hit.sources:
        row["sources"] = list(hit.sources)
    return row


class CompositeRetriever(BaseRetriever[RetrieverParamsT]):
    """A retriever over child retrievers (the ``children`` parameter)."""

    children: list[BaseRetriever]

    def add(self, child: BaseRetriever) -> None:
        limit = self.slots()["children"].max_children
        if limit is not None and len(self.children) >= limit:
            raise ValueError(f"{self.NAME} takes at most {limit} child component(s)")
        self.children.append(child)

    def remove(self, child: BaseRetriever) -> None:
        minimum = self.slots()["children"].min_children or 0
        if len(self.children) <= minimum:
            raise ValueError(f"{self.NAME} needs at least {minimum} child component(s)")
        self.children.remove(child)

    def get_children(self) -> list[BaseRetriever]:
        """A copy of the children list; changing it does not change the retriever."""
        return list(self.children)

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        """The mean of the children's distances."""
        totals = {int(chunk_id): 0.0 for chunk_id in chunk_ids}
        for child in self.children:
            for chunk_id, distance in child.score_chunks(chunk_ids, query):
                totals[chunk_id] += distance
        return sorted(((chunk_id, total / len(self.children)) for chunk_id, total in totals.items()),
                      key=lambda pair: pair[1])

