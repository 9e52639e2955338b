"""``parse_document`` in a child process, within a time and memory budget.

The PDF, DOCX, HTML and Markdown libraries are large, and some inputs drive them into
super-linear time or gigabytes of memory (a few kilobytes of Markdown can take Python-Markdown
minutes). A thread cannot be stopped, so those formats are parsed in a child process that dies
when it runs past its time, and whose address space is capped. Plain text (linear work, and most
files of an evaluation corpus) is parsed in-process.

Starting Python and importing the parsers costs most of a second, more than parsing a typical
file, so the children come from a zygote: one helper process per parent that imports the parsers
once and forks a fresh child for every file (``rag.documents.parsers.zygote``).
No child sees another file, and none outlives its file. The child sets its own alarm: the
kernel ends it at the deadline even inside a C call that never returns to Python.

The child speaks JSON on its socket, never pickle: a parser bug that a hostile file exploits
in the child cannot hand the parent an object to unpickle.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import MEGABYTE, ParsedDocument, ParseLimits, Section
from .detect import DOCX, HTML, MARKDOWN, PDF, detect_type
from .parse import parse_document

ISOLATED_TYPES = frozenset({PDF, DOCX, HTML, MARKDOWN})
_BACKEND_DIR = str(Path(__file__).resolve().parents[3])
_ZYGOTE_START_S = 60.0
_ANSWER_GRACE_S = 5.0
"""How long past its deadline the parent waits for a child, which the alarm has ended by then."""


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
        Wall-clock seconds the child may take; past them it is ended and the file refused
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
        "filename": filename, "mime": mime, "memory_bytes": memory_bytes, "timeout_s": timeout_s,
        "size": len(data), "format": _FORMAT_NAMES[kind],
        "limits": {"max_bytes": limits.max_bytes, "max_pages": limits.max_pages,
                   "max_characters": limits.max_characters, "max_depth": limits.max_depth},
    }).encode()
    started = time.monotonic()
    output = _ask_a_child(header + b"\n" + data, timeout_s + _ANSWER_GRACE_S)
    try:
        answer = json.loads(output.decode("utf-8")) if output else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        answer = None
    if answer is None:
        if time.monotonic() - started >= timeout_s:
            raise _error(filename, gettext_noop("reading the file took longer than {seconds:g} s, the most Trellis "
                                                "allows; it may be built to exhaust the {format} parser"),
                         "timeout", {"seconds": timeout_s, "format": _FORMAT_NAMES[kind]})
        raise _error(filename, gettext_noop("the {format} parser stopped unexpectedly"), "parser_crashed",
                     {"format": _FORMAT_NAMES[kind], "detail": "the parser process ended without an answer"})
    if "error" in answer:
        reported = answer["error"]
        raise _error(filename, reported["template"], reported["code"], reported["context"])
    return ParsedDocument(
        mime=answer["mime"],
        sections=[Section(section["text"], section["metadata"]) for section in answer["sections"]],
        metadata=answer["metadata"],
    )


class _Zygote:
    """The parent's handle on its zygote: the process and the socket it forks a child for."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="trellis-parse-")  # mode 0700: no other user connects
        self.address = os.path.join(self.folder, "zygote")
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [_BACKEND_DIR, *filter(None, [os.environ.get("PYTHONPATH")])])}
        # The zygote reads its stdin only to learn that the parent has gone (end of file).
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rag.documents.parsers.zygote", self.address], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=environment, cwd=_BACKEND_DIR,
        )
        assert self.process.stdout is not None
        ready = selectors.DefaultSelector()
        ready.register(self.process.stdout, selectors.EVENT_READ)
        started = bool(ready.select(_ZYGOTE_START_S)) and self.process.stdout.readline() == b"ready\n"
        self.process.stdout.close()
        if not started:
            self.close()
            raise OSError("the document parser process did not start")

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_zygote: _Zygote | None = None
_zygote_lock = threading.Lock()


def _close_zygote() -> None:
    with _zygote_lock:
        if _zygote is not None:
            _zygote.close()


atexit.register(_close_zygote)


def _connected() -> socket.socket:
    """A connection to a fresh child of the zygote, starting the zygote first, or again when it
    has died or stopped answering."""
    global _zygote
    with _zygote_lock:
        for attempt in range(2):
            if _zygote is None or not _zygote.alive():
                if _zygote is not None:
                    _zygote.close()
                _zygote = _Zygote()
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                connection.connect(_zygote.address)
                return connection
            except OSError:
                connection.close()
                _zygote.close()
                if attempt:
                    raise
    raise AssertionError("unreachable")


def _ask_a_child(request: bytes, wait_s: float) -> bytes:
    """Send one file to a new child and read its answer; empty when it ended without one."""
    connection = _connected()
    chunks = []
    with connection:
        try:
            connection.settimeout(wait_s)
            connection.sendall(request)
            connection.shutdown(socket.SHUT_WR)
            while block := connection.recv(1 << 20):
                chunks.append(block)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return b""
    return b"".join(chunks)


_FORMAT_NAMES = {PDF: "PDF", DOCX: "DOCX", HTML: "HTML", MARKDOWN: "Markdown"}


def _error(filename: str, template: str, code: str, context: dict[str, Any]) -> DocumentParseError:
    error = DocumentParseError(template, code=code, context=context)
    error.filename = filename
    return error
