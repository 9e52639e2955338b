"""Helpers for the slot component tests: hits, an LLM on the scripted server, and a recording
HTTP server standing in for the web search APIs."""

from __future__ import annotations

import collections
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rag.documents.models import Chunk
from rag.llms import OpenAICompatibleLLM
from rag.retrievers import Hit


def make_hits(*texts: str, first_id: int = 1) -> list[Hit]:
    """Hits for ``texts`` in order, chunk ids from ``first_id``, scores 1, 1/2, 1/3..."""
    return [Hit(Chunk(id=first_id + index, document_id=1, position=index, text=text), 1.0 / (index + 1),
                ({"child": 0, "rank": index + 1},))
            for index, text in enumerate(texts)]


def scripted_llm(server: Any, **params: Any) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(base_url=server.base_url, model="m", function_calling="tools", **params)


def chat_bodies(server: Any) -> list[dict[str, Any]]:
    return [request.body for request in server.requests_to("/v1/chat/completions")]


def user_message(body: dict[str, Any], index: int = 1) -> str:
    return body["messages"][index]["content"]


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay: float = 0.0


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any = None


@dataclass
class RecordingHTTPServer:
    """An HTTP server on 127.0.0.1 that records every request and answers from a queue of
    ``Reply`` (JSON bodies; a ``str`` body is sent as text). Unscripted requests get HTTP 500."""

    requests: list[Received] = field(default_factory=list)
    replies: collections.deque[Reply] = field(default_factory=collections.deque)

    def __post_init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def reply(self, body: Any = None, *, status: int = 200, delay: float = 0.0) -> RecordingHTTPServer:
        self.replies.append(Reply(status, body, delay))
        return self

    def __enter__(self) -> RecordingHTTPServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(server: RecordingHTTPServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8") if length else ""
            parts = urlsplit(self.path)
            server.requests.append(Received(
                method, parts.path, parse_qs(parts.query),
                {name.lower(): value for name, value in self.headers.items()}, json.loads(raw) if raw else None,
            ))
            reply = server.replies.popleft() if server.replies else Reply(500, {"message": "nothing scripted"})
            if reply.delay:
                time.sleep(reply.delay)
            text = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            payload = text.encode("utf-8")
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/plain" if isinstance(reply.body, str) else "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

    return Handler
