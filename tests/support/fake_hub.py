"""A Hugging Face Hub on loopback, for the tests that install models.

It speaks the endpoints ``huggingface_hub`` uses to download a model repository:
``GET /api/models/<repo>[/revision/<revision>]?blobs=true`` (``HfApi.model_info`` with file
sizes, git blob ids and LFS SHA-256s) and ``HEAD``/``GET /<repo>/resolve/<revision>/<file>``
(``hf_hub_download``: ``X-Repo-Commit`` and ``ETag`` headers, ``Range`` requests for resuming),
with the hub's ``X-Error-Code`` answers for unknown repositories, revisions and files. Point
``HF_ENDPOINT`` (or ``endpoint=``) at ``hub.url``.

Repositories are folders the tests build (``tests/support/tiny_models.py``); ``cut_once`` makes
the first download of a file stop after some bytes, as a dropped connection does, and ``delay_s``
slows every block sent, so progress can be watched.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".gguf", ".onnx")
BLOCK = 16 * 1024


@dataclass
class RepoFile:
    path: str
    data: bytes

    @property
    def lfs(self) -> bool:
        return self.path.endswith(LFS_SUFFIXES)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def blob_id(self) -> str:
        return hashlib.sha1(f"blob {len(self.data)}\0".encode() + self.data).hexdigest()

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.blob_id


@dataclass
class Repo:
    repo_id: str
    commit: str
    files: dict[str, RepoFile]
    license: str | None = None
    gated: bool = False


@dataclass
class Request:
    method: str
    path: str
    range: str | None


@dataclass
class FakeHub:
    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    cut_once: dict[str, int] = field(default_factory=dict)
    """``{file path: bytes}``: the first GET of that file sends this many bytes and hangs up."""
    corrupt: set[str] = field(default_factory=set)
    """Files served with their first byte flipped (their checksums no longer match)."""
    delay_s: float = 0.0
    _server: ThreadingHTTPServer | None = None

    def add_repo(self, repo_id: str, folder: Path, *, license: str | None = None, gated: bool = False) -> Repo:
        """Serve every file under ``folder`` as the repository ``repo_id`` at one commit."""
        files = {path.relative_to(folder).as_posix(): RepoFile(path.relative_to(folder).as_posix(), path.read_bytes())
                 for path in sorted(folder.rglob("*")) if path.is_file()}
        commit = hashlib.sha1("".join(f"{name}:{item.etag}" for name, item in files.items()).encode()).hexdigest()
        repo = self.repos[repo_id] = Repo(repo_id, commit, files, license, gated)
        return repo

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the hub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def downloads_of(self, path: str) -> list[Request]:
        return [request for request in self.requests if request.method == "GET" and request.path.endswith(f"/{path}")
                and "/resolve/" in request.path]

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_HEAD(self) -> None:
                hub._serve(self, head=True)

            def do_GET(self) -> None:
                hub._serve(self, head=False)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-hub", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the endpoints ------------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler, *, head: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        self.requests.append(Request("HEAD" if head else "GET", path, handler.headers.get("Range")))
        info = re.fullmatch(r"/api/models/(?P<repo>.+?)(/revision/(?P<revision>[^/]+))?", path)
        if info:
            return self._model_info(handler, info["repo"], info["revision"] or "main")
        resolve = re.fullmatch(r"/(?P<repo>.+?)/resolve/(?P<revision>[^/]+)/(?P<file>.+)", path)
        if resolve:
            return self._file(handler, resolve["repo"], resolve["revision"], resolve["file"], head=head)
        self._error(handler, 404, "RepoNotFound", "Repository not found")

    def _repo(self, handler: BaseHTTPRequestHandler, repo_id: str, revision: str) -> Repo | None:
        repo = self.repos.get(repo_id)
        if repo is None:
            self._error(handler, 404, "RepoNotFound", "Repository not found")
            return None
        if repo.gated:
            self._error(handler, 403, "GatedRepo", "Access to this model is restricted")
            return None
        if revision not in ("main", repo.commit):
            self._error(handler, 404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return None
        return repo

    def _model_info(self, handler: BaseHTTPRequestHandler, repo_id: str, revision: str) -> None:
        repo = self._repo(handler, repo_id, revision)
        if repo is None:
            return
        siblings = []
        for item in repo.files.values():
            sibling = {"rfilename": item.path, "size": len(item.data), "blobId": item.blob_id}
            if item.lfs:
                sibling["lfs"] = {"size": len(item.data), "sha256": item.sha256, "pointerSize": 134}
            siblings.append(sibling)
        body = {"_id": repo.commit[:24], "id": repo_id, "modelId": repo_id, "sha": repo.commit, "private": False,
                "gated": False, "disabled": False, "tags": [], "siblings": siblings,
                "cardData": {"license": repo.license} if repo.license else None}
        self._send(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def _file(self, handler: BaseHTTPRequestHandler, repo_id: str, revision: str, name: str, *, head: bool) -> None:
        repo = self._repo(handler, repo_id, revision)
        if repo is None:
            return
        item = repo.files.get(name)
        if item is None:
            self._error(handler, 404, "EntryNotFound", f"{name} does not exist")
            return
        data = item.data
        if name in self.corrupt:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        headers = {"X-Repo-Commit": repo.commit, "ETag": f'"{item.etag}"', "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        start, status = 0, 200
        requested = re.fullmatch(r"bytes=(\d+)-", handler.headers.get("Range") or "")
        if requested and not head:
            start, status = int(requested.group(1)), 206
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        headers["Content-Length"] = str(len(body))
        if head:
            self._send(handler, 200, b"", headers, length=len(data))
            return
        cut = self.cut_once.pop(name, None) if start == 0 else None
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        sent = 0
        for offset in range(0, len(body), BLOCK):
            block = body[offset:offset + BLOCK]
            if cut is not None and sent + len(block) > cut:
                handler.wfile.write(block[:cut - sent])
                handler.wfile.flush()
                handler.close_connection = True
                return
            if self.delay_s:
                time.sleep(self.delay_s)
            handler.wfile.write(block)
            sent += len(block)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str],
              length: int | None = None) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            if key != "Content-Length":
                handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body) if length is None else length))
        handler.end_headers()
        if body:
            handler.wfile.write(body)

    def _error(self, handler: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
        self._send(handler, status, json.dumps({"error": message}).encode(),
                   {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message})
