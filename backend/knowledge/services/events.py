"""Progress events of a knowledge base, sent to ``ws/knowledge/<id>/`` after commit."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from common.realtime import publish

from ..models import Document


def knowledge_base_group(knowledge_base_id: int) -> str:
    return f"knowledge-base-{knowledge_base_id}"


def document_snapshot(document: Document) -> dict[str, Any]:
    return {
        "id": document.pk,
        "name": document.name,
        "status": document.status,
        "done": document.progress_done,
        "total": document.progress_total,
        "chunk_count": document.chunk_count,
        "page_count": document.page_count,
        "size": document.size,
        "error": document.error or None,
        "error_code": document.error_code or None,
        "error_template": document.error_template or None,
        "error_context": document.error_context or {},
    }


def publish_document_progress(document: Document) -> None:
    """Tell the knowledge base's listeners where ``document`` stands, once the transaction commits."""
    message = {"type": "document.progress", "document": document_snapshot(document)}
    group = knowledge_base_group(document.knowledge_base_id)
    transaction.on_commit(lambda: publish(group, message))


def publish_document_deleted(*, knowledge_base_id: int, document_id: int) -> None:
    message = {"type": "document.deleted", "document_id": document_id}
    transaction.on_commit(lambda: publish(knowledge_base_group(knowledge_base_id), message))
