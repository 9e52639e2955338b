"""``parse_document`` in a child process, within a time and memory budget.

The PDF, DOCX, HTML and Markdown libraries are large, and some inputs drive them into
super-linear time or gigabytes of memory (a few kilobytes of Markdown can take Python-Markdown
minutes). A thread cannot be stopped, so those formats are parsed in a child process that is
killed when it runs past its time, and whose address space is capped. Plain text (linear
work, and most files of an evaluation corpus) is parsed in-process.

The child speaks JSON on its pipes, never pickle: a parser bug that a hostile file exploits
in the child cannot hand the parent an object to unpickle.

``python -m rag.documents.parsers.isolated`` is the child's entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import MEGABYTE, ParsedDocument, ParseLimits, Section, readable_size
from .detect import DOCX, HTML, MARKDOWN, PDF, detect_type
from .parse import parse_document

ISOLATED_TYPES = frozenset({PDF, DOCX, HTML, MARKDOWN})
_BACKEND_DIR = str(Path(__file__).resolve().parents[3])


def parse_document_isolated(
    data: bytes,
    filename: str,
    mime: str | None = None,
    *,
    limits: ParseLimits | None = None,
    timeout_s: float = 120.0,
    memory_bytes: int = 2048 * MEGABYTE,
) -> ParsedDocument:
    """Like ``parse_document``, but PDF, DOCX, HTML and Markdown are parsed in a child process.

    Parameters
    ----------
    timeout_s : float
        Wall-clock seconds the child may take; past them it is killed and the file refused
        (``timeout``).
    memory_bytes : int
        The child's address-space limit; a parser that needs more fails the file
        (``too_much_memory``).

    Raises
    ------
    DocumentParseError
        As ``parse_document``, plus ``timeout``, ``too_much_memory`` and ``parser_crashed``.
    """
    limits = limits or ParseLimits()
    try:
        kind = detect_type(data, filename, mime) if data and len(data) <= limits.max_bytes else None
    except DocumentParseError as error:
        error.filename = filename
        raise
    if kind not in ISOLATED_TYPES:
        return parse_document(data, filename, mime, limits=limits)

    header = json.dumps({
        "filename": filename, "mime": mime, "memory_bytes": memory_bytes,
        "limits": {"max_bytes": limits.max_bytes, "max_pages": limits.max_pages,
                   "max_characters": limits.max_characters, "max_depth": limits.max_depth},
    }).encode()
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [_BACKEND_DIR, *filter(None, [os.environ.get("PYTHONPATH")])])}
    child = subprocess.Popen(
        [sys.executable, "-m", "rag.documents.parsers.isolated"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=environment, cwd=_BACKEND_DIR,
    )
    try:
        output, errors = child.communicate(header + b"\n" + data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise _error(filename, gettext_noop("reading the file took longer than {seconds:g} s, the most Trellis "
                                            "allows; it may be built to exhaust the {format} parser"),
                     "timeout", {"seconds": timeout_s, "format": _FORMAT_NAMES[kind]}) from None
    try:
        answer = json.loads(output.decode("utf-8")) if child.returncode == 0 else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        answer = None
    if answer is None:
        detail = errors.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        raise _error(filename, gettext_noop("the {format} parser stopped unexpectedly"), "parser_crashed",
                     {"format": _FORMAT_NAMES[kind], "detail": detail[0][:160]})
    if "error" in answer:
        reported = answer["error"]
        raise _error(filename, reported["template"], reported["code"], reported["context"])
    return ParsedDocument(
        mime=answer["mime"],
        sections=[Section(section["text"], section["metadata"]) for section in answer["sections"]],
        metadata=answer["metadata"],
    )


_FORMAT_NAMES = {PDF: "PDF", DOCX: "DOCX", HTML: "HTML", MARKDOWN: "Markdown"}


def _error(filename: str, template: str, code: str, context: dict[str, Any]) -> DocumentParseError:
    error = DocumentParseError(template, code=code, context=context)
    error.filename = filename
    return error


def _child() -> int:
    """Read a header line and the file from stdin; write the parsed document or the refusal."""
    import resource

    stream = sys.stdin.buffer
    header = json.loads(stream.readline())
    data = stream.read()
    memory = header["memory_bytes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        parsed = parse_document(data, header["filename"], header["mime"], limits=ParseLimits(**header["limits"]))
        answer: dict[str, Any] = {
            "mime": parsed.mime,
            "sections": [{"text": section.text, "metadata": section.metadata} for section in parsed.sections],
            "metadata": parsed.metadata,
        }
    except DocumentParseError as error:
        answer = {"error": {"template": error.template, "code": error.code, "context": error.context}}
    except MemoryError:
        del data
        answer = {"error": {
            "template": gettext_noop("reading the file needs more than {limit} of memory, the most Trellis allows"),
            "code": "too_much_memory", "context": {"limit": readable_size(memory)}}}
    sys.stdout.buffer.write(json.dumps(answer, ensure_ascii=False).encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_child())
