"""The ingestion pipeline of one document: parse → chunk → embed → index → ready.

Every step first checks that its attempt is still the document's current one, so a re-queued,
re-indexed or deleted document is never written by an older run. Chunk rows are written
before any vector, and a document turns ``ready`` only after every index holds its vectors:
a run that dies half-way leaves the document in progress (re-queued at start-up), never
``ready`` with half its chunks.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F

import jobs
from rag.components import load_components
from rag.core import TrellisError, build, readable_error
from rag.core.i18n import gettext_noop
from rag.documents import DocumentParseError, ParseLimits, parse_document_isolated
from rag.documents.errors import reason_text

from ..models import Chunk, Document, KnowledgeBase, VectorIndex
from ..runtime import chroma_store, embedding_model
from .events import publish_document_progress

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.25


class Superseded(Exception):
    """The document was deleted or re-queued while this run worked on it."""


class IngestionFailure(TrellisError):
    def __init__(self, template: str, code: str, context: dict[str, Any] | None = None) -> None:
        self.template, self.code, self.context = template, code, context or {}
        super().__init__(template.format(**self.context))


class Run:
    """One attempt at ingesting one document."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.attempt = document.attempt
        self._last_progress = 0.0
        self.chunk_ids: list[int] = []
        """Chunks this run created; a superseded run removes their vectors, which a newer run
        could not see to clear."""

    def advance(self, **fields: Any) -> None:
        """Write ``fields`` if this attempt is still current, and tell the listeners."""
        with transaction.atomic():
            if not Document.objects.filter(pk=self.document.pk, attempt=self.attempt).update(**fields):
                raise Superseded
            for name, value in fields.items():
                setattr(self.document, name, value)
            publish_document_progress(self.document)

    def progress(self, done: int) -> None:
        now = time.monotonic()
        if done < self.document.progress_total and now - self._last_progress < PROGRESS_INTERVAL_S:
            return
        self._last_progress = now
        self.advance(progress_done=done)


def document_ingest(*, document_id: int, attempt: int) -> None:
    """Run the pipeline for ``document_id`` if ``attempt`` is still its current attempt."""
    document = Document.objects.select_related("knowledge_base").filter(pk=document_id, attempt=attempt).first()
    if document is None:
        return
    run = Run(document)
    try:
        _ingest(run, document.knowledge_base)
    except Superseded:
        _remove_vectors(document.knowledge_base_id, chunk_ids=run.chunk_ids)
    except (DocumentParseError, IngestionFailure) as exc:
        _fail(run, template=exc.template, code=exc.code, context=exc.context)
    except Exception as exc:
        if not Document.objects.filter(pk=document_id, attempt=attempt).exists():
            # Deleted or re-queued meanwhile (its knowledge base and Chroma collection may have
            # gone away under it): handled like a superseded run, not reported as a failure.
            _remove_vectors(document.knowledge_base_id, chunk_ids=run.chunk_ids)
            return
        logger.exception("ingesting document %s failed", document_id)
        _fail(run, template=gettext_noop("internal error while {stage}"), code="internal",
              context={"stage": run.document.status, "detail": readable_error(exc).message})
    else:
        jobs.enqueue("knowledge.warm_bm25", knowledge_base_id=document.knowledge_base_id)


