"""The passages an answer is written from: distinct, few, and cut to the budget around what the
question asks.

A small model answers better from three short passages that hold the answer than from ten long
ones, and it reads 46–150 prompt tokens a second on two cores, so every token sent is time before
the first word. Three steps, each recorded for the trace:

1. ``distinct``: a passage whose text was already given (the same span of a document returned
   by two retrievers, a window holding a chunk that ranked higher, a copy of a document) is a
   duplicate and dropped; where two passages of a document overlap, the lower-ranked one keeps
   only its new text.
2. At most ``max_passages`` passages, best first.
3. ``fit``: the passages share the token budget, the best the largest share (unused shares
   pass on); a budget too small to give each passage about three sentences goes to fewer. A
   passage over its share is cut to consecutive sentences around the one sharing the most words
   with the question; a passage that cannot keep one sentence is dropped, except the first to be
   sent, whose best sentence is then cut to fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rag.documents.focus import focus
from rag.llms import estimate_tokens
from rag.retrievers import Hit

SHARES = (0.6, 0.25, 0.15)
"""How the budget is split between the first passages (renormalised over those present). The
first holds the answer far more often than the others (on XQuAD, 20 of the 22 answers the cut
lost were in the retriever's first chunk), so it gets most of the budget."""
PASSAGE_FLOOR_TOKENS = 100
"""The least share worth giving a passage, about three sentences: under it a passage is cut to
the one sentence sharing the most words with the question, which often is not the one that
answers it. A smaller budget goes to fewer passages, the best first (on XQuAD-es, with ~100
tokens for passages, the answer was in what one passage kept for 91% of questions, and in what
three kept for 82%)."""


@dataclass
class Selection:
    """The passages kept (their text possibly cut) and what happened to the others."""

    hits: list[Hit]
    duplicates: list[dict[str, int | None]] = field(default_factory=list)  # "of": the passage it repeats, if any
    """``{"chunk_id": dropped, "of": the passage that already holds its text}``"""
    trimmed: list[dict[str, Any]] = field(default_factory=list)
    """``{"chunk_id", "reason": "overlap" | "budget", "characters": kept, "of": original}``"""
    dropped: list[int] = field(default_factory=list)
    """Chunk ids left out by the passage limit or the token budget."""


def _span(hit: Hit) -> tuple[int, int] | None:
    start, end = hit.chunk.metadata.get("start"), hit.chunk.metadata.get("end")
    if isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool) \
            and end - start == len(hit.chunk.text):
        return start, end
    return None


def _flat(text: str) -> str:
    return " ".join(text.split())


def _with_text(hit: Hit, text: str, span: tuple[int, int] | None = None) -> Hit:
    metadata = dict(hit.chunk.metadata)
    if span is not None:
        metadata["start"], metadata["end"] = span
    else:
        metadata.pop("start", None)
        metadata.pop("end", None)
    metadata.pop("gap_before", None)
    return Hit(replace(hit.chunk, text=text, metadata=metadata), hit.score, hit.sources)


def distinct(hits: Sequence[Hit]) -> Selection:
    """Each text once: drop passages already given, cut overlaps off lower-ranked passages."""
    selection = Selection([])
    spans: list[tuple[int, int, int, int]] = []  # (document, start, end, chunk id) of kept passages
    texts: list[tuple[str, int]] = []
    for hit in hits:
        flat = _flat(hit.chunk.text)
        span = _span(hit)
        holder = next((chunk_id for text, chunk_id in texts if flat and flat in text), None)
        if holder is None and span is not None:
            holder = next((chunk_id for document, start, end, chunk_id in spans
                           if document == hit.chunk.document_id and start <= span[0] and span[1] <= end), None)
        if holder is not None or not flat:
            selection.duplicates.append({"chunk_id": hit.chunk.id, "of": holder})
            continue
        if span is not None:
            length = len(hit.chunk.text)
            hit, span = _cut_overlaps(hit, span, [(start, end) for document, start, end, _ in spans
                                                  if document == hit.chunk.document_id])
            if not hit.chunk.text.strip():
                selection.duplicates.append({"chunk_id": hit.chunk.id, "of": None})
                continue
            if len(hit.chunk.text) < length:
                selection.trimmed.append({"chunk_id": hit.chunk.id, "reason": "overlap",
                                          "characters": len(hit.chunk.text), "of": length})
            spans.append((hit.chunk.document_id, span[0], span[1], hit.chunk.id))
        texts.append((_flat(hit.chunk.text), hit.chunk.id))
        selection.hits.append(hit)
    return selection


def _cut_overlaps(hit: Hit, span: tuple[int, int], others: list[tuple[int, int]]) -> tuple[Hit, tuple[int, int]]:
    """``hit`` without the head or tail it shares with the spans already sent. An earlier span
    inside this one is left in place: cutting it out would join text that is not contiguous."""
    start, end = span
    original = hit.chunk.text
    offset = span[0]
    for other_start, other_end in sorted(others):
        if other_start <= start < other_end < end:
            start = other_end
        elif start < other_start < end <= other_end:
            end = other_start
    if (start, end) == span:
        return hit, span
    text = original[start - offset:end - offset]
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    start, end = start + lead, start + lead + len(stripped)
    return _with_text(hit, stripped, (start, end)), (start, end)


def searched_parts(hits: Sequence[Hit]) -> int:
    """How many parts of the question the retrieval searched on their own: the distinct search
    texts other than the question itself in the hits' ``sources`` (an agentic plan that splits a
    two-part question searches one text per part); 1 when none."""
    texts = {source["query"] for hit in hits for source in hit.sources if source.get("query")}
    return max(1, len(texts))


def fit(hits: Sequence[Hit], question: str, budget: int, count: Callable[[str], int] = estimate_tokens,
        overhead: int = 0) -> Selection:
    """``hits`` within ``budget`` tokens, each passage costing its ``count`` plus ``overhead``
    (its number and separator): shares by rank (``SHARES``) for as many passages as the budget
    gives ``PASSAGE_FLOOR_TOKENS`` each, unused share passing on (to the passages after those
    too), long passages focused on the question."""

    def cost_of(passage: str) -> int:
        return count(passage) + overhead

    selection = Selection([])
    sharing = max(1, min(len(hits), budget // PASSAGE_FLOOR_TOKENS))
    shares = list(SHARES[:sharing]) + [SHARES[-1]] * max(0, sharing - len(SHARES))
    total = sum(shares)
    left = budget
    carried = 0.0
    for index, hit in enumerate(hits):
        if index < sharing - 1:
            room = min(int(budget * shares[index] / total + carried), left)
        else:
            room = left
        whole = cost_of(hit.chunk.text)
        if whole <= room:
            selection.hits.append(hit)
            left -= whole
            carried = room - whole
            continue
        text = focus(hit.chunk.text, question, room - overhead, count=count)
        if not text and room < left:
            # A better passage comes first: one sentence of it may take the lower passages' shares.
            text = focus(hit.chunk.text, question, left - overhead, clip=not selection.hits, count=count)
            room = max(room, cost_of(text)) if text else room
        elif not text and not selection.hits:
            # The model never gets nothing: the best passage's best sentence, cut to the room.
            text = focus(hit.chunk.text, question, room - overhead, clip=True, count=count)
        if text and cost_of(text) <= room:
            selection.hits.append(_with_text(hit, text))
            selection.trimmed.append({"chunk_id": hit.chunk.id, "reason": "budget",
                                      "characters": len(text), "of": len(hit.chunk.text)})
            left -= cost_of(text)
            carried = room - cost_of(text)
        else:
            selection.dropped.append(hit.chunk.id)
            carried = room
    return selection
