"""Background tasks of the knowledge app (run by the thread pool or Celery workers)."""

from typing import Any

import jobs

from . import services
from .models import VectorIndex
from .services.documents import document_ingestion_aborted, ingestion_subject


def _ingestion_aborted(kwargs: dict[str, Any], error: BaseException) -> None:
    document_ingestion_aborted(document_id=kwargs["document_id"], attempt=kwargs["attempt"], error=error)


def _index_build_aborted(kwargs: dict[str, Any], error: BaseException) -> None:
    VectorIndex.objects.filter(pk=kwargs["index_id"]).update(
        status=VectorIndex.Status.FAILED, error=jobs.ABORTED.format(error=type(error).__name__))


@jobs.task("knowledge.ingest_document", subject=lambda kwargs: ingestion_subject(kwargs["document_id"]),
           on_abort=_ingestion_aborted)
def ingest_document(*, document_id: int, attempt: int) -> None:
    services.document_ingest(document_id=document_id, attempt=attempt)


@jobs.task("knowledge.warm_bm25")
def warm_bm25(*, knowledge_base_id: int) -> None:
    services.bm25_warm(knowledge_base_id=knowledge_base_id)


@jobs.task("knowledge.build_vector_index", on_abort=_index_build_aborted)
def build_vector_index(*, index_id: int) -> None:
    services.vector_index_build(index_id=index_id)
