from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path(
        "knowledge-bases/",
        one_path("KnowledgeBaseCollectionApi", apis.KnowledgeBaseListApi, apis.KnowledgeBaseCreateApi),
        name="knowledge-base-list",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/",
        one_path(
            "KnowledgeBaseItemApi", apis.KnowledgeBaseDetailApi, apis.KnowledgeBaseUpdateApi, apis.KnowledgeBaseDeleteApi
        ),
        name="knowledge-base-detail",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/reindex/",
        apis.KnowledgeBaseReindexApi.as_view(),
        name="knowledge-base-reindex",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/indexes/",
        apis.VectorIndexListApi.as_view(),
        name="knowledge-base-indexes",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/documents/",
        one_path("DocumentCollectionApi", apis.DocumentListApi, apis.DocumentUploadApi),
        name="document-list",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/documents/<int:document_id>/",
        one_path("DocumentItemApi", apis.DocumentDetailApi, apis.DocumentDeleteApi),
        name="document-detail",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/documents/<int:document_id>/retry/",
        apis.DocumentRetryApi.as_view(),
        name="document-retry",
    ),
    path(
        "knowledge-bases/<int:knowledge_base_id>/documents/<int:document_id>/chunks/",
        apis.ChunkListApi.as_view(),
        name="document-chunks",
    ),
]
