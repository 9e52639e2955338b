"""Writes of the knowledge app."""

from .demo import knowledge_base_seed_demo
from .documents import (
    Rejection,
    RetryRefused,
    UploadOutcome,
    clean_file_name,
    document_delete,
    document_requeue,
    document_retry,
    documents_requeue_interrupted,
    documents_upload,
)
from .indexes import bm25_warm, vector_index_build, vector_index_ensure
from .ingestion import document_ingest
from .knowledge_bases import (
    DEFAULT_CHUNKER,
    knowledge_base_create,
    knowledge_base_delete,
    knowledge_base_promote,
    knowledge_base_reindex,
    knowledge_base_update,
)

__all__ = [
    "DEFAULT_CHUNKER",
    "Rejection",
    "RetryRefused",
    "UploadOutcome",
    "bm25_warm",
    "clean_file_name",
    "document_delete",
    "document_ingest",
    "document_requeue",
    "document_retry",
    "documents_requeue_interrupted",
    "documents_upload",
    "knowledge_base_create",
    "knowledge_base_delete",
    "knowledge_base_promote",
    "knowledge_base_reindex",
    "knowledge_base_seed_demo",
    "knowledge_base_update",
    "vector_index_build",
    "vector_index_ensure",
]
