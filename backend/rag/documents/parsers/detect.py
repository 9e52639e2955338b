"""Choosing a parser from a file's name, its declared media type and its first bytes.

Content wins over the name where the content is unambiguous (``%PDF``, an OOXML word
package, an image or archive signature); otherwise the extension decides, then the declared
media type, then sniffing for HTML.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
MARKDOWN = "text/markdown"
TEXT = "text/plain"

SUPPORTED_TYPES: tuple[str, ...] = (PDF, DOCX, HTML, MARKDOWN, TEXT)
SUPPORTED_NAMES = "PDF, DOCX, HTML, Markdown, plain text"

EXTENSIONS: dict[str, str] = {
    ".pdf": PDF,
    ".docx": DOCX,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".mdown": MARKDOWN,
    ".mkd": MARKDOWN,
    ".txt": TEXT,
    ".text": TEXT,
    ".log": TEXT,
    ".csv": TEXT,
    ".tsv": TEXT,
    ".rst": TEXT,
    ".json": TEXT,
    ".yaml": TEXT,
    ".yml": TEXT,
}

_MIME_TYPES: dict[str, str] = {
    PDF: PDF,
    "application/x-pdf": PDF,
    DOCX: DOCX,
    HTML: HTML,
    "application/xhtml+xml": HTML,
    MARKDOWN: MARKDOWN,
    "text/x-markdown": MARKDOWN,
    TEXT: TEXT,
}

# What a refusal calls the expected format ("... is not a PDF document: ...").
_EXPECTED = {
    PDF: gettext_noop("a PDF document"),
    DOCX: gettext_noop("a DOCX document"),
    HTML: gettext_noop("an HTML page"),
    MARKDOWN: gettext_noop("Markdown text"),
    TEXT: gettext_noop("text"),
}

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", gettext_noop("a PNG image")),
    (b"\xff\xd8\xff", gettext_noop("a JPEG image")),
    (b"GIF87a", gettext_noop("a GIF image")),
    (b"GIF89a", gettext_noop("a GIF image")),
    (b"II*\x00", gettext_noop("a TIFF image")),
    (b"MM\x00*", gettext_noop("a TIFF image")),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
     gettext_noop("an OLE compound file (a legacy .doc/.xls or a password-protected Office file)")),
    (b"{\\rtf", gettext_noop("an RTF document")),
    (b"\x1f\x8b", gettext_noop("a gzip archive")),
    (b"Rar!\x1a\x07", gettext_noop("a RAR archive")),
    (b"7z\xbc\xaf\x27\x1c", gettext_noop("a 7-Zip archive")),
    (b"\x7fELF", gettext_noop("an executable program")),
)

# WHATWG's HTML sniffing patterns; each must be followed by a space or ">".
_HTML_STARTS = (
    b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
    b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--",
)


@dataclass(frozen=True)
class Sniffed:
    """What the first bytes say: ``mime`` for a format we read, ``description`` for one we do
    not (e.g. "a PNG image"), ``looks_like_html`` for text that starts like a web page."""

    mime: str | None = None
    description: str | None = None
    looks_like_html: bool = False


def file_extension(filename: str) -> str:
    """The lower-case extension of ``filename`` (``".pdf"``), or ``""``; accepts Windows paths."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    return f".{extension.lower()}" if dot and stem.strip(".") and extension else ""


def _normalise_mime(mime: str | None) -> str | None:
    if not mime:
        return None
    base = mime.split(";", 1)[0].strip().lower()
    if base in _MIME_TYPES:
        return _MIME_TYPES[base]
    # Source code and other text/* types read fine as plain text.
    if base.startswith("text/"):
        return TEXT
    return None


