"""Background tasks of the knowledge app (run by the thread pool or Celery workers)."""

import jobs

from . import services


@jobs.task("knowledge.ingest_document")
def ingest_document(*, document_id: int, attempt: int) -> None:
    services.document_ingest(document_id=document_id, attempt=attempt)


@jobs.task("knowledge.warm_bm25")
def warm_bm25(*, knowledge_base_id: int) -> None:
    services.bm25_warm(knowledge_base_id=knowledge_base_id)


@jobs.task("knowledge.build_vector_index")
def build_vector_index(*, index_id: int) -> None:
    services.vector_index_build(index_id=index_id)
