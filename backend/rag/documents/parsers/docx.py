"""DOCX through python-docx: paragraphs and tables in document order, sections at headings."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import ParsedDocument, ParseLimits, SectionBuilder, inline_text, normalize_text, short_detail
from .detect import DOCX

_HEADING_STYLE = re.compile(r"^heading\s+([1-9])$", re.IGNORECASE)
# XML compresses well, but a package inflating to more than this ratio to the upload limit is
# a zip bomb; Word packages hold a few dozen parts, not tens of thousands.
_MAX_EXPANSION = 20
_MAX_PARTS = 10_000
# OOXML never uses a DTD. One in a part can only declare entities: external ones read files or
# the network (XXE), nested internal ones expand exponentially ("billion laughs").
_DTD_MARKERS = tuple(marker.encode(encoding) for marker in ("<!DOCTYPE", "<!ENTITY")
                     for encoding in ("utf-8", "utf-16-le", "utf-16-be"))


def _damaged(detail: str) -> DocumentParseError:
    return DocumentParseError(gettext_noop("the DOCX is damaged"), code="damaged", context={"detail": detail})


def _check_package(data: bytes, limits: ParseLimits) -> None:
    """Refuse a zip bomb (by the sizes the package declares; a part that inflates past its
    declared size fails its CRC check when read) and any XML part with a DTD."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.getinfo("word/document.xml")
            parts = archive.infolist()
            if len(parts) > _MAX_PARTS:
                raise DocumentParseError(
                    gettext_noop("the DOCX package holds {count:,} parts, more than the {limit:,} Trellis accepts"),
                    code="too_large", context={"count": len(parts), "limit": _MAX_PARTS},
                )
            expanded = sum(part.file_size for part in parts)
            if expanded > _MAX_EXPANSION * limits.max_bytes:
                raise DocumentParseError(
                    gettext_noop("the DOCX expands to {size:,} bytes of XML, more than Trellis accepts"),
                    code="too_large",
                    context={"size": expanded},
                )
            for part in parts:
                if part.filename.endswith((".xml", ".rels")) and _has_dtd(archive, part):
                    raise DocumentParseError(
                        gettext_noop("the DOCX part {part} declares a DTD with entities, which Word documents "
                                     "never use; refused as a possible XML entity attack"),
                        code="dtd",
                        context={"part": part.filename},
                    )
    except zipfile.BadZipFile as error:
        raise _damaged(short_detail(error)) from error
    except KeyError as error:
        raise _damaged(gettext_noop("the package has no word/document.xml")) from error
    except (OSError, EOFError, RuntimeError, NotImplementedError, ValueError) as error:  # zipfile on broken data
        raise _damaged(short_detail(error)) from error


def _has_dtd(archive: zipfile.ZipFile, part: zipfile.ZipInfo) -> bool:
    tail = b""
    with archive.open(part) as stream:
        while block := stream.read(1 << 20):
            window = tail + block
            if any(marker in window for marker in _DTD_MARKERS):
                return True
            tail = window[-32:]
    return False


def _style_name(paragraph: Any) -> str:
    try:
        style = paragraph.style
        return (style.name or "") if style is not None else ""
    except (KeyError, ValueError, AttributeError):  # a dangling style reference is not fatal
        return ""


def _table_text(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            # A horizontally merged cell is returned once per grid column it spans.
            if previous is not None and cell._tc is previous._tc:
                continue
            previous = cell
            cells.append(inline_text(cell.text))
        if any(cells):
            rows.append("\t".join(cells))
    return "\n".join(rows)


def parse_docx(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Paragraphs (``Heading N`` styles open sections, ``Title`` names the document) and tables
    as tab-separated rows. Headers, footers and comments are left out."""
    _check_package(data, limits)
    from docx import Document
    from docx.table import Table

    try:
        document = Document(io.BytesIO(data))
        blocks = list(document.iter_inner_content())
        core_title = document.core_properties.title
    except Exception as error:  # python-docx and lxml raise many types on malformed packages
        raise _damaged(short_detail(error)) from error

    builder = SectionBuilder(limits)
    styled_title: str | None = None
    for block in blocks:
        if isinstance(block, Table):
            builder.paragraph(_table_text(block))
            continue
        text = block.text
        style = _style_name(block)
        heading = _HEADING_STYLE.match(style)
        if heading:
            builder.heading(int(heading.group(1)), text)
        elif style.lower() == "title":
            styled_title = styled_title or inline_text(text) or None
            builder.paragraph(inline_text(text))
        else:
            builder.paragraph(normalize_text(text))

    title = inline_text(core_title or "") or styled_title
    sections = builder.finish(title)
    if not sections:
        raise DocumentParseError(
            gettext_noop("no text could be extracted: the document has no text"), code="no_text"
        )
    return ParsedDocument(mime=DOCX, sections=sections, metadata={"title": title} if title else {})
