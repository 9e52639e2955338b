"""A real OpenAI-compatible HTTP server on loopback, answering from a script.

Tests drive the official ``openai`` client against it, so the request and response shapes are
the ones production code meets. Responses are scripted per path, in order::

    with ScriptedOpenAIServer() as server:
        server.enqueue("/v1/chat/completions", {"id": "c1", "object": "chat.completion", ...})
        server.enqueue("/v1/chat/completions", ScriptedStream([chunk1, chunk2]))
        server.enqueue("/v1/embeddings", ScriptedError(500, {"error": {"message": "boom"}}))
        client = OpenAI(base_url=server.base_url, api_key="k")

A scripted dict is sent as-is with status 200. Unscripted, ``POST /v1/embeddings`` answers
deterministic unit vectors (seeded by each text; ``dimensions`` honoured, 8 by default; float
or base64 as ``encoding_format`` asks), ``GET /v1/models`` lists one model, and anything else
answers 500 with a body saying nothing was scripted, so a test notices.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

import numpy as np

DEFAULT_DIMENSIONS = 8
MODEL_NAME = "scripted-model"


@dataclass(frozen=True)
class ScriptedError:
    """Answer with ``status`` and ``body`` (JSON when not a string). ``headers`` are added, e.g.
    ``{"retry-after-ms": "1"}`` so the client's retries do not slow a test down."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ScriptedStream:
    """Answer with Server-Sent Events: one ``data: {chunk}`` per chunk, then ``data: [DONE]``
    (left out when ``done`` is false, to imitate a stream that breaks off).

    When the request asks ``stream_options: {"include_usage": true}``, a last chunk with no
    choices reports ``usage``, as OpenAI, vLLM and llama.cpp do: ``"count"`` counts the words of
    the request's messages as prompt tokens and the content chunks as completion tokens; a dict is
    sent as given; None sends none (a server that does not count)."""

    chunks: list[dict[str, Any]]
    done: bool = True
    interval: float = 0.0
    usage: Any = "count"


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (cut short when the server stops), then send ``response``."""

    seconds: float
    response: Any


class RecordedRequest(NamedTuple):
    """A request the server received; ``headers`` has lower-case names, ``body`` is the parsed
    JSON (the raw text when it is not JSON, None when empty)."""

    path: str
    body: Any
    headers: dict[str, str]


def embedding_for(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """The unit vector the server returns for ``text`` when nothing is scripted."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimensions).astype(np.float32)
    return (vector / np.linalg.norm(vector)).tolist()


class ScriptedOpenAIServer:
    """An OpenAI-compatible server in a background thread on ``127.0.0.1`` (a free port).

    Use it as a context manager, or call ``start()`` and ``stop()``.

    Attributes
    ----------
    base_url : str
        ``http://127.0.0.1:PORT/v1``, for ``OpenAI(base_url=...)``.
    requests : list of RecordedRequest
        Every request received, in order.
    """

    def __init__(self, *, default_answer: list[str] | None = None, record: bool = True) -> None:
        """``default_answer``: deltas every unscripted chat completion answers with (streamed
        when asked to stream), for load tests; ``record=False`` keeps no request log."""
        self.default_answer = default_answer
        self.record = record
        self.requests: list[RecordedRequest] = []
        self._script: dict[str, collections.deque[Any]] = collections.defaultdict(collections.deque)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() quick; shutdown() waits for the next poll.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        assert self._thread is not None
        self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running; call start()")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- the script -------------------------------------------------------------------------

    def enqueue(self, path: str, response: Any) -> None:
        """Answer the next unanswered request to ``path`` (e.g. ``"/v1/embeddings"``) with
        ``response``: a JSON-able dict, a ``ScriptedError``, a ``ScriptedStream`` or a ``Delay``."""
        with self._lock:
            self._script[_clean_path(path)].append(response)

    def pending(self, path: str | None = None) -> int:
        """How many scripted responses are still waiting (for ``path``, or in all)."""
        with self._lock:
            if path is not None:
                return len(self._script.get(_clean_path(path), ()))
            return sum(len(queue) for queue in self._script.values())

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.path == _clean_path(path)]

    def _record_and_choose(self, method: str, request: RecordedRequest) -> Any:
        with self._lock:
            if self.record:
                self.requests.append(request)
            queue = self._script.get(request.path)
            if queue:
                return queue.popleft()
        if self.default_answer is not None and method == "POST" and request.path == "/v1/chat/completions":
            wants_stream = isinstance(request.body, dict) and request.body.get("stream")
            return chat_stream(self.default_answer) if wants_stream else chat_response("".join(self.default_answer))
        return self._unscripted(method, request)

    @staticmethod
    def _unscripted(method: str, request: RecordedRequest) -> Any:
        if method == "POST" and request.path == "/v1/embeddings" and isinstance(request.body, dict):
            return _default_embeddings(request.body)
        if method == "GET" and request.path == "/v1/models":
            return {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "created": 0,
                                                "owned_by": "scripted"}]}
        return ScriptedError(500, {"error": {
            "message": f"ScriptedOpenAIServer: nothing scripted for {method} {request.path}",
            "type": "scripted_server_error", "param": None, "code": None}})


