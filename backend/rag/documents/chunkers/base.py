"""What chunkers share: the draft they produce and the section bookkeeping around splitting."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, ClassVar

from rag.core import ConfigObject, ParamsT

from ..parsers.base import Section

SECTION_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class ChunkDraft:
    """A chunk before it is stored (and gets an id).

    Parameters
    ----------
    position : int
        0-based order in its document; positions are dense, 0..n-1.
    text : str
        A verbatim slice of the document's text, never empty.
    metadata : dict
        ``heading`` and ``title`` of the sections it comes from, and, for paged documents,
        ``page`` (the first page covered) and ``pages`` (every page covered, sorted).
        ``start`` and ``end``: where the text lies in the document's text (its non-blank
        sections joined by a blank line), ``text == document_text[start:end]``; and, when the
        chunk starts after the previous one ends, ``gap_before``: the document's text between
        them. Retrieve-then-expand rebuilds a window's text from these, overlap once.
    """

    position: int
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


class Chunker(ConfigObject[ParamsT]):
    """Base of chunker components: ``split`` sections into ``ChunkDraft``s.

    Consecutive sections under the same heading (typically the pages of a PDF) are split as one
    text, joined by paragraph breaks, so a chunk may run across a page break; sections under
    different headings are never mixed in one chunk. Subclasses implement ``spans``.
    """

    KIND: ClassVar[str] = "chunker"
    CATEGORY: ClassVar[str] = "chunking"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character spans of the chunks of ``text``, in order."""
        raise NotImplementedError

    def split_text(self, text: str) -> list[str]:
        """The chunks of a bare text."""
        return [text[start:end] for start, end in _trimmed(text, self.spans(text))]

    def split(self, sections: Sequence[Section]) -> list[ChunkDraft]:
        """Chunk one document's sections.

        Parameters
        ----------
        sections : sequence of Section
            In reading order, as ``parse_document`` returns them.

        Returns
        -------
        list of ChunkDraft
            Positions 0..n-1; no chunk is empty.
        """
        drafts: list[ChunkDraft] = []
        useful = [section for section in sections if section.text.strip()]
        document, _ = _join(useful)
        offset = 0  # where the group starts in the document's text
        previous_end: int | None = None
        for _, grouped in groupby(useful, key=lambda section: section.metadata.get("heading")):
            group = list(grouped)
            text, bounds = _join(group)
            ends = [high for _, high in bounds]
            for start, end in _trimmed(text, self.spans(text)):
                first = bisect.bisect_right(ends, start)
                last = bisect.bisect_left(bounds, (end, -1), lo=first)
                metadata = _metadata(group[first:last])
                metadata["start"], metadata["end"] = offset + start, offset + end
                if previous_end is not None and offset + start > previous_end:
                    metadata["gap_before"] = document[previous_end:offset + start]
                previous_end = offset + end if previous_end is None else max(previous_end, offset + end)
                drafts.append(ChunkDraft(len(drafts), text[start:end], metadata))
            offset += len(text) + len(SECTION_SEPARATOR)
        return drafts


def _join(sections: list[Section]) -> tuple[str, list[tuple[int, int]]]:
    bounds = []
    offset = 0
    for section in sections:
        bounds.append((offset, offset + len(section.text)))
        offset += len(section.text) + len(SECTION_SEPARATOR)
    return SECTION_SEPARATOR.join(section.text for section in sections), bounds


def _trimmed(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans without surrounding white space; spans of white space only are dropped."""
    result = []
    for start, end in spans:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            result.append((start, end))
    return result


def _metadata(covered: list[Section]) -> dict[str, Any]:
    metadata = {key: value for key, value in covered[0].metadata.items() if key != "page"}
    pages = sorted({section.metadata["page"] for section in covered if "page" in section.metadata})
    if pages:
        metadata["page"] = pages[0]
        metadata["pages"] = pages
    return metadata
