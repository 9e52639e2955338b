"""What every parser returns, the limits it honours and the text clean-up they share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError

MEGABYTE = 1024 * 1024


def readable_size(size: int) -> str:
    """``size`` bytes for a person: ``"740 bytes"``, ``"12.5 KB"``, ``"3.4 MB"``."""
    if size < 1024:
        return f"{size} bytes"
    if size < MEGABYTE:
        return f"{size / 1024:.1f} KB"
    return f"{size / MEGABYTE:.1f} MB"

# Horizontal white space that reads as a plain space. The ideographic space (U+3000) is left
# alone: in CJK text it is a deliberate full-width character, not layout noise.
_SPACES = re.compile(r"[ \u00a0\u1680\u2000-\u200a\u202f\u205f]+")
# C0 controls other than tab and newline, DEL and the C1 block: extraction debris, never text.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_LINE_EDGES = re.compile(r" *\n *")
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Section:
    """A run of text under one heading (or on one PDF page).

    Parameters
    ----------
    text : str
        Normalised text: single spaces, lines split by ``"\\n"``, paragraphs by ``"\\n\\n"``.
    metadata : dict
        ``page`` (1-based, PDF), ``heading`` (the heading path, e.g. ``"Install > Linux"``) and
        ``title`` (the document's), each only when known.
    """

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ParsedDocument:
    """The text of one file, in reading order.

    Parameters
    ----------
    mime : str
        Media type of the parser used (``application/pdf``, ``text/markdown``, ...).
    sections : list of Section
        Never empty: a file without text is refused instead.
    metadata : dict
        About the whole document: ``title``, ``page_count`` (PDF), ``encoding`` (text formats),
        ``language`` (HTML ``lang``), each only when known.
    """

    mime: str
    sections: list[Section]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """All sections' text, separated by paragraph breaks."""
        return "\n\n".join(section.text for section in self.sections)


@dataclass(frozen=True)
class ParseLimits:
    """Ceilings that protect the server from oversized uploads; exceeding one refuses the file.

    Parameters
    ----------
    max_bytes : int
        Largest accepted file (default 50 MB).
    max_pages : int
        Most pages of a PDF (default 2000).
    max_characters : int
        Most characters of extracted text (default 20 million).
    max_depth : int
        Deepest nesting of HTML elements (default 512; real pages stay far below 100).
    """

    max_bytes: int = 50 * MEGABYTE
    max_pages: int = 2000
    max_characters: int = 20_000_000
    max_depth: int = 512

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_pages", "max_characters", "max_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ParseLimits.{name} must be a positive integer, got {value!r}")

    def check_characters(self, count: int) -> None:
        if count > self.max_characters:
            raise DocumentParseError(
                gettext_noop("the document has more than {limit:,} characters of text, the most Trellis accepts"),
                code="too_many_characters",
                context={"limit": self.max_characters},
            )


def too_deep(limit: int) -> DocumentParseError:
    return DocumentParseError(
        gettext_noop("the document nests its elements more than {limit:,} levels deep, too deep to read safely"),
        code="too_deep",
        context={"limit": limit},
    )


def normalize_text(text: str) -> str:
    """Clean extracted text: unify line ends, drop control characters, collapse runs of spaces,
    trim lines, keep at most one blank line (a paragraph break) between paragraphs.

    Tabs are kept, since they separate table cells.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = _CONTROLS.sub("", text)
    text = _SPACES.sub(" ", text)
    text = _LINE_EDGES.sub("\n", text)
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


def inline_text(text: str) -> str:
    """``text`` on one line with single spaces (for headings and titles)."""
    return " ".join(_CONTROLS.sub("", text).split())


def short_detail(error: BaseException, limit: int = 160) -> str:
    """A one-line summary of a library's exception, to put after a reason's colon."""
    message = " ".join(str(error).split()) or type(error).__name__
    return message if len(message) <= limit else message[: limit - 1].rstrip() + "…"


class SectionBuilder:
    """Collects paragraphs and headings into sections, tracking the heading path.

    A heading opens a new section; its text is kept as the first paragraph of that section.
    Headings followed by no body text (``# Guide`` then ``## Install``) are carried into the
    next section rather than left as sections of their own, so no chunk is a bare heading.
    """

    def __init__(self, limits: ParseLimits, metadata: dict[str, Any] | None = None) -> None:
        self._limits = limits
        self._metadata = dict(metadata or {})
        self._path: list[tuple[int, str]] = []
        self._headings: list[str] = []
        self._paragraphs: list[str] = []
        self._characters = 0
        self.sections: list[Section] = []
        self.first_heading: str | None = None

    def heading(self, level: int, text: str) -> None:
        text = inline_text(text)
        if not text:
            return
        if self._paragraphs:
            self._flush()
        if self.first_heading is None:
            self.first_heading = text
        self._path = [(depth, title) for depth, title in self._path if depth < level] + [(level, text)]
        self._headings.append(text)
        self._count(text)

    def paragraph(self, text: str) -> None:
        text = text.strip()
        if text:
            self._paragraphs.append(text)
            self._count(text)

    @property
    def characters(self) -> int:
        """How much text the builder has collected so far."""
        return self._characters

    def finish(self, title: str | None = None) -> list[Section]:
        """Close the last section; ``title``, when given, goes into every section's metadata."""
        if self._paragraphs or self._headings:
            self._flush()
        if title:
            self.sections = [Section(section.text, {**section.metadata, "title": title}) for section in self.sections]
        return self.sections

    def _count(self, text: str) -> None:
        self._characters += len(text)
        self._limits.check_characters(self._characters)

    def _flush(self) -> None:
        metadata = dict(self._metadata)
        if self._path:
            metadata["heading"] = " > ".join(title for _, title in self._path)
        self.sections.append(Section("\n\n".join(self._headings + self._paragraphs), metadata))
        self._headings = []
        self._paragraphs = []