def _clean_path(path: str) -> str:
    path = path.split("?", 1)[0]
    return path if path.startswith("/") else f"/{path}"


def _default_embeddings(body: dict[str, Any]) -> Any:
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(text, str) for text in texts):
        return ScriptedError(400, {"error": {"message": "'input' must be a string or a non-empty list of strings",
                                             "type": "invalid_request_error", "param": "input", "code": None}})
    dimensions = body.get("dimensions") or DEFAULT_DIMENSIONS
    data = []
    for index, text in enumerate(texts):
        vector = embedding_for(text, dimensions)
        if body.get("encoding_format") == "base64":
            encoded: Any = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")
        else:
            encoded = vector
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(len(text.split()) for text in texts)
    return {"object": "list", "data": data, "model": body.get("model", MODEL_NAME),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _handler_for(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def do_DELETE(self) -> None:
            self._answer("DELETE")

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8") if length else ""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = RecordedRequest(_clean_path(self.path), body, headers)
            self._send(server._record_and_choose(method, request), request)

        def _send(self, response: Any, request: RecordedRequest) -> None:
            if isinstance(response, Delay):
                if server._stopping.wait(response.seconds):
                    self.close_connection = True
                    return
                self._send(response.response, request)
            elif isinstance(response, ScriptedStream):
                self._stream(response, request)
            elif isinstance(response, ScriptedError):
                self._json(response.status, response.body if response.body is not None else {
                    "error": {"message": f"scripted HTTP {response.status}", "type": "scripted_error",
                              "param": None, "code": None}}, response.headers)
            else:
                self._json(200, response)

        def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            text = body if isinstance(body, str) else json.dumps(body)
            payload = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, stream: ScriptedStream, request: RecordedRequest) -> None:
            chunks = list(stream.chunks)
            options = request.body.get("stream_options") if isinstance(request.body, dict) else None
            asked = isinstance(options, dict) and options.get("include_usage")
            if asked and stream.usage is not None and stream.done and chunks:
                chunks.append({**{key: chunks[0][key] for key in ("id", "object", "created", "model")},
                               "choices": [], "usage": _stream_usage(stream, request.body)})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            # Without a length, the end of the body is the end of the connection.
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in chunks:
                if stream.interval and server._stopping.wait(stream.interval):
                    return
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            if stream.done:
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing left to answer

    return Handler


def _stream_usage(stream: ScriptedStream, body: dict[str, Any]) -> dict[str, int]:
    if isinstance(stream.usage, dict):
        usage = dict(stream.usage)
    else:
        prompt = sum(len(str(message.get("content") or "").split()) for message in body.get("messages") or [])
        written = sum(1 for chunk in stream.chunks for choice in chunk.get("choices") or []
                      if (choice.get("delta") or {}).get("content"))
        usage = {"prompt_tokens": prompt, "completion_tokens": written}
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return usage


def chat_response(content: str, *, model: str = MODEL_NAME, usage: dict[str, int] | None = None) -> dict[str, Any]:
    """A ``chat.completion`` whose message is ``content``; ``usage`` (default 1 read, 1 written)."""
    counts = usage or {"prompt_tokens": 1, "completion_tokens": 1}
    return {
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {**counts, "total_tokens": counts["prompt_tokens"] + counts["completion_tokens"]},
    }


def tool_call_response(name: str, arguments: Any, *, model: str = MODEL_NAME) -> dict[str, Any]:
    """A ``chat.completion`` calling tool ``name``; ``arguments`` is sent as given when it is a
    string (so tests can send malformed JSON), else JSON-encoded."""
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": encoded}}],
        }}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def chat_stream(deltas: list[str], *, model: str = MODEL_NAME, done: bool = True,
                interval: float = 0.0, usage: Any = "count") -> ScriptedStream:
    """A streamed answer made of ``deltas``; ``usage`` as ``ScriptedStream`` reports it."""
    chunks = [{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    chunks += [{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": None}]} for delta in deltas]
    chunks.append({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model,
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return ScriptedStream(chunks, done=done, interval=interval, usage=usage)
