"""Hostile and broken uploads through the real REST API, into a knowledge base that also holds
good documents: each bad file fails alone with a readable reason, nothing is written outside
the data directory, no parser reads a local file or the network, the job workers survive, and
the good documents stay ready and searchable."""

from __future__ import annotations

import os
import re
import socket
import threading
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from knowledge.models import Chunk, Document, KnowledgeBase, VectorIndex
from knowledge.runtime import chroma_store, retriever_infra
from knowledge.services.documents import upload_dir
from rag.components import load_components
from rag.core import build

from ..knowledge.conftest import text_file, upload, wait_for_jobs
from .hostile_files import MEGABYTE, HostileFile, Limits, hostile_corpus, large_corpus

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LIMITS = Limits(max_upload_bytes=8 * MEGABYTE, max_pages=1000, max_characters=2_000_000, max_chunks=500,
                chunk_size=200)
CHUNKER = {"component": "RecursiveCharacterChunker", "params": {"chunk_size": LIMITS.chunk_size, "chunk_overlap": 20}}
STORED_NAME = re.compile(r"[0-9a-f]{64}-[0-9a-f]{8}")

GOOD = {
    "orchard.txt": "Apple trees on dwarfing rootstock bear fruit in their third year. Thin the fruitlets in June "
                   "so that each cluster keeps one apple.",
    "vines.md": "# Grapevines\n\nGrapevines are pruned hard in winter to two buds per spur. The cordon is tied "
                "along a horizontal wire.",
}


class Probe:
    """A loopback listener that counts connections: any parser fetching a URL shows up here."""

    def __init__(self) -> None:
        self.connections = 0
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/entity.dtd"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


@pytest.fixture
def probe():
    listener = Probe()
    yield listener
    listener.close()


@pytest.fixture
def limits(settings):
    settings.TRELLIS_MAX_UPLOAD_BYTES = LIMITS.max_upload_bytes
    settings.TRELLIS_MAX_PAGES = LIMITS.max_pages
    settings.TRELLIS_MAX_CHARACTERS = LIMITS.max_characters
    settings.TRELLIS_MAX_CHUNKS_PER_DOCUMENT = LIMITS.max_chunks
    # Short, so the files built to exhaust a parser cost seconds, not the default two minutes.
    settings.TRELLIS_PARSE_TIMEOUT_S = 5
    return settings


def as_upload(file: HostileFile) -> SimpleUploadedFile:
    return SimpleUploadedFile(file.name, file.data, content_type=file.content_type)


def upload_one(api, knowledge_base_id: int, file: HostileFile) -> dict:
    """Upload ``file`` alone; check the response of the upload itself; returns the document (or
    the rejection)."""
    response = upload(api, knowledge_base_id, as_upload(file))
    body = response.json()
    if file.outcome == "rejected":
        assert response.status_code == 413, f"{file.name}: {response.status_code} {body}"
        [rejected] = body["rejected"]
        return rejected
    assert response.status_code == 201, f"{file.name}: {response.status_code} {body}"
    assert body["rejected"] == [], f"{file.name} was rejected at upload: {body['rejected']}"
    [document] = body["documents"]
    return document


def vector_ids(knowledge_base: KnowledgeBase) -> set[int]:
    index = VectorIndex.objects.get(knowledge_base=knowledge_base)
    return chroma_store().collection(knowledge_base.pk, index.model_key, index.metric).chunk_ids()


def search(knowledge_base: KnowledgeBase, query: str) -> list[str]:
    """Names of the documents a hybrid (BM25 + dense) search returns, best first."""
    knowledge_base.refresh_from_db()
    retriever = build({"component": "EnsembleRetriever", "params": {"top_k": 3, "children": [
        {"component": "BM25Retriever", "params": {"top_k": 3}},
        {"component": "DenseEmbeddingRetriever", "params": {"top_k": 3}},
    ]}}, kind="retriever", registry=load_components(), infra=retriever_infra(knowledge_base))
    chunks, _ = retriever.retrieve(query)
    names = dict(Document.objects.filter(knowledge_base=knowledge_base).values_list("id", "name"))
    return [names[chunk.document_id] for chunk in chunks]


def check_outcome(file: HostileFile, document: dict, everything: str) -> None:
    """``document`` as the API lists it after ingestion, against what ``file`` expects."""
    name = file.display_name or file.name
    codes = file.code if isinstance(file.code, tuple) else (file.code,)
    if file.outcome == "rejected":
        assert document["code"] in codes, f"{name}: {document}"
        reason = document["reason"]
    elif file.outcome == "failed":
        assert document["status"] == "failed", f"{name} is {document['status']}, expected failed ({file.code})"
        assert document["error_code"] in codes, f"{name}: {document['error_code']} ({document['error']})"
        assert document["chunk_count"] == 0
        reason = document["error"]
    else:
        assert document["status"] == "ready", f"{name} is {document['status']}: {document['error']}"
        assert document["name"] == name, f"shown as {document['name']!r}, expected {name!r}"
        reason = ""
    for word in file.words:
        assert word in reason, f"{name}: {word!r} not in the reason {reason!r}"
    assert "Traceback" not in reason and "File \"" not in reason, f"{name}: a stack trace in {reason!r}"
    for secret in file.absent:
        assert secret not in everything, f"{name}: {secret!r} reached a chunk or a reason"


