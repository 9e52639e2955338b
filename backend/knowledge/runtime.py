"""The knowledge app's engine objects for a knowledge base: its chunker, embedding model, stores and
chunks, built from its rows and cached per process (see ``pipelines.runtime`` for what a
``runtime`` module is)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from django.conf import settings

from rag.core import build
from rag.documents.models import Chunk as EngineChunk
from rag.documents.models import ChunksByDocument, SourceDocument
from rag.stores import ChromaStore, KnowledgeBaseStores

from .models import Chunk, Document, KnowledgeBase

_chunks_lock = threading.Lock()
_chunks_cache: OrderedDict[tuple[int, int], ChunksByDocument] = OrderedDict()
_CHUNKS_CACHE_SIZE = 4


@lru_cache(maxsize=1)
def chroma_store() -> ChromaStore:
    """This process's Chroma client: a server's when CHROMA_URL is set, else the local store."""
    if settings.CHROMA_URL:
        return ChromaStore(url=settings.CHROMA_URL)
    return ChromaStore(path=settings.CHROMA_PATH)


def embedding_model(config: dict[str, Any], *, owner: Any = None):
    """A ready embedding component (its model is shared per process, so this is cheap). An
    embedding service it calls is reached under the outbound policy of ``owner``, the knowledge
    base's owner (None: any address)."""
    from common.outbound import outbound_policy_for

    return build(config, kind="embedding", infra={"outbound": outbound_policy_for(owner) if owner else None})


def knowledge_base_chunks(knowledge_base: KnowledgeBase) -> ChunksByDocument:
    """Every chunk of the knowledge base's ready documents, by document and position; cached
    per content version."""
    key = (knowledge_base.pk, knowledge_base.content_version)
    with _chunks_lock:
        if key in _chunks_cache:
            _chunks_cache.move_to_end(key)
            return _chunks_cache[key]
    chunks: ChunksByDocument = {}
    rows = (
        Chunk.objects.filter(knowledge_base=knowledge_base, document__status=Document.Status.READY)
        .order_by("document_id", "position")
        .values_list("id", "document_id", "position", "text", "metadata")
        .iterator(chunk_size=5000)
    )
    for chunk_id, document_id, position, text, metadata in rows:
        chunks.setdefault(document_id, {})[position] = EngineChunk(chunk_id, document_id, position, text, metadata)
    with _chunks_lock:
        _chunks_cache[key] = chunks
        while len(_chunks_cache) > _CHUNKS_CACHE_SIZE:
            _chunks_cache.popitem(last=False)
    return chunks


def knowledge_base_documents(knowledge_base: KnowledgeBase) -> dict[int, SourceDocument]:
    return {
        document.pk: SourceDocument(document.pk, document.name, document.mime, document.sha256, document.metadata)
        for document in knowledge_base.documents.filter(status=Document.Status.READY).only(
            "id", "name", "mime", "sha256", "metadata"
        )
    }


def knowledge_base_stores(knowledge_base: KnowledgeBase) -> KnowledgeBaseStores:
    return KnowledgeBaseStores(
        knowledge_base_id=knowledge_base.pk,
        data_dir=settings.DATA_DIR,
        chroma=chroma_store(),
        content_version=knowledge_base.content_version,
        chunks=knowledge_base_chunks(knowledge_base),
        default_embedding=knowledge_base.embedding_model,
    )


def retriever_infra(knowledge_base: KnowledgeBase) -> dict[str, Any]:
    """What the factory's ``inject_infra`` hands every retriever over this knowledge base."""
    stores = knowledge_base_stores(knowledge_base)
    return {
        "env_path": stores.index_dir,
        "chunks": stores.chunks,
        "persistence": stores,
        "documents": knowledge_base_documents(knowledge_base),
        "language": knowledge_base.language,
    }
