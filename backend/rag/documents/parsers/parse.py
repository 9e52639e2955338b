"""``parse_document``: one entry point for every supported file type."""

from __future__ import annotations

from collections.abc import Callable

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import ParsedDocument, ParseLimits, readable_size
from .detect import DOCX, HTML, MARKDOWN, PDF, TEXT, detect_type
from .docx import parse_docx
from .html import parse_html
from .markdown import parse_markdown
from .pdf import parse_pdf
from .text import parse_text

PARSERS: dict[str, Callable[[bytes, ParseLimits], ParsedDocument]] = {
    PDF: parse_pdf,
    DOCX: parse_docx,
    HTML: parse_html,
    MARKDOWN: parse_markdown,
    TEXT: parse_text,
}


def parse_document(
    data: bytes,
    filename: str,
    mime: str | None = None,
    *,
    limits: ParseLimits | None = None,
) -> ParsedDocument:
    """Extract the text of an uploaded file, in sections that keep pages and headings.

    Parameters
    ----------
    data : bytes
        The file's content.
    filename : str
        The name it was uploaded under; its extension selects the parser unless the content
        says otherwise (see ``detect_type``).
    mime : str, optional
        The media type the client declared, used when the extension is missing or unknown.
    limits : ParseLimits, optional
        Size ceilings; the defaults when omitted.

    Returns
    -------
    ParsedDocument
        With at least one non-empty section.

    Raises
    ------
    DocumentParseError
        When the file is empty, too large, of an unsupported type, encrypted, damaged, binary
        or without text. ``reason`` says which in plain words; ``filename`` is set.
    """
    limits = limits or ParseLimits()
    try:
        if not data:
            raise DocumentParseError(gettext_noop("the file is empty"), code="empty")
        if len(data) > limits.max_bytes:
            raise DocumentParseError(
                gettext_noop("the file is {size}, larger than the limit of {limit}"),
                code="too_large",
                context={"size": readable_size(len(data)), "limit": readable_size(limits.max_bytes)},
            )
        parser = PARSERS[detect_type(data, filename, mime)]
        try:
            return parser(data, limits)
        except RecursionError:
            # Markdown nests lists and quotes recursively; a hostile file can exhaust the stack.
            raise DocumentParseError(
                gettext_noop("the document nests lists, quotes or elements too deeply to read safely"),
                code="too_deep",
            ) from None
    except DocumentParseError as error:
        error.filename = filename
        raise
