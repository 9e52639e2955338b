"""Plain text, and the byte-to-text decoding every text format shares."""

from __future__ import annotations

import codecs

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import ParsedDocument, ParseLimits, Section, normalize_text
from .detect import TEXT

# UTF-32 before UTF-16: the UTF-32 LE mark begins with the UTF-16 LE one.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Browsers read these labels as windows-1252 (WHATWG Encoding), and so do we.
_WINDOWS_1252_LABELS = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii"}


def decode_text(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """Decode ``data``: byte-order mark, else UTF-8, else ``declared``, else detection.

    Parameters
    ----------
    data : bytes
        The file's content.
    declared : str, optional
        An encoding the content names itself (an HTML ``<meta charset>``).

    Returns
    -------
    (text, encoding)

    Raises
    ------
    DocumentParseError
        ``binary`` when the data holds NUL bytes (without a UTF-16/32 mark), ``encoding`` when
        no encoding fits.
    """
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            try:
                return data[len(mark):].decode(encoding), encoding
            except UnicodeDecodeError:
                raise DocumentParseError(
                    gettext_noop("the file starts with a {encoding} byte-order mark but is not valid {encoding}"),
                    code="encoding",
                    context={"encoding": encoding.upper()},
                ) from None
    if b"\x00" in data:
        raise DocumentParseError(gettext_noop("binary file, not text"), code="binary")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if declared:
        label = declared.strip().lower()
        encoding = "cp1252" if label in _WINDOWS_1252_LABELS else label
        try:
            codecs.lookup(encoding)
            return data.decode(encoding), encoding
        except (LookupError, UnicodeDecodeError):
            pass
    return _detect(data)


def _detect(data: bytes) -> tuple[str, str]:
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        raise DocumentParseError(
            gettext_noop("the text encoding could not be recognised (is it a binary file?)"), code="encoding"
        )
    cleanest = min(match.chaos for match in matches)
    candidates = [match for match in matches if match.chaos <= cleanest]
    # Western European text decodes without "chaos" in several code pages, and
    # charset-normalizer then prefers cp1250, turning ñ into ń. windows-1252 is by far the most
    # common of them (and the web's default), so it wins a tie.
    chosen = next((match for match in candidates if match.encoding == "cp1252"), candidates[0])
    try:
        return data.decode(chosen.encoding), chosen.encoding
    except UnicodeDecodeError:
        return str(chosen), chosen.encoding


def parse_text(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Plain text as one section; refuses binary data."""
    text, encoding = decode_text(data)
    limits.check_characters(len(text))
    text = normalize_text(text)
    if not text:
        raise DocumentParseError(gettext_noop("the file contains only white space"), code="empty")
    return ParsedDocument(mime=TEXT, sections=[Section(text, {})], metadata={"encoding": encoding})
