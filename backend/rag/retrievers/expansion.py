"""Retrieve-then-expand on plain chunks: windows of neighbouring chunks, merged where they overlap.

A window's text is the document's text over the character span its chunks cover. Chunkers
record where each chunk lies in its document (``metadata["start"]`` and ``["end"]``, and the
text between a chunk and the one before it, ``["gap_before"]``, when they do not overlap), so
the span is rebuilt exactly: the overlap two chunks share appears once. Chunks without offsets
(cut before chunkers recorded them, or made by hand) are joined where the end of one repeats
as the start of the next, in whole words and at least ``MIN_REPEAT`` characters, and with a
line break otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag.documents.models import Chunk

WINDOW_KEYS = ("window", "window_chunk_ids", "retrieved_positions")
"""Metadata an expanded unit carries: its positions ``[first, last]``, the ids of the chunks it
covers, and the positions of the retrieved chunks it holds."""

OFFSET_KEYS = ("start", "end", "gap_before")

MIN_REPEAT = 20
"""Fewer repeated characters than this are taken for chance, not overlap (chunks without
offsets only): dropping a real short overlap would lose words, keeping it only repeats them."""


def is_expanded(chunk: Chunk) -> bool:
    """Whether ``chunk`` is an expanded unit (a window), not a chunk as it was cut."""
    return "window" in chunk.metadata


def window_bounds(position: int, window_size: int, last: int) -> tuple[int, int]:
    """The positions ``first..last`` of a ``window_size`` window around ``position`` (DESIGN §4):
    odd sizes centre on it, even sizes put the extra position after it, clipped to ``0..last``."""
    if window_size < 1:
        raise ValueError(f"window_size must be ≥ 1, got {window_size}")
    before = (window_size - 1) // 2
    after = window_size - 1 - before
    return max(0, position - before), min(last, position + after)


def _offsets(chunk: Chunk) -> tuple[int, int] | None:
    start, end = chunk.metadata.get("start"), chunk.metadata.get("end")
    if (isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool)
            and not isinstance(end, bool) and end - start == len(chunk.text)):
        return start, end
    return None


def span_text(pieces: Sequence[Chunk]) -> str:
    """The document's text over ``pieces`` (chunks or windows of one document, in order).

    With offsets, each piece adds what lies past the end of the text so far: the gap before it
    (as its chunker recorded it) when it starts later, only its new part when it overlaps.
    """
    spans = [span for span in map(_offsets, pieces) if span is not None]
    if len(spans) == len(pieces):
        text, end = pieces[0].text, spans[0][1]
        for piece, (start, stop) in zip(pieces[1:], spans[1:], strict=True):
            if start >= end:
                gap = piece.metadata.get("gap_before")
                text += gap if isinstance(gap, str) and len(gap) == start - end else ("\n" if start > end else "")
                text += piece.text
            elif stop > end:
                text += piece.text[end - start:]
            end = max(end, stop)
        return text
    text = pieces[0].text
    for piece in pieces[1:]:
        repeated = _repeated_words(text, piece.text)
        text += piece.text[repeated:] if repeated else "\n" + piece.text
    return text


def _repeated_words(before: str, after: str) -> int:
    """The length of the longest start of ``after`` that ends ``before``, counted only when it
    is whole words on both sides and at least ``MIN_REPEAT`` characters long (a chunker's
    overlap, not two pieces that happen to meet on the same word); 0 when there is none."""
    longest = min(len(before), len(after))
    for length in range(longest, MIN_REPEAT - 1, -1):
        if not before.endswith(after[:length]):
            continue
        starts_a_word = length == len(before) or not before[-length - 1].isalnum() or not after[0].isalnum()
        ends_a_word = length == len(after) or not after[length].isalnum() or not after[length - 1].isalnum()
        if starts_a_word and ends_a_word:
            return length
    return 0


def window_chunk(best: Chunk, covered: Sequence[Chunk], retrieved_positions: Sequence[int]) -> Chunk:
    """One chunk for the window ``covered`` (consecutive chunks of ``best``'s document): the
    span's text, under ``best``'s id, at the window's first position.

    Its metadata is ``best``'s, with ``window``, ``window_chunk_ids``, ``retrieved_positions``,
    the span's offsets when known, and ``pages`` / ``page`` over every chunk covered.
    """
    metadata: dict[str, Any] = {key: value for key, value in best.metadata.items()
                                if key not in WINDOW_KEYS and key not in OFFSET_KEYS}
    pages = sorted({page for chunk in covered for page in chunk.metadata.get("pages", [])})
    if pages:
        metadata["page"], metadata["pages"] = pages[0], pages
    metadata["window"] = [covered[0].position, covered[-1].position]
    metadata["window_chunk_ids"] = [chunk.id for chunk in covered]
    metadata["retrieved_positions"] = sorted(set(retrieved_positions))
    first, last = _offsets(covered[0]), _offsets(covered[-1])
    if first is not None and last is not None:
        metadata["start"], metadata["end"] = first[0], max(last[1], first[1])
        if "gap_before" in covered[0].metadata:
            metadata["gap_before"] = covered[0].metadata["gap_before"]
    text = span_text(covered)
    if "start" in metadata and metadata["end"] - metadata["start"] != len(text):
        metadata["end"] = metadata["start"] + len(text)
    return Chunk(id=best.id, document_id=best.document_id, position=covered[0].position, text=text,
                 metadata=metadata)


def expand(chunks: Sequence[Chunk], window_size: int,
           document_chunks: Mapping[int, Mapping[int, Chunk]]) -> list[Chunk]:
    """One expanded unit per chunk, in order (see ``BaseRetriever.expand_retrieved_chunks``)."""
    units = []
    for chunk in chunks:
        positions = document_chunks.get(chunk.document_id)
        if not positions:
            raise LookupError(f"document {chunk.document_id} has no chunks loaded; cannot expand")
        first, last = window_bounds(chunk.position, window_size, max(positions))
        covered = [positions[position] for position in range(first, last + 1) if position in positions]
        if len(covered) <= 1:
            units.append(chunk)
        else:
            units.append(window_chunk(chunk, covered, [chunk.position]))
    return units


def merge(chunks: Sequence[Chunk], document_chunks: Mapping[int, Mapping[int, Chunk]]) -> list[Chunk]:
    """Overlapping expanded units merged, plain chunks untouched (see
    ``BaseRetriever.merge_expanded_chunks``)."""
    groups: dict[int, list[int]] = {}
    for rank, chunk in enumerate(chunks):
        if is_expanded(chunk):
            groups.setdefault(chunk.document_id, []).append(rank)
    replaced: dict[int, Chunk | None] = {}
    for ranks in groups.values():
        ranks.sort(key=lambda rank: (chunks[rank].metadata["window"][0], rank))
        runs: list[list[int]] = []
        reach = -1
        for rank in ranks:
            first, last = chunks[rank].metadata["window"]
            if runs and first <= reach:
                runs[-1].append(rank)
                reach = max(reach, last)
            else:
                runs.append([rank])
                reach = last
        for run in runs:
            if len(run) == 1:
                continue
            best = min(run)
            replaced.update({rank: None for rank in run})
            replaced[best] = _merged(chunks, run, best, document_chunks)
    merged = []
    for rank, chunk in enumerate(chunks):
        if rank not in replaced:
            merged.append(chunk)
        elif (replacement := replaced[rank]) is not None:
            merged.append(replacement)
    return merged


def _merged(chunks: Sequence[Chunk], run: list[int], best: int,
            document_chunks: Mapping[int, Mapping[int, Chunk]]) -> Chunk:
    units = [chunks[rank] for rank in run]
    first = min(unit.metadata["window"][0] for unit in units)
    last = max(unit.metadata["window"][1] for unit in units)
    retrieved = [position for unit in units for position in unit.metadata["retrieved_positions"]]
    positions = document_chunks.get(chunks[best].document_id) or {}
    covered = [positions[position] for position in range(first, last + 1) if position in positions]
    if len(covered) == last - first + 1:
        return window_chunk(chunks[best], covered, retrieved)
    # The document's chunks are not at hand: the units themselves hold the span.
    ordered = sorted(units, key=lambda unit: tuple(unit.metadata["window"]))
    stitched = window_chunk(chunks[best], ordered, retrieved)
    ids: dict[int, int] = {}
    for unit in ordered:
        low, high = unit.metadata["window"]
        ids.update(zip(range(low, high + 1), unit.metadata["window_chunk_ids"], strict=False))
    metadata = {**stitched.metadata, "window": [first, last], "window_chunk_ids": [ids[p] for p in sorted(ids)]}
    return Chunk(stitched.id, stitched.document_id, first, stitched.text, metadata)
