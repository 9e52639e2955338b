"""The zygote of ``parse_document_isolated``: run as ``python -m rag.documents.parsers.zygote
<socket>`` by the parent, it imports the parsers once, then forks a fresh child for every
connection. A child reads one file, sets its alarm and address-space limit, parses, writes the
answer as JSON and exits; the zygote itself never parses anything."""

from __future__ import annotations

import importlib
import json
import math
import os
import resource
import selectors
import signal
import socket
import sys
from typing import Any

from rag.core.i18n import gettext_noop

from ..errors import DocumentParseError
from .base import ParseLimits, readable_size
from .parse import parse_document

PRELOADED = ("markdown", "bs4", "pypdf", "docx", "charset_normalizer")
"""The parsers' libraries, imported by the zygote so that no child pays for them."""


def _answer(header: dict[str, Any], data: bytes) -> bytes:
    """The parsed document, or the refusal, as the JSON the parent reads."""
    memory = header["memory_bytes"]
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
    except Exception as exc:  # a parser library's own bug: this file fails, with what broke
        answer = {"error": {"template": gettext_noop("the {format} parser stopped unexpectedly"),
                            "code": "parser_crashed",
                            "context": {"format": header["format"], "detail": f"{type(exc).__name__}: {exc}"[:160]}}}
    return json.dumps(answer, ensure_ascii=False).encode("utf-8")


_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""What ends the zygote from outside: ``kill`` of its process group, Ctrl-C in a terminal, a closed
terminal. It reaches the parent too, which may die without running its atexit."""


def _serve_one_file(connection: socket.socket) -> None:
    """In a forked child: read the request, parse within the limits, write the answer."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for ending in _ENDING_SIGNALS:  # a child ended from outside leaves the zygote's socket alone
        signal.signal(ending, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _ENDING_SIGNALS)
    stream = connection.makefile("rb")
    header = json.loads(stream.readline())
    # The default action of SIGALRM ends the process, wherever the parser is.
    signal.alarm(max(1, math.ceil(header["timeout_s"])))
    data = stream.read(header["size"])
    memory = header["memory_bytes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    connection.sendall(_answer(header, data))


def _remove_socket(address: str) -> None:
    """The socket, and its folder if nothing else is in it."""
    for remove, path in ((os.unlink, address), (os.rmdir, os.path.dirname(address))):
        try:
            remove(path)
        except OSError:
            pass


def _zygote_main(address: str) -> int:
    """Import the parsers, then fork one child per connection until the parent goes away."""
    for module in PRELOADED:
        try:
            importlib.import_module(module)
        except ImportError:
            pass  # parse_document reports the missing library for the file that needs it
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel

    def end(signum: int, frame: object) -> None:
        _remove_socket(address)
        os._exit(0)

    for ending in _ENDING_SIGNALS:
        signal.signal(ending, end)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    sys.stdout.buffer.write(b"ready\n")
    sys.stdout.buffer.flush()
    # What a parser library prints goes nowhere, rather than into a pipe nobody reads.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    events.register(sys.stdin.buffer, selectors.EVENT_READ)
    while True:
        for key, _ in events.select():
            if key.fileobj is not listener:
                if not os.read(sys.stdin.fileno(), 1):
                    # The parent has gone; killed, it could not remove the socket and its folder.
                    _remove_socket(address)
                    return 0
                continue
            connection, _ = listener.accept()
            # Blocked across the fork: until the child has its own handlers, a signal waits.
            signal.pthread_sigmask(signal.SIG_BLOCK, _ENDING_SIGNALS)
            if os.fork():
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _ENDING_SIGNALS)
            else:
                status = 1
                try:
                    listener.close()
                    _serve_one_file(connection)
                    status = 0
                finally:
                    os._exit(status)
            connection.close()


if __name__ == "__main__":
    sys.exit(_zygote_main(sys.argv[1]))