def _zip_contents(data: bytes) -> Sniffed:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            kind = archive.read("mimetype")[:100] if "mimetype" in names else b""
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError):
        return Sniffed(description=gettext_noop("a damaged zip archive"))
    if "word/document.xml" in names:
        return Sniffed(mime=DOCX)
    if any(name.startswith("xl/") for name in names):
        return Sniffed(description=gettext_noop("an Excel workbook"))
    if any(name.startswith("ppt/") for name in names):
        return Sniffed(description=gettext_noop("a PowerPoint presentation"))
    if kind.startswith(b"application/vnd.oasis.opendocument"):
        return Sniffed(description=gettext_noop("an OpenDocument file"))
    if kind.startswith(b"application/epub"):
        return Sniffed(description=gettext_noop("an EPUB book"))
    return Sniffed(description=gettext_noop("a zip archive without word/document.xml"))


def sniff(data: bytes) -> Sniffed:
    """Identify ``data`` by its first bytes."""
    head = data[:1024]
    # The PDF specification lets readers accept junk before the header within the first 1 KB.
    if b"%PDF-" in head:
        return Sniffed(mime=PDF)
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_contents(data)
    for signature, description in _SIGNATURES:
        if data.startswith(signature):
            return Sniffed(description=description)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Sniffed(description=gettext_noop("a WebP image"))
    start = head.lstrip(b"\xef\xbb\xbf").lstrip().lower()
    for pattern in _HTML_STARTS:
        if start.startswith(pattern) and start[len(pattern): len(pattern) + 1] in (b" ", b">", b"\n", b"\t", b"\r"):
            return Sniffed(looks_like_html=True)
    return Sniffed()


def _unsupported(extension: str) -> DocumentParseError:
    return DocumentParseError(
        gettext_noop("unsupported file type {extension!r} (supported: {supported})"),
        code="unsupported_type",
        context={"extension": extension, "supported": SUPPORTED_NAMES},
    )


def _mismatch(extension: str, mime: str | None, claimed: str, content: str) -> DocumentParseError:
    context = {"content": content, "expected": _EXPECTED[claimed]}
    if extension:
        return DocumentParseError(
            gettext_noop("the file is named {extension!r} but is not {expected}: its content is {content}"),
            code="type_mismatch",
            context={"extension": extension, **context},
        )
    return DocumentParseError(
        gettext_noop("the file is declared as {mime} but is not {expected}: its content is {content}"),
        code="type_mismatch",
        context={"mime": mime, **context},
    )


def detect_type(data: bytes, filename: str, mime: str | None = None) -> str:
    """The media type of the parser to use for ``data``, one of ``SUPPORTED_TYPES``.

    Parameters
    ----------
    data : bytes
        The file's content.
    filename : str
        The name it was uploaded under; its extension counts.
    mime : str, optional
        The media type the client declared; used when the name has no known extension.

    Raises
    ------
    DocumentParseError
        When the type is unsupported or the content contradicts the name.
    """
    extension = file_extension(filename)
    by_name = EXTENSIONS.get(extension)
    by_mime = _normalise_mime(mime)
    sniffed = sniff(data)
    if sniffed.mime is not None:
        return sniffed.mime
    claimed = by_name or by_mime
    if sniffed.description is not None:
        if extension and by_name is None:
            raise _unsupported(extension)
        if claimed is not None:
            raise _mismatch(extension, mime, claimed, sniffed.description)
        raise DocumentParseError(
            gettext_noop("unsupported file type: the content is {content} (supported: {supported})"),
            code="unsupported_type",
            context={"content": sniffed.description, "supported": SUPPORTED_NAMES},
        )
    if claimed == PDF:
        raise _mismatch(extension, mime, PDF, gettext_noop("a file without the %PDF header"))
    if claimed == DOCX:
        raise _mismatch(extension, mime, DOCX, gettext_noop("something other than a zip package"))
    if by_name is not None:
        return by_name
    if extension and by_mime is None:
        raise _unsupported(extension)
    if by_mime is not None:
        return by_mime
    return HTML if sniffed.looks_like_html else TEXT
