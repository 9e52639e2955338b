"""Reads of the knowledge app. Every function takes the acting user and sees only their rows."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet, Sum

from common.i18n import translate
from common.slugs import owner_slugs

from .models import Chunk, Document, KnowledgeBase, VectorIndex

EVERYDAY = Q(evaluation_only=False)
"""The knowledge bases a user works with every day: all but the corpora of evaluation datasets
nobody promoted (those stay under Evaluation). The one place that decides it."""


def knowledge_base_list(*, user: AbstractBaseUser) -> QuerySet[KnowledgeBase]:
    """Every knowledge base of the user (evaluation corpora included: they open by id, and
    pipelines built on them run), with document counts by status and their chunk total."""
    return KnowledgeBase.objects.filter(owner=user).annotate(
        document_count=Count("documents", distinct=True),
        ready_count=Count("documents", filter=Q(documents__status=Document.Status.READY), distinct=True),
        failed_count=Count("documents", filter=Q(documents__status=Document.Status.FAILED), distinct=True),
        in_progress_count=Count("documents", filter=Q(documents__status__in=Document.IN_PROGRESS), distinct=True),
        chunk_total=Sum("documents__chunk_count", filter=Q(documents__status=Document.Status.READY)),
    )


def knowledge_base_everyday_list(*, user: AbstractBaseUser) -> QuerySet[KnowledgeBase]:
    """The user's knowledge bases as the knowledge base list, the pipeline editor and the MCP
    tools offer them (``EVERYDAY``)."""
    return knowledge_base_list(user=user).filter(EVERYDAY)


def knowledge_base_get(*, user: AbstractBaseUser, knowledge_base_id: int) -> KnowledgeBase:
    """Raises ``KnowledgeBase.DoesNotExist`` for a missing id or another user's knowledge base."""
    return knowledge_base_list(user=user).get(pk=knowledge_base_id)


def document_list(*, knowledge_base: KnowledgeBase, status: str | None = None) -> QuerySet[Document]:
    documents = knowledge_base.documents.all()
    if status:
        documents = documents.filter(status=status)
    return documents


def document_get(*, knowledge_base: KnowledgeBase, document_id: int) -> Document:
    return knowledge_base.documents.get(pk=document_id)


def chunk_list(*, document: Document) -> QuerySet[Chunk]:
    return document.chunks.order_by("position")


def vector_index_list(*, knowledge_base: KnowledgeBase) -> QuerySet[VectorIndex]:
    return knowledge_base.vector_indexes.all()


def document_error_message(document: Document, language: str | None) -> str | None:
    """Why ``document`` failed, in ``language`` (without the library's detail)."""
    if not document.error:
        return None
    return translate(document.error_template, document.error_context, language, fallback=document.error)


def document_error_detail(document: Document) -> str | None:
    """What the parsing library said about ``document``, in its own words, when it failed."""
    if not document.error:
        return None
    return (document.error_context or {}).get("detail") or None


def knowledge_base_slugs(*, user: AbstractBaseUser) -> dict[int, str]:
    """``{id: slug}`` of the user's knowledge bases: the names the MCP tools (``search_<slug>``)
    know them by. Evaluation corpora are counted too, so promoting one renames no other tool."""
    return owner_slugs(KnowledgeBase.objects.filter(owner=user).values_list("pk", "name"), fallback="knowledge-base")


def knowledge_base_search(*, knowledge_base: KnowledgeBase, query: str, top_k: int = 5) -> list[dict[str, Any]]:
    """The ``top_k`` chunks of the knowledge base's ready documents that BM25 scores highest for
    ``query`` (BM25 needs no model and no index to wait for), best first, each with its score,
    its document's name and its text."""
    from rag.components import load_components
    from rag.core import build

    from .runtime import retriever_infra

    infra = retriever_infra(knowledge_base)
    retriever = build({"component": "BM25Retriever", "params": {"top_k": top_k}}, kind="retriever",
                      registry=load_components(), infra=infra)
    chunks, node = retriever.retrieve(query)
    scores = {result["chunk_id"]: result.get("score") for result in node.get("results", [])}
    documents = infra["documents"]
    return [{"rank": rank, "score": scores.get(chunk.id), "chunk_id": chunk.id, "document_id": chunk.document_id,
             "document": documents[chunk.document_id].name if chunk.document_id in documents else None,
             "position": chunk.position, "text": chunk.text}
            for rank, chunk in enumerate(chunks, start=1)]
