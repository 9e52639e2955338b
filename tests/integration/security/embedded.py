"""The embedded server as ``make run`` starts it (daphne, SQLite, local Chroma, the thread-pool
jobs), in a data directory of its own, driven from a test.

The test process has its own Django settings (the test database), so everything about the
server's data directory is done by child processes of this module::

    python -m tests.integration.security.embedded prepare '{"chunk_size": 200, ...}'
    python -m tests.integration.security.embedded inspect <document id>
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.server import daphne_command

ROOT = Path(__file__).resolve().parents[3]
CREDENTIALS_KEY = "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY="
CSRF_TOKEN = "embeddedservercsrftoken" + "0" * 9
USERNAME = "embedded"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class EmbeddedServer:
    """A daphne process over ``data_dir``; ``start`` again after ``kill`` restarts it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.log = data_dir / "server.log"
        self.session = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        keep = {name: value for name, value in os.environ.items()
                if name not in ("DATABASE_URL", "REDIS_URL", "CHROMA_URL", "TRELLIS_JOBS_BACKEND")}
        return {**keep, "TRELLIS_DATA_DIR": str(self.data_dir), "DJANGO_SETTINGS_MODULE": "config.settings",
                "SECRET_KEY": "embedded-server-test-secret", "DEBUG": "0", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False", "LOG_LEVEL": "WARNING",
                "TRELLIS_CREDENTIALS_KEY": CREDENTIALS_KEY, "PYTHONPATH": f"{ROOT / 'backend'}{os.pathsep}{ROOT}"}

    def run(self, command: str, *arguments: str, timeout: float = 300) -> Any:
        """Run a command of this module against the data directory; returns its JSON answer."""
        done = subprocess.run([sys.executable, "-m", "tests.integration.security.embedded", command, *arguments],
                              env=self.env(), cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{command} failed:\n{done.stderr[-3000:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])

    def prepare(self, **options: Any) -> dict[str, Any]:
        prepared = self.run("prepare", json.dumps(options))
        self.session = prepared["session"]
        return prepared

    def start(self, timeout: float = 180) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                daphne_command(self.port),
                env=self.env(), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"daphne exited with {self.process.returncode}:\n{self.log_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/api/v1/auth/session/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError(f"daphne did not answer within {timeout} s:\n{self.log_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: no clean-up handler runs, as in a power cut or the OOM killer."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def client(self) -> httpx.Client:
        """Signed in with the prepared session, with the CSRF token writes need."""
        return httpx.Client(base_url=self.url, timeout=120, headers={"X-CSRFToken": CSRF_TOKEN, "Referer": self.url},
                            cookies={"sessionid": self.session, "csrftoken": CSRF_TOKEN})

    def database(self) -> Path:
        return self.data_dir / "trellis.sqlite3"


# -- commands run in the child process, against the server's data directory ----------------------

def _prepare(options: dict[str, Any]) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from chat.services import conversation_create
    from knowledge.services import knowledge_base_create
    from pipelines.services import pipeline_create

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(username=USERNAME, password="embedded server password")
    knowledge_base = knowledge_base_create(owner=user, name="Orchard", chunker={
        "component": "RecursiveCharacterChunker",
        "params": {"chunk_size": options.get("chunk_size", 200), "chunk_overlap": 0}})
    answer: dict[str, Any] = {"knowledge_base": knowledge_base.pk}
    if options.get("llm_url"):
        pipeline = pipeline_create(owner=user, name="Keyword", knowledge_base=knowledge_base, strategy={
            "component": "NaiveRAG", "params": {
                "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
                "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": {
                    "component": "OpenAICompatibleLLM", "params": {"base_url": options["llm_url"], "model": "m"}}}}}})
        answer["pipeline"] = pipeline.pk
        answer["conversations"] = [conversation_create(owner=user, pipeline=pipeline).pk
                                   for _ in range(options.get("conversations", 0))]
    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    answer["session"] = session.session_key
    return answer


def _inspect(document_id: int) -> dict[str, Any]:
    """The document's row, its chunk rows, its vectors in Chroma, and what a BM25 index built
    now over the knowledge base holds of it."""
    from knowledge.models import Chunk, Document, VectorIndex
    from knowledge.runtime import chroma_store, retriever_infra
    from rag.components import load_components
    from rag.core import build

    document = Document.objects.select_related("knowledge_base").get(pk=document_id)
    knowledge_base = document.knowledge_base
    chunk_ids = sorted(Chunk.objects.filter(document=document).values_list("id", flat=True))
    vectors: list[int] = []
    for index in VectorIndex.objects.filter(knowledge_base=knowledge_base):
        collection = chroma_store().collection(knowledge_base.pk, index.model_key, index.metric)
        vectors += sorted(chunk for chunk, in zip(collection._collection.get(
            where={"document_id": document_id}, include=[])["ids"]))
    infra = retriever_infra(knowledge_base)
    bm25 = build({"component": "BM25Retriever", "params": {"top_k": 5}}, kind="retriever",
                 registry=load_components(), infra=infra)
    bm25_documents = sorted(set(infra["chunks"]))
    hits, _ = bm25.retrieve("orchard sentence pruning")
    return {"status": document.status, "attempt": document.attempt, "chunk_ids": chunk_ids,
            "vector_ids": sorted(int(chunk) for chunk in vectors), "bm25_documents": bm25_documents,
            "bm25_hit_documents": sorted({hit.document_id for hit in hits}),
            "content_version": knowledge_base.content_version, "error": document.error}


def main() -> None:
    import django

    sys.path[:0] = [str(ROOT / "backend"), str(ROOT)]
    django.setup()
    command, *arguments = sys.argv[1:]
    if command == "prepare":
        print(json.dumps(_prepare(json.loads(arguments[0]) if arguments else {})))
    elif command == "inspect":
        print(json.dumps(_inspect(int(arguments[0]))))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
