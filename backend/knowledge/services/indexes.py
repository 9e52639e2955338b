"""Indices beyond the ingestion path: extra vector collections, and warming BM25."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

import jobs
from rag.components import load_components
from rag.core import iter_nodes, readable_error, validate_or_raise
from rag.presets import default_retriever
from rag.retrievers.sparse import BagOfWordsConverter

from ..models import Document, KnowledgeBase, VectorIndex
from ..runtime import chroma_store, embedding_model, knowledge_base_stores

logger = logging.getLogger(__name__)

BUILD_TASK = "knowledge.build_vector_index"
DEFAULT_VECTORIZER: dict[str, Any] = {"component": "BagOfWordsConverter", "params": {}}


def vector_index_ensure(*, knowledge_base: KnowledgeBase, embedding_config: dict[str, Any], metric: str) -> VectorIndex:
    """The vector index of ``knowledge_base`` for this model and metric; created and queued for
    building when missing (a pipeline that needs it waits until it is ready)."""
    from .knowledge_bases import model_key_of

    config = validate_or_raise(embedding_config, registry=load_components(), kind="embedding", check_availability=True)
    with transaction.atomic():
        index, created = VectorIndex.objects.get_or_create(
            knowledge_base=knowledge_base, model_key=model_key_of(config), metric=metric,
            defaults={"embedding_model": config, "status": VectorIndex.Status.BUILDING},
        )
        if created or index.status == VectorIndex.Status.FAILED:
            VectorIndex.objects.filter(pk=index.pk).update(status=VectorIndex.Status.BUILDING, error="")
            index.status = VectorIndex.Status.BUILDING
            jobs.enqueue_on_commit(BUILD_TASK, index_id=index.pk)
    return index


def vector_index_build(*, index_id: int) -> None:
    """Embed every chunk of the knowledge base's ready documents into a new collection."""
    index = VectorIndex.objects.select_related("knowledge_base__owner").filter(pk=index_id).first()
    if index is None:
        return
    try:
        model = embedding_model(index.embedding_model, owner=index.knowledge_base.owner)
        collection = chroma_store().collection(index.knowledge_base_id, index.model_key, index.metric)
        rows = list(
            index.knowledge_base.chunks.filter(document__status=Document.Status.READY)
            .order_by("id").values_list("id", "document_id", "position", "text")
        )
        for start in range(0, len(rows), 256):
            piece = rows[start:start + 256]
            collection.upsert(
                [row[0] for row in piece],
                model.embed_documents([row[3] for row in piece]),
                [{"document_id": row[1], "position": row[2]} for row in piece],
            )
    except Exception as exc:
        logger.exception("building vector index %s failed", index_id)
        VectorIndex.objects.filter(pk=index_id).update(status=VectorIndex.Status.FAILED, error=readable_error(exc).message)
        return
    VectorIndex.objects.filter(pk=index_id).update(status=VectorIndex.Status.READY, error="")


def bm25_warm(*, knowledge_base_id: int) -> None:
    """Build the default BM25 index for the current chunks, so the next question need not.

    While other documents of the knowledge base are still being ingested this does nothing:
    the last one to finish warms the index once for all of them.
    """
    knowledge_base = KnowledgeBase.objects.filter(pk=knowledge_base_id).first()
    if knowledge_base is None or knowledge_base.documents.filter(status__in=Document.IN_PROGRESS).exists():
        return
    stores = knowledge_base_stores(knowledge_base)
    for converter in _warmed_converters(knowledge_base.language):
        stores.bm25(converter)


def _warmed_converters(language: str) -> list[BagOfWordsConverter]:
    """The converters of the default vectorizer (keyword search, the knowledge base's search)
    and of the default pipeline's BM25 retrievers, as they analyse ``language``. Two that analyse
    alike share one index: the stores key indices by the converter's configuration."""
    registry = load_components()
    configs = [DEFAULT_VECTORIZER] + [
        node["params"]["vectorizer"]
        for _, node in iter_nodes(validate_or_raise(default_retriever(), registry=registry), registry=registry)
        if node["component"] == "BM25Retriever"
    ]
    return [registry.get(config["component"])(**config["params"]).for_language(language) for config in configs]
