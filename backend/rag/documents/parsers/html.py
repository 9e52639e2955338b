"""HTML: the visible text, in block structure, split into sections at h1-h6.

A page's boilerplate is left out as readability tools leave it: navigation and sidebars
(``nav``, ``aside`` and the ARIA roles ``navigation``, ``complementary``) everywhere, the page's
own header and footer (``header``/``footer`` outside an ``article``, ``section`` or ``main``, and
the roles ``banner``, ``contentinfo``). A page that is nothing but boilerplate keeps it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import ParsedDocument, ParseLimits, SectionBuilder, inline_text, normalize_text, too_deep
from .detect import HTML
from .text import decode_text

if TYPE_CHECKING:
    from bs4 import Tag

# Never rendered, or not text a reader sees.
_DROPPED = frozenset({
    "script", "style", "noscript", "template", "head", "meta", "link", "title", "svg", "math",
    "canvas", "iframe", "object", "embed", "audio", "video", "map", "select", "datalist",
})
_NAVIGATION = frozenset({"nav", "aside"})
_PAGE_CHROME = frozenset({"header", "footer"})
_CONTENT_SCOPES = ["article", "section", "main"]
_BOILERPLATE_ROLES = frozenset({"navigation", "complementary", "banner", "contentinfo"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_PARAGRAPH_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "details", "dialog",
    "div", "dl", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr",
    "html", "legend", "main", "nav", "ol", "p", "section", "summary", "table", "ul",
})
# Blocks that end a line but not a paragraph, so a list or a table stays one paragraph.
_LINE_BLOCKS = frozenset({"li", "dt", "dd", "tr"})
_CELLS = ["td", "th"]
_LISTS = frozenset({"ul", "ol", "dl"})

# Markers for the flow text; source control characters are stripped first, so they are free.
_PARAGRAPH = "\x1d"
_LINE = "\x1e"
_CELL = "\x1f"
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
_SOURCE_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BREAK_RUN = re.compile(r"[ \n\x1d\x1e]*[\n\x1d\x1e][ \n\x1d\x1e]*")
_CELL_RUN = re.compile(r" *\x1f *")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class _Flow:
    """Text of the current section: inline runs with block markers, plus verbatim ``<pre>``."""

    def __init__(self) -> None:
        self._segments: list[tuple[bool, list[str]]] = [(False, [])]

    def text(self, value: str) -> None:
        self._segments[-1][1].append(_HTML_SPACE.sub(" ", _SOURCE_CONTROLS.sub("", value)))

    def mark(self, marker: str) -> None:
        self._segments[-1][1].append(marker)

    def preformatted(self, value: str) -> None:
        self._segments.append((True, [value]))
        self._segments.append((False, []))

    def take(self) -> str:
        """The rendered text so far; the flow is then empty."""
        paragraphs = []
        for verbatim, parts in self._segments:
            raw = "".join(parts)
            rendered = _render_preformatted(raw) if verbatim else _render_flow(raw)
            if rendered:
                paragraphs.append(rendered)
        self._segments = [(False, [])]
        return "\n\n".join(paragraphs)


def _render_break(match: re.Match[str]) -> str:
    run = match.group(0)
    return "\n\n" if _PARAGRAPH in run or run.count("\n") >= 2 else "\n"


def _render_flow(raw: str) -> str:
    text = _BREAK_RUN.sub(_render_break, raw)
    text = _CELL_RUN.sub("\t", text)
    return normalize_text(text)


def _render_preformatted(raw: str) -> str:
    # Code keeps its indentation; only line ends and trailing blanks are tidied.
    lines = [line.rstrip() for line in raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def _hidden(tag: Tag) -> bool:
    attributes = tag.attrs or {}
    if "hidden" in attributes or attributes.get("aria-hidden") == "true":
        return True
    style = attributes.get("style")
    return isinstance(style, str) and bool(_HIDDEN_STYLE.search(style))


def _boilerplate(tag: Tag) -> bool:
    """Site chrome rather than the page's content: navigation, sidebars, the page's header and footer."""
    if tag.name in _NAVIGATION:
        return True
    role = tag.get("role")
    if isinstance(role, str) and role.strip().lower() in _BOILERPLATE_ROLES:
        return True
    return tag.name in _PAGE_CHROME and tag.find_parent(_CONTENT_SCOPES) is None


def _line_level(tag: Tag) -> bool:
    if tag.name in _LINE_BLOCKS:
        return True
    # A list nested in a list item continues that list rather than starting a paragraph.
    return tag.name in _LISTS and tag.find_parent(["li", "dd"]) is not None


def _walk(root: Any, builder: SectionBuilder, *, keep_boilerplate: bool = False) -> None:
    from bs4.element import CData, NavigableString, PreformattedString, Tag

    flow = _Flow()
    # Iterative, with explicit exit markers: deeply nested pages would exhaust recursion.
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            flow.mark(_LINE if _line_level(node) else _PARAGRAPH)
            continue
        if isinstance(node, NavigableString):
            if not isinstance(node, PreformattedString) or isinstance(node, CData):
                flow.text(str(node))
            continue
        if not isinstance(node, Tag):
            continue
        name = node.name
        if name in _DROPPED or _hidden(node) or (not keep_boilerplate and _boilerplate(node)):
            continue
        if name in _HEADINGS:
            builder.paragraph(flow.take())
            builder.heading(_HEADINGS[name], node.get_text(" "))
            continue
        if name == "pre":
            flow.preformatted(node.get_text())
            continue
        if name == "br":
            flow.mark("\n")
            continue
        if name in _CELLS and node.find_previous_sibling(_CELLS) is not None:
            flow.mark(_CELL)
        if name in _PARAGRAPH_BLOCKS or name in _LINE_BLOCKS:
            flow.mark(_LINE if _line_level(node) else _PARAGRAPH)
            stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.contents))
    builder.paragraph(flow.take())


class _NestingTooDeep(Exception):
    pass


def _soup(markup: str, max_depth: int) -> Any:
    """``BeautifulSoup(markup, "lxml")`` that stops as soon as elements nest deeper than
    ``max_depth``: a page of millions of nested ``<div>`` would otherwise take minutes and
    gigabytes to build."""
    from bs4 import BeautifulSoup

    class DepthLimitedSoup(BeautifulSoup):
        def pushTag(self, tag: Any) -> None:  # noqa: N802 (bs4's name)
            super().pushTag(tag)
            if len(self.tagStack) > max_depth + 1:  # the soup itself is the first entry
                raise _NestingTooDeep

    try:
        return DepthLimitedSoup(markup, "lxml")
    except _NestingTooDeep:
        raise too_deep(max_depth) from None


def html_sections(markup: str, limits: ParseLimits) -> tuple[SectionBuilder, dict[str, Any]]:
    """Walk ``markup``; returns the filled builder and what the page says about itself
    (``title`` from ``<title>``, ``language`` from ``<html lang>``)."""
    soup = _soup(markup, limits.max_depth)
    metadata: dict[str, Any] = {}
    if soup.title is not None:
        title = inline_text(soup.title.get_text())
        if title:
            metadata["title"] = title
    if soup.html is not None and isinstance(soup.html.get("lang"), str) and soup.html["lang"].strip():
        metadata["language"] = soup.html["lang"].strip()
    builder = SectionBuilder(limits)
    _walk(soup, builder)
    if builder.characters == 0:
        builder = SectionBuilder(limits)
        _walk(soup, builder, keep_boilerplate=True)
    return builder, metadata


def finish(builder: SectionBuilder, metadata: dict[str, Any], mime: str) -> ParsedDocument:
    """Sections with the page title (or its first heading) as title; refuses a page without text."""
    title = metadata.get("title") or builder.first_heading
    sections = builder.finish(title)
    if not sections:
        raise DocumentParseError(
            gettext_noop("no text could be extracted: the document has no visible text"), code="no_text"
        )
    if title:
        metadata["title"] = title
    return ParsedDocument(mime=mime, sections=sections, metadata=metadata)


def parse_html(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Visible text of an HTML page; ``<meta charset>`` is honoured when the bytes are not UTF-8."""
    declared = _META_CHARSET.search(data[:4096])
    text, encoding = decode_text(data, declared.group(1).decode("ascii") if declared else None)
    limits.check_characters(len(text))
    builder, metadata = html_sections(text, limits)
    metadata["encoding"] = encoding
    return finish(builder, metadata, HTML)
