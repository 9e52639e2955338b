"""The engine's document and chunk records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourceDocument:
    """A document a knowledge base holds.

    Parameters
    ----------
    id : int
        Stable identifier (the database id in the app).
    name : str
        File name as uploaded.
    mime : str
        Media type the parser used.
    sha256 : str
        Hex digest of the original bytes.
    metadata : dict
        Free-form metadata (title, language, source URL, ...).
    """

    id: int
    name: str
    mime: str = "text/plain"
    sha256: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """A piece of a document's text, the unit every retriever returns.

    Parameters
    ----------
    id : int
        Stable identifier, unique in its knowledge base.
    document_id : int
        The document it was cut from.
    position : int
        0-based order of the chunk in its document (dense 0..n-1).
    text : str
        The chunk's text.
    metadata : dict
        Page, heading, source URL, or for an expanded window the positions it covers. A chunk
        of a paged document has ``page`` (its first page) and ``pages`` (every page it covers,
        sorted): ``page_span`` gives its first and last.
    """

    id: int
    document_id: int
    position: int
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


ChunksByDocument = dict[int, dict[int, Chunk]]
"""``{document_id: {position: Chunk}}``, what retrievers receive through ``inject_infra``."""


def page_span(metadata: Mapping[str, Any]) -> tuple[int, int] | None:
    """The first and last page a chunk covers (equal for one page), or None when unpaged.

    Chunks stored before ``pages`` was recorded carry ``page`` alone: one page.
    """
    pages = metadata.get("pages")
    if isinstance(pages, list | tuple) and pages:
        return int(min(pages)), int(max(pages))
    page = metadata.get("page")
    return (int(page), int(page)) if isinstance(page, int) and not isinstance(page, bool) else None
