"""Uploading, re-queueing and deleting documents."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F

import jobs
from rag.core import TrellisError
from rag.core.i18n import gettext_noop
from rag.documents.parsers.base import readable_size

from ..models import Document, KnowledgeBase, VectorIndex
from ..runtime import chroma_store
from .events import publish_document_deleted, publish_document_progress

logger = logging.getLogger(__name__)

INGEST_TASK = "knowledge.ingest_document"


@dataclass(frozen=True)
class Rejection:
    """A file that was not accepted, and why."""

    name: str
    code: str
    template: str
    context: dict = field(default_factory=dict)
    document_id: int | None = None

    @property
    def reason(self) -> str:
        return self.template.format(**self.context)


@dataclass
class UploadOutcome:
    accepted: list[Document]
    rejected: list[Rejection]


def upload_dir(knowledge_base_id: int) -> Path:
    return settings.DATA_DIR / "uploads" / f"kb{knowledge_base_id}"


def clean_file_name(raw: str) -> str:
    """A display name from a client's file name: no directories, no control characters.

    The name is only ever shown; stored files are named by their digest, so a hostile name
    cannot choose where a file is written.
    """
    name = re.split(r"[\\/]", raw or "")[-1]
    name = "".join(character for character in name if unicodedata.category(character)[0] != "C").strip()
    name = name.lstrip(".") or "unnamed"
    return name[:255]


def _store(upload: UploadedFile, knowledge_base_id: int) -> tuple[str, str, int]:
    """Stream ``upload`` into the data directory; returns (relative path, sha256, size)."""
    directory = upload_dir(knowledge_base_id)
    directory.mkdir(parents=True, exist_ok=True)
    temporary = directory / f".incoming-{uuid.uuid4().hex}"
    digest = hashlib.sha256()
    size = 0
    with open(temporary, "wb") as handle:
        for piece in upload.chunks():
            digest.update(piece)
            size += len(piece)
            handle.write(piece)
    sha256 = digest.hexdigest()
    final = directory / f"{sha256}-{uuid.uuid4().hex[:8]}"
    os.replace(temporary, final)
    return str(final.relative_to(settings.DATA_DIR)), sha256, size


def documents_upload(
    *, knowledge_base: KnowledgeBase, files: Sequence[UploadedFile], force: bool = False, start: bool = True
) -> UploadOutcome:
    """Store each file and queue it for ingestion.

    A file larger than ``TRELLIS_MAX_UPLOAD_BYTES`` is refused (``too_large``); one whose
    content is already in the knowledge base (same SHA-256) is refused (``duplicate``) unless
    ``force``. Every other file is accepted, whatever happens to the rest. With ``start`` false
    the documents wait, queued, for the server's start-up to pick them up (seeding from a
    command that exits at once).
    """
    limit = settings.TRELLIS_MAX_UPLOAD_BYTES
    accepted: list[Document] = []
    rejected: list[Rejection] = []
    seen: dict[str, Document] = {}
    for upload in files:
        name = clean_file_name(upload.name)
        if upload.size is not None and upload.size > limit:
            rejected.append(Rejection(
                name, "too_large", gettext_noop("the file is {size}, larger than the limit of {limit}"),
                {"size": readable_size(upload.size), "limit": readable_size(limit)},
            ))
            continue
        path, sha256, size = _store(upload, knowledge_base.pk)
        existing = seen.get(sha256) or (
            None if force else knowledge_base.documents.filter(sha256=sha256).order_by("id").first()
        )
        if existing is not None and not force:
            (settings.DATA_DIR / path).unlink(missing_ok=True)
            rejected.append(Rejection(
                name, "duplicate", gettext_noop("the same content is already in this knowledge base as {existing!r}"),
                {"existing": existing.name}, existing.pk,
            ))
            continue
        with transaction.atomic():
            document = Document.objects.create(
                owner=knowledge_base.owner, knowledge_base=knowledge_base, name=name,
                mime=(upload.content_type or "")[:100], size=size, sha256=sha256, file=path,
            )
            publish_document_progress(document)
            if start:
                jobs.enqueue_on_commit(INGEST_TASK, document_id=document.pk, attempt=document.attempt,
                                       owner=document.owner_id)
        seen[sha256] = document
        accepted.append(document)
    return UploadOutcome(accepted, rejected)


def ingestion_subject(document_id: int) -> str:
    """What the job runner counts a document's crashed ingestion runs by (``jobs.crashes``)."""
    return f"document:{document_id}"


