"""Markdown, rendered to HTML so that headings, lists, tables and code blocks keep their shape."""

from __future__ import annotations

from .base import ParsedDocument, ParseLimits
from .detect import MARKDOWN
from .html import finish, html_sections
from .text import decode_text


def parse_markdown(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Sections split at Markdown headings; code blocks are kept verbatim.

    Rendering first (rather than scanning for ``#``) means a ``#`` line inside a code block is
    not mistaken for a heading, and setext headings (``Title`` over ``=====``) count.
    """
    import markdown

    text, encoding = decode_text(data)
    limits.check_characters(len(text))
    rendered = markdown.markdown(text, extensions=["fenced_code", "tables", "sane_lists"])
    builder, metadata = html_sections(rendered, limits)
    metadata["encoding"] = encoding
    return finish(builder, metadata, MARKDOWN)