def test_hostile_files_fail_alone_and_leave_the_knowledge_base_working(api, create_knowledge_base, limits,
                                                                       probe, tmp_path):
    token = f"trellis-escape-{uuid.uuid4().hex[:12]}"
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET, outside the data directory")
    corpus = hostile_corpus(limits=LIMITS, secret_file=str(secret), probe_url=probe.url, escape_token=token)
    assert len(corpus) >= 20

    knowledge_base = create_knowledge_base(chunker=CHUNKER)
    good = [SimpleUploadedFile(name, text.encode(), content_type="text/plain") for name, text in GOOD.items()]
    assert upload(api, knowledge_base["id"], *good).status_code == 201
    wait_for_jobs()
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    good_documents = {document.name: document for document in Document.objects.filter(knowledge_base=row)}
    assert {document.status for document in good_documents.values()} == {"ready"}
    good_chunks = set(Chunk.objects.filter(knowledge_base=row).values_list("id", flat=True))
    assert good_chunks and vector_ids(row) == good_chunks

    outcomes: dict[str, dict] = {}
    for file in corpus:
        outcomes[file.name] = upload_one(api, knowledge_base["id"], file)
    wait_for_jobs()
    # Files that need a larger upload limit to reach their parser at all.
    limits.TRELLIS_MAX_UPLOAD_BYTES = 64 * MEGABYTE
    limits.TRELLIS_MAX_CHARACTERS = 64_000_000
    large = large_corpus()
    for file in large:
        outcomes[file.name] = upload_one(api, knowledge_base["id"], file)
    wait_for_jobs()

    listed = {document["id"]: document for document in
              api.get(reverse("document-list", args=[knowledge_base["id"]])).json()}
    chunk_texts = "\n".join(Chunk.objects.filter(knowledge_base=row).values_list("text", flat=True))
    everything = chunk_texts + "\n".join(document["error"] or "" for document in listed.values())
    for file in corpus + large:
        outcome = outcomes[file.name]
        check_outcome(file, outcome if file.outcome == "rejected" else listed[outcome["id"]], everything)

    # Failed documents left no chunk and no vector; the good ones kept theirs.
    failed = [document["id"] for document in listed.values() if document["status"] == "failed"]
    assert len(failed) == sum(file.outcome == "failed" for file in corpus + large)
    assert not Chunk.objects.filter(document_id__in=failed).exists()
    ready_chunks = set(Chunk.objects.filter(knowledge_base=row, document__status="ready").values_list("id", flat=True))
    assert vector_ids(row) == ready_chunks and good_chunks <= ready_chunks
    for document in good_documents.values():
        document.refresh_from_db()
        assert document.status == "ready", f"{document.name} became {document.status}"
    assert search(row, "How are grapevines pruned in winter?")[0] == "vines.md"
    assert search(row, "When should apple fruitlets be thinned?")[0] == "orchard.txt"

    # No parser fetched a URL or read the file an entity pointed at.
    assert probe.connections == 0, f"a parser contacted {probe.url} {probe.connections} time(s)"

    # Nothing was written outside the data directory: stored files are named by digest, inside
    # the knowledge base's upload folder; the traversal's targets do not exist.
    stored = {path.name for path in upload_dir(row.pk).iterdir()}
    assert all(STORED_NAME.fullmatch(name) for name in stored), stored
    assert all(Path(django_settings.DATA_DIR, file).resolve().is_relative_to(upload_dir(row.pk).resolve())
               for file in Document.objects.filter(knowledge_base=row).values_list("file", flat=True))
    for file in corpus:
        if token in file.name:
            target = (upload_dir(row.pk) / file.name.replace("\\", "/")).resolve()
            assert not target.exists(), f"{target} was written"
    for root in (Path("/tmp"), Path(django_settings.DATA_DIR), Path(django_settings.BASE_DIR)):
        for directory, folders, files in os.walk(root):
            folders[:] = [folder for folder in folders if folder not in (".venv", "node_modules", ".git")]
            assert not [name for name in files + folders if token in name], f"{token} written under {directory}"
            if directory.count(os.sep) - str(root).count(os.sep) >= 3:
                folders[:] = []
    assert Path(django_settings.FILE_UPLOAD_TEMP_DIR).resolve().is_relative_to(Path(django_settings.DATA_DIR))

    # The workers survived: a later upload is ingested.
    later = upload(api, knowledge_base["id"], text_file("later.txt", topic="Medlars"))
    assert later.status_code == 201
    wait_for_jobs()
    assert Document.objects.get(pk=later.json()["documents"][0]["id"]).status == "ready"
    assert "later.txt" in search(row, "Medlars trellis morning sun")


def test_a_chunker_longer_than_the_chunk_limit_is_refused_with_its_path(api, settings):
    settings.TRELLIS_MAX_CHUNK_CHARACTERS = 5_000
    response = api.post(reverse("knowledge-base-list"), {"name": "Long chunks", "chunker": {
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 6_000, "chunk_overlap": 0}}},
        content_type="application/json")
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["path"] == "chunker.params.chunk_size"
    assert "5000" in error["message"] and "TRELLIS_MAX_CHUNK_CHARACTERS" in error["message"]
    assert not KnowledgeBase.objects.exists()
    accepted = api.post(reverse("knowledge-base-list"), {"name": "Fits", "chunker": {
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 5_000, "chunk_overlap": 0}}},
        content_type="application/json")
    assert accepted.status_code == 201, accepted.content


def test_a_document_chunked_past_the_chunk_limit_fails_with_the_limit(api, create_knowledge_base, settings):
    knowledge_base = create_knowledge_base(chunker={"component": "RecursiveCharacterChunker",
                                                    "params": {"chunk_size": 1_000, "chunk_overlap": 0}})
    # Lowered after the knowledge base was made (an operator tightening the limit).
    settings.TRELLIS_MAX_CHUNK_CHARACTERS = 300
    document = upload(api, knowledge_base["id"], text_file("long.txt", paragraphs=8)).json()["documents"][0]
    wait_for_jobs()
    row = Document.objects.get(pk=document["id"])
    assert (row.status, row.error_code) == ("failed", "chunk_too_long")
    assert "300" in row.error and "characters" in row.error