def document_requeue(*, document: Document, priority: jobs.Priority = jobs.Priority.USER,
                     after_crash: bool = False) -> Document:
    """Queue ``document`` for ingestion again (a retry after failure, a re-index, or a recovery
    after a crash). Any run still working on it sees a newer attempt and stops. A retry
    (``after_crash`` false) forgets the runs a crash cut short; recovery keeps counting them."""
    with transaction.atomic():
        if not after_crash:
            jobs.forget_crashes(ingestion_subject(document.pk))
        was_ready = Document.objects.filter(pk=document.pk, status=Document.Status.READY).exists()
        Document.objects.filter(pk=document.pk).update(
            attempt=F("attempt") + 1, status=Document.Status.QUEUED, progress_done=0, progress_total=0,
            error="", error_code="", error_template="", error_context={},
        )
        if was_ready:
            KnowledgeBase.objects.filter(pk=document.knowledge_base_id).update(content_version=F("content_version") + 1)
        document.refresh_from_db()
        publish_document_progress(document)
        jobs.enqueue_on_commit(INGEST_TASK, document_id=document.pk, attempt=document.attempt, priority=priority,
                               owner=document.owner_id)
    return document


UNREADABLE_CONTENT = frozenset({
    "damaged", "encrypted", "no_text", "binary", "encoding", "empty", "unsupported_type", "type_mismatch",
    "dtd", "active_content",
})
"""Failure codes that come from the file's bytes alone: the same file fails the same way again.
Other failures may pass on a retry: a crash, a parser timeout, a model not installed yet, a
limit an admin has since raised."""

FILE_UNCHANGED = gettext_noop(
    "the file has not changed since it failed, so it would fail the same way: upload a corrected file")


class RetryRefused(TrellisError):
    """A retry that cannot succeed; ``template`` (translatable) and ``code`` say why."""

    def __init__(self, template: str, code: str) -> None:
        super().__init__(template)
        self.template = template
        self.code = code


def _stored_sha256(document: Document) -> str | None:
    try:
        with open(settings.DATA_DIR / document.file, "rb") as stored:
            return hashlib.file_digest(stored, "sha256").hexdigest()
    except OSError:
        return None


def document_retry(*, document: Document) -> Document:
    """Queue a failed (or stuck queued) document for ingestion again.

    Raises ``RetryRefused`` (code ``unchanged``) when it failed on its own content (unreadable,
    encrypted, without text…) and its stored file has the checksum it failed with: the same bytes
    would fail identically, so the user is told to upload a corrected file instead."""
    if document.status == Document.Status.FAILED and document.error_code in UNREADABLE_CONTENT \
            and _stored_sha256(document) == document.sha256:
        raise RetryRefused(FILE_UNCHANGED, "unchanged")
    return document_requeue(document=document)


def document_fail(*, document: Document, template: str, code: str, context: dict | None = None) -> None:
    """Mark ``document``'s current attempt failed with a readable reason, dropping what it wrote."""
    from .ingestion import Run, _fail

    _fail(Run(document), template=template, code=code, context=context or {})


def document_ingestion_aborted(*, document_id: int, attempt: int, error: BaseException) -> None:
    """Fail a document whose ingestion let ``error`` escape (``SystemExit`` from a model's code…)."""
    document = Document.objects.filter(pk=document_id, attempt=attempt).first()
    if document is not None:
        document_fail(document=document, template=jobs.ABORTED, code="aborted",
                      context={"error": type(error).__name__})


def document_delete(*, document: Document) -> None:
    """Delete a document, its chunks, its file and its vectors in every index."""
    knowledge_base_id = document.knowledge_base_id
    document_id = document.pk
    file_path = settings.DATA_DIR / document.file
    indexes = list(VectorIndex.objects.filter(knowledge_base_id=knowledge_base_id))
    with transaction.atomic():
        if document.status == Document.Status.READY:
            KnowledgeBase.objects.filter(pk=knowledge_base_id).update(content_version=F("content_version") + 1)
        document.delete()
        publish_document_deleted(knowledge_base_id=knowledge_base_id, document_id=document_id)

        def remove_from_stores() -> None:
            for index in indexes:
                chroma_store().collection(knowledge_base_id, index.model_key, index.metric).delete_documents(
                    [document_id]
                )
            file_path.unlink(missing_ok=True)

        transaction.on_commit(remove_from_stores)


@jobs.recovery
def documents_requeue_interrupted() -> int:
    """Re-queue documents a crash left between ``queued`` and ``ready`` (and the demo's, which
    start with the server), behind any upload made meanwhile. A document the server crashed on
    twice (``jobs.MAX_CRASHES``) fails instead: re-queued, it would crash it again."""
    interrupted = list(Document.objects.filter(status__in=Document.IN_PROGRESS).order_by("pk"))
    requeued = 0
    for document in interrupted:
        subject = ingestion_subject(document.pk)
        if jobs.crashed_too_often(subject):
            logger.error("document %s crashed the server %d times while being ingested; failing it",
                         document.pk, jobs.crashes(subject))
            document_fail(document=document, template=jobs.CRASHED, code="crashed")
            jobs.forget_crashes(subject)
            continue
        document_requeue(document=document, priority=jobs.Priority.BACKGROUND, after_crash=True)
        requeued += 1
    return requeued
