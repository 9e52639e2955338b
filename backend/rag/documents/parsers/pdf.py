"""PDF through pypdf: one section per page that has text, with its 1-based page number."""

from __future__ import annotations

import io
from typing import Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import ParsedDocument, ParseLimits, Section, inline_text, normalize_text, short_detail
from .detect import PDF


def _damaged(error: BaseException) -> DocumentParseError:
    return DocumentParseError(
        gettext_noop("the PDF is damaged"), code="damaged", context={"detail": short_detail(error)}
    )


def _open(data: bytes) -> tuple[Any, int]:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentParseError(
                gettext_noop("the PDF is encrypted and no password was given"), code="encrypted"
            )
        return reader, len(reader.pages)
    except DocumentParseError:
        raise
    except (DependencyError, NotImplementedError, FileNotDecryptedError) as error:
        raise DocumentParseError(
            gettext_noop("the PDF is encrypted in a way Trellis cannot open"),
            code="encrypted",
            context={"detail": short_detail(error)},
        ) from error
    except Exception as error:  # pypdf raises many types on malformed input; all mean "damaged"
        raise _damaged(error) from error


# Actions that run code or programs when a reader opens the file or touches a page or link.
_ACTIVE_ACTIONS = {"/JavaScript": "JavaScript", "/Launch": "a program launch"}


def _action_kind(action: Any, seen: set[int] | None = None) -> str | None:
    """What an action dictionary (or a chain of them through /Next) runs, if anything."""
    seen = seen if seen is not None else set()
    try:
        action = action.get_object() if hasattr(action, "get_object") else action
        if not hasattr(action, "get") or id(action) in seen or len(seen) > 100:
            return None
        seen.add(id(action))
        if "/JS" in action:
            return "JavaScript"
        kind = _ACTIVE_ACTIONS.get(str(action.get("/S")))
        if kind:
            return kind
        following = action.get("/Next")
        for item in (following if isinstance(following, list) else [following] if following is not None else []):
            found = _action_kind(item, seen)
            if found:
                return found
    except Exception:  # a broken action is not evidence of active content
        return None
    return None


def _active_content(reader: Any) -> tuple[str, str] | None:
    """(what, where) of the first script or launch action in the file, else None.

    Trellis never runs them, but a PDF that carries them is refused: it was made to do
    something when opened, which is not what a knowledge base is for.
    """
    root = reader.trailer["/Root"].get_object()
    names = root.get("/Names")
    if names is not None and "/JavaScript" in names.get_object():
        return "JavaScript", "the document's scripts"
    found = _action_kind(root.get("/OpenAction")) if root.get("/OpenAction") is not None else None
    if found:
        return found, "its open action"
    for triggers, where in ((root.get("/AA"), "its document actions"),):
        if triggers is not None:
            for action in triggers.get_object().values():
                found = _action_kind(action)
                if found:
                    return found, where
    for number, page in enumerate(reader.pages, start=1):
        triggers = page.get("/AA")
        candidates = list(triggers.get_object().values()) if triggers is not None else []
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if hasattr(annotation, "get"):
                candidates += [action for action in (annotation.get("/A"),) if action is not None]
                if annotation.get("/AA") is not None:
                    candidates += list(annotation["/AA"].get_object().values())
        for action in candidates:
            found = _action_kind(action)
            if found:
                return found, f"page {number}"
    return None


def _title(reader: Any) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata is not None else None
    except Exception:  # a broken info dictionary should not cost the whole document
        return None
    return inline_text(title) if isinstance(title, str) and title.strip() else None


def parse_pdf(data: bytes, limits: ParseLimits) -> ParsedDocument:
    """Text of every page, page numbers kept.

    Refuses an encrypted PDF that does not open with the empty password, a damaged one, one
    with more than ``limits.max_pages`` pages, and one without extractable text (scans).
    """
    reader, page_count = _open(data)
    if page_count > limits.max_pages:
        raise DocumentParseError(
            gettext_noop("the PDF has {pages:,} pages, more than the limit of {limit:,}"),
            code="too_many_pages",
            context={"pages": page_count, "limit": limits.max_pages},
        )
    try:
        active = _active_content(reader)
    except Exception as error:  # see _open
        raise _damaged(error) from error
    if active is not None:
        raise DocumentParseError(
            gettext_noop("the PDF contains {what} (in {where}); Trellis refuses PDFs with active content"),
            code="active_content",
            context={"what": active[0], "where": active[1]},
        )
    title = _title(reader)
    base = {"title": title} if title else {}
    sections: list[Section] = []
    characters = 0
    for number in range(1, page_count + 1):
        try:
            raw = reader.pages[number - 1].extract_text()
        except Exception as error:  # see _open: any failure here means a damaged page
            raise DocumentParseError(
                gettext_noop("the PDF is damaged: page {page} cannot be read"),
                code="damaged",
                context={"page": number, "detail": short_detail(error)},
            ) from error
        text = normalize_text(raw or "")
        if text:
            characters += len(text)
            limits.check_characters(characters)
            sections.append(Section(text, {"page": number, **base}))
    if not sections:
        raise DocumentParseError(
            gettext_noop("no text could be extracted (a scanned PDF needs OCR, which Trellis does not do)"),
            code="no_text",
        )
    metadata: dict[str, Any] = {"page_count": page_count, **base}
    return ParsedDocument(mime=PDF, sections=sections, metadata=metadata)
