"""The retriever contract, retrieve-then-expand, and composites."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rag.core import ConfigObject, Params, TrellisError, ml, param
from rag.documents.models import Chunk, ChunksByDocument, SourceDocument
from rag.tracing import TraceNode, TraceRecorder, current_recorder, recording


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


@dataclass
class Window:
    """The positions ``first..last`` of one document around a retrieved chunk."""

    document_id: int
    first: int
    last: int
    rank: int
    score: float
    hits: list[tuple[int, Hit]] = field(default_factory=list)
    """The ``(rank, hit)`` pairs the window absorbed."""


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


class BaseRetriever(ConfigObject):
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

    def retrieve(self, query: str, top_k: int | None = None) -> tuple[list[Chunk], TraceNode]:
        """The ``top_k`` chunks for ``query`` (best first) and this invocation's trace node.

        Raises
        ------
        RetrievalError
            When retrieval fails; its ``node`` carries the trace with the error recorded.
        """
        hits, node = self.search(query, top_k)
        return [hit.chunk for hit in hits], node

    def search(self, query: str, top_k: int | None = None) -> tuple[list[Hit], TraceNode]:
        """Like ``retrieve`` but with scores; composites combine their children through it."""
        recorder = current_recorder()
        if recorder is None:
            with recording(TraceRecorder()):
                return self.search(query, top_k)
        k = self.default_top_k if top_k is None else int(top_k)
        if k < 1:
            raise ValueError(f"top_k must be ≥ 1, got {k}")
        node = TraceNode(
            id=recorder.next_id(),
            component=self.NAME,
            params=self.trace_params or self.to_config()["params"],
            query=query,
            top_k=k,
        )
        started = time.perf_counter()
        try:
            hits = self._search(query, k, node)
            if self.params.enable_retrieve_then_expand:
                hits = self.merge_expanded_chunks(self.expand_retrieved_chunks(hits, self.params.expand_window))
        except Exception as exc:
            node.elapsed_ms = (time.perf_counter() - started) * 1000
            node.error = str(exc) if isinstance(exc, TrellisError) else f"{type(exc).__name__}: {exc}"
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

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        """``(chunk_id, distance)`` for each id, sorted ascending: lower is closer."""
        raise NotImplementedError(f"{type(self).__name__} cannot score arbitrary chunks")

    def get_chunk_vectors(self, chunk_ids: Sequence[int]) -> dict[int, Any]:
        """The representation this retriever scores with, per chunk id."""
        raise NotImplementedError(f"{type(self).__name__} has no chunk vectors")

    # -- retrieve-then-expand ---------------------------------------------------------------

    def _last_position(self, document_id: int) -> int:
        positions = self.chunks.get(document_id)
        if not positions:
            raise RetrievalError(f"document {document_id} has no chunks loaded; cannot expand")
        return max(positions)

    def expand_retrieved_chunks(self, hits: Sequence[Hit], window_size: int) -> list[Window]:
        """One window of ``window_size`` positions per hit, in rank order (DESIGN §4): odd sizes
        centre on the hit, even sizes put the extra position after it, clipped to the document."""
        if window_size < 1:
            raise ValueError(f"window_size must be ≥ 1, got {window_size}")
        before = (window_size - 1) // 2
        after = window_size - 1 - before
        windows = []
        for rank, hit in enumerate(hits, start=1):
            chunk = hit.chunk
            last = self._last_position(chunk.document_id)
            windows.append(Window(
                document_id=chunk.document_id,
                first=max(0, chunk.position - before),
                last=min(last, chunk.position + after),
                rank=rank,
                score=hit.score,
                hits=[(rank, hit)],
            ))
        return windows

    def merge_expanded_chunks(self, windows: Sequence[Window]) -> list[Hit]:
        """Merge overlapping windows of one document into one chunk whose text concatenates the
        covered chunks in order, ranked at the best rank it absorbed. Windows that only touch
        stay apart, so a plain chunk is never widened."""
        by_document: dict[int, list[Window]] = {}
        for window in windows:
            by_document.setdefault(window.document_id, []).append(window)
        merged: list[Window] = []
        for document_windows in by_document.values():
            document_windows.sort(key=lambda window: (window.first, window.rank))
            current = _copy_window(document_windows[0])
            for window in document_windows[1:]:
                if window.first <= current.last:
                    current.last = max(current.last, window.last)
                    if window.rank < current.rank:
                        current.rank, current.score = window.rank, window.score
                    current.hits.extend(window.hits)
                else:
                    merged.append(current)
                    current = _copy_window(window)
            merged.append(current)
        merged.sort(key=lambda window: window.rank)
        return [
            Hit(self._window_chunk(window), window.score, min(window.hits, key=lambda ranked: ranked[0])[1].sources)
            for window in merged
        ]

    def _window_chunk(self, window: Window) -> Chunk:
        document = self.chunks[window.document_id]
        covered = [document[position] for position in range(window.first, window.last + 1) if position in document]
        best = min(window.hits, key=lambda ranked: ranked[0])[1].chunk
        if window.first == window.last:
            return best
        return Chunk(
            id=best.id,
            document_id=window.document_id,
            position=window.first,
            text="\n".join(chunk.text for chunk in covered),
            metadata={
                **best.metadata,
                "window": [window.first, window.last],
                "window_chunk_ids": [chunk.id for chunk in covered],
                "retrieved_positions": sorted({hit.chunk.position for _, hit in window.hits}),
            },
        )


def _copy_window(window: Window) -> Window:
    return Window(window.document_id, window.first, window.last, window.rank, window.score, list(window.hits))


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


class CompositeRetriever(BaseRetriever):
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