def _ingest(run: Run, knowledge_base: KnowledgeBase) -> None:
    document = run.document
    run.advance(status=Document.Status.PARSING, progress_done=0, progress_total=0,
                error="", error_code="", error_template="", error_context={})
    try:
        data = (settings.DATA_DIR / document.file).read_bytes()
    except FileNotFoundError:
        raise IngestionFailure(gettext_noop("the uploaded file is missing from the data directory"),
                               "missing_file") from None
    parsed = parse_document_isolated(data, document.name, document.mime or None, limits=ParseLimits(
        max_bytes=settings.TRELLIS_MAX_UPLOAD_BYTES,
        max_pages=settings.TRELLIS_MAX_PAGES,
        max_characters=settings.TRELLIS_MAX_CHARACTERS,
    ), timeout_s=settings.TRELLIS_PARSE_TIMEOUT_S, memory_bytes=settings.TRELLIS_PARSE_MEMORY_MB * 1024 * 1024)
    run.advance(status=Document.Status.CHUNKING, mime=parsed.mime[:100],
                page_count=parsed.metadata.get("page_count"), character_count=len(parsed.text))

    indexes = list(knowledge_base.vector_indexes.exclude(status=VectorIndex.Status.FAILED))
    tokenizer_source = embedding_model(knowledge_base.embedding_model, owner=knowledge_base.owner)
    chunker = build(knowledge_base.chunker, kind="chunker", registry=load_components(),
                    infra={"tokenizer": tokenizer_source.tokenizer()})
    drafts = chunker.split(parsed.sections)
    limit = settings.TRELLIS_MAX_CHUNKS_PER_DOCUMENT
    if len(drafts) > limit:
        raise IngestionFailure(gettext_noop("the document makes {count:,} chunks, more than the limit of {limit:,}"),
                               "too_many_chunks", {"count": len(drafts), "limit": limit})
    longest = max(drafts, key=lambda draft: len(draft.text), default=None)
    if longest is not None and len(longest.text) > settings.TRELLIS_MAX_CHUNK_CHARACTERS:
        raise IngestionFailure(
            gettext_noop("chunk {position} has {count:,} characters, more than the limit of {limit:,} per chunk"),
            "chunk_too_long",
            {"position": longest.position, "count": len(longest.text), "limit": settings.TRELLIS_MAX_CHUNK_CHARACTERS},
        )

    with transaction.atomic():
        if not Document.objects.select_for_update().filter(pk=document.pk, attempt=run.attempt).exists():
            raise Superseded
        Chunk.objects.filter(document=document).delete()
        chunks = Chunk.objects.bulk_create(
            [Chunk(owner_id=document.owner_id, knowledge_base_id=knowledge_base.pk, document=document,
                   position=draft.position, text=draft.text, metadata=draft.metadata) for draft in drafts],
            batch_size=1000,
        )
        run.chunk_ids = [chunk.pk for chunk in chunks]
    run.advance(status=Document.Status.EMBEDDING, chunk_count=len(chunks),
                progress_done=0, progress_total=len(chunks) * len(indexes))

    # Every vector is computed before any is stored: a process killed while embedding (the long
    # stage) leaves no vector of this document behind.
    done = 0
    vectors = []
    for index in indexes:
        embedded, done = _embed(index, chunks, run, done)
        vectors.append((index, embedded))

    run.advance(status=Document.Status.INDEXING)
    for index, embedded in vectors:
        _store_vectors(index, embedded, chunks, knowledge_base.pk, document.pk)
    with transaction.atomic():
        if not Document.objects.filter(pk=document.pk, attempt=run.attempt).update(status=Document.Status.READY):
            raise Superseded
        # BM25 indices follow the content version: the next search over this knowledge base
        # builds (or a warm-up job has built) the index that includes this document.
        KnowledgeBase.objects.filter(pk=knowledge_base.pk).update(content_version=F("content_version") + 1)
        run.document.status = Document.Status.READY
        publish_document_progress(run.document)


def _embed(index: VectorIndex, chunks: list[Chunk], run: Run, done: int) -> tuple[np.ndarray, int]:
    """The vectors of ``chunks`` under ``index``'s model, reporting progress after every batch
    the model encodes (``done`` chunks of earlier indexes are already counted)."""
    model = embedding_model(index.embedding_model, owner=index.knowledge_base.owner)

    def batch_encoded(encoded: int, total: int) -> None:
        run.progress(done + len(chunks) * encoded // max(total, 1))

    vectors = np.asarray(model.embed_documents([chunk.text for chunk in chunks], progress=batch_encoded),
                         dtype=np.float32)
    done += len(chunks)
    run.progress(done)
    return vectors, done


def _store_vectors(index: VectorIndex, vectors: np.ndarray, chunks: list[Chunk], knowledge_base_id: int,
                   document_id: int) -> None:
    collection = chroma_store().collection(knowledge_base_id, index.model_key, index.metric)
    collection.delete_documents([document_id])
    if chunks:
        collection.upsert([chunk.pk for chunk in chunks], vectors,
                          [{"document_id": document_id, "position": chunk.position} for chunk in chunks])


def _fail(run: Run, *, template: str, code: str, context: dict[str, Any]) -> None:
    """Mark the run's document failed with a readable reason and drop what it wrote."""
    document = run.document
    message = reason_text(template, context)
    try:
        with transaction.atomic():
            updated = Document.objects.filter(pk=document.pk, attempt=run.attempt).update(
                status=Document.Status.FAILED, error=message, error_code=code, error_template=template,
                error_context=context, chunk_count=0,
            )
            if not updated:
                return
            Chunk.objects.filter(document_id=document.pk).delete()
            document.status, document.error, document.error_code = Document.Status.FAILED, message, code
            document.chunk_count = 0
            publish_document_progress(document)
    finally:
        _remove_vectors(document.knowledge_base_id, document_id=document.pk)


def _remove_vectors(knowledge_base_id: int, *, document_id: int | None = None, chunk_ids: list[int] | None = None) -> None:
    """Delete a document's vectors, or only those of ``chunk_ids``, from every index."""
    for index in VectorIndex.objects.filter(knowledge_base_id=knowledge_base_id):
        try:
            collection = chroma_store().collection(knowledge_base_id, index.model_key, index.metric)
            if document_id is not None:
                collection.delete_documents([document_id])
            else:
                collection.delete_chunks(chunk_ids or [])
        except Exception:
            logger.warning("could not remove vectors from %s", index, exc_info=True)

