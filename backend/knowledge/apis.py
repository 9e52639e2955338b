"""Knowledge API: knowledge bases, their documents, chunks and vector indexes.

Every object is looked up through the acting user's own rows, so another user's id is a 404
(never a 403 that would confirm it exists).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError
from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import INVALID, LANG_PARAMETER, Invalid, SeededTextField, get_for_owner, message_error, validated
from common.i18n import translate
from rag.core.i18n import gettext_noop

from . import selectors, services
from .models import Document, KnowledgeBase

# -- shared shapes ---------------------------------------------------------------------------


@extend_schema_serializer(component_name="KnowledgeReason")
class ReasonSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField()


@extend_schema_serializer(component_name="KnowledgeBase")
class KnowledgeBaseOutputSerializer(serializers.Serializer):
    """Needs ``context={"language": ...}`` for the names Trellis wrote in every language."""

    id = serializers.IntegerField()
    name = SeededTextField("name")
    description = SeededTextField("description")
    language = serializers.ChoiceField(choices=KnowledgeBase.Language.choices)
    chunker = serializers.JSONField(help_text="The chunker component reference.")
    embedding_model = serializers.JSONField(help_text="The embedding component reference.")
    document_count = serializers.IntegerField()
    ready_count = serializers.IntegerField()
    failed_count = serializers.IntegerField()
    in_progress_count = serializers.IntegerField()
    chunk_total = serializers.SerializerMethodField(help_text="Chunks of the ready documents.")
    evaluation_only = serializers.BooleanField(
        help_text="The corpus of an evaluation dataset, not yet promoted to an ordinary knowledge base.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_chunk_total(self, knowledge_base: KnowledgeBase) -> int:
        return knowledge_base.chunk_total or 0


@extend_schema_serializer(component_name="DocumentProgress")
class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="progress_done")
    total = serializers.IntegerField(source="progress_total")


@extend_schema_serializer(component_name="Document")
class DocumentOutputSerializer(serializers.Serializer):
    """Needs ``context={"language": ...}`` to localise ``error``."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    mime = serializers.CharField()
    size = serializers.IntegerField()
    sha256 = serializers.CharField()
    status = serializers.ChoiceField(choices=Document.Status.choices)
    progress = ProgressSerializer(source="*")
    chunk_count = serializers.IntegerField()
    page_count = serializers.IntegerField(allow_null=True)
    character_count = serializers.IntegerField()
    error = serializers.SerializerMethodField(help_text="Why ingestion failed, in the request's language.")
    error_detail = serializers.SerializerMethodField(
        help_text="What the parsing library said, in its own words (not translated), when it said something.")
    error_code = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_error(self, document: Document) -> str | None:
        return selectors.document_error_message(document, self.context.get("language"))

    def get_error_detail(self, document: Document) -> str | None:
        return selectors.document_error_detail(document)

    def get_error_code(self, document: Document) -> str | None:
        return document.error_code or None







def _knowledge_base(request: Request, knowledge_base_id: int) -> KnowledgeBase:
    return get_for_owner(selectors.knowledge_base_get, user=request.user, knowledge_base_id=knowledge_base_id)


def _document(request: Request, knowledge_base_id: int, document_id: int) -> Document:
    return get_for_owner(selectors.document_get, knowledge_base=_knowledge_base(request, knowledge_base_id),
                         document_id=document_id)


def _duplicate_name(request: Request, name: str) -> Invalid:
    return Invalid([message_error("name", gettext_noop("you already have a knowledge base named {name!r}"),
                                  "duplicate_name", request.LANGUAGE_CODE, name=name)])


def _document_data(documents: Any, request: Request, *, many: bool = False) -> Any:
    return DocumentOutputSerializer(documents, many=many, context={"language": request.LANGUAGE_CODE}).data


# -- knowledge bases -------------------------------------------------------------------------


class KnowledgeBaseListApi(APIView):
    """The user's knowledge bases, with document counts by status and their chunk total. The
    corpora of evaluation datasets are listed under Evaluation instead, until promoted."""

    @extend_schema(operation_id="knowledge_bases_list", responses=KnowledgeBaseOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        knowledge_bases = selectors.knowledge_base_everyday_list(user=request.user)
        return Response(KnowledgeBaseOutputSerializer(knowledge_bases, many=True, context={"language": request.LANGUAGE_CODE}).data)


class KnowledgeBaseCreateApi(APIView):
    """Create a knowledge base; its vector index for the embedding model comes with it."""

    @extend_schema_serializer(component_name="KnowledgeBaseCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="")
        language = serializers.ChoiceField(choices=KnowledgeBase.Language.choices, default=KnowledgeBase.Language.ENGLISH)
        chunker = serializers.JSONField(
            required=False, allow_null=True, help_text="A chunker component reference; the default splitter when omitted."
        )
        embedding_model = serializers.JSONField(
            required=False, allow_null=True,
            help_text="An embedding component reference; the packaged model for the language when omitted.",
        )

    @extend_schema(
        operation_id="knowledge_bases_create",
        request=InputSerializer,
        parameters=[LANG_PARAMETER],
        responses={201: KnowledgeBaseOutputSerializer, **INVALID},
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        try:
            knowledge_base = services.knowledge_base_create(
                owner=request.user, name=data["name"], description=data["description"], language=data["language"],
                chunker=data.get("chunker"), embedding_model=data.get("embedding_model"),
            )
        except IntegrityError:
            raise _duplicate_name(request, data["name"]) from None
        knowledge_base = selectors.knowledge_base_get(user=request.user, knowledge_base_id=knowledge_base.pk)
        return Response(KnowledgeBaseOutputSerializer(knowledge_base, context={"language": request.LANGUAGE_CODE}).data, status=status.HTTP_201_CREATED)


class KnowledgeBaseDetailApi(APIView):
    """One knowledge base."""

    @extend_schema(operation_id="knowledge_bases_retrieve", responses=KnowledgeBaseOutputSerializer)
    def get(self, request: Request, knowledge_base_id: int) -> Response:
        return Response(KnowledgeBaseOutputSerializer(_knowledge_base(request, knowledge_base_id), context={"language": request.LANGUAGE_CODE}).data)


class KnowledgeBaseUpdateApi(APIView):
    """Rename or re-describe a knowledge base, or change its chunker (which re-chunks every document)."""

    @extend_schema_serializer(component_name="KnowledgeBaseUpdate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        description = serializers.CharField(required=False, allow_blank=True)
        chunker = serializers.JSONField(required=False, help_text="A chunker component reference.")

    @extend_schema(
        operation_id="knowledge_bases_partial_update",
        request=InputSerializer,
        parameters=[LANG_PARAMETER],
        responses={200: KnowledgeBaseOutputSerializer, **INVALID},
    )
    def patch(self, request: Request, knowledge_base_id: int) -> Response:
        knowledge_base = _knowledge_base(request, knowledge_base_id)
        data = validated(self.InputSerializer, request.data)
        try:
            services.knowledge_base_update(knowledge_base=knowledge_base, **data)
        except IntegrityError:
            raise _duplicate_name(request, data["name"]) from None
        knowledge_base = selectors.knowledge_base_get(user=request.user, knowledge_base_id=knowledge_base.pk)
        return Response(KnowledgeBaseOutputSerializer(knowledge_base, context={"language": request.LANGUAGE_CODE}).data)


class KnowledgeBaseDeleteApi(APIView):
    """Delete a knowledge base with its documents, chunks, files and indexes."""

    @extend_schema(operation_id="knowledge_bases_destroy", responses={204: None})
    def delete(self, request: Request, knowledge_base_id: int) -> Response:
        services.knowledge_base_delete(knowledge_base=_knowledge_base(request, knowledge_base_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class KnowledgeBaseReindexApi(APIView):
    """Parse, chunk, embed and index every document again."""

    @extend_schema_serializer(component_name="KnowledgeBaseReindex")
    class OutputSerializer(serializers.Serializer):
        queued = serializers.IntegerField(help_text="How many documents were queued.")

    @extend_schema(operation_id="knowledge_bases_reindex", request=None, responses={202: OutputSerializer})
    def post(self, request: Request, knowledge_base_id: int) -> Response:
        queued = services.knowledge_base_reindex(knowledge_base=_knowledge_base(request, knowledge_base_id))
        return Response(self.OutputSerializer({"queued": queued}).data, status=status.HTTP_202_ACCEPTED)


class VectorIndexListApi(APIView):
    """The knowledge base's vector indexes (one per embedding model and metric) and their status."""

    @extend_schema_serializer(component_name="VectorIndex")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        model_key = serializers.CharField()
        metric = serializers.CharField()
        embedding_model = serializers.JSONField()
        status = serializers.CharField()
        error = serializers.CharField(allow_blank=True)
        updated_at = serializers.DateTimeField()

    @extend_schema(operation_id="knowledge_bases_indexes_list", responses=OutputSerializer(many=True))
    def get(self, request: Request, knowledge_base_id: int) -> Response:
        indexes = selectors.vector_index_list(knowledge_base=_knowledge_base(request, knowledge_base_id))
        return Response(self.OutputSerializer(indexes, many=True).data)


# -- documents -------------------------------------------------------------------------------


class DocumentListApi(APIView):
    """The knowledge base's documents, newest first, optionally of one status."""

    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Document.Status.choices, required=False)

    @extend_schema(
        operation_id="knowledge_bases_documents_list",
        parameters=[FilterSerializer, LANG_PARAMETER],
        responses=DocumentOutputSerializer(many=True),
    )
    def get(self, request: Request, knowledge_base_id: int) -> Response:
        knowledge_base = _knowledge_base(request, knowledge_base_id)
        filters = validated(self.FilterSerializer, request.query_params)
        documents = selectors.document_list(knowledge_base=knowledge_base, status=filters.get("status"))
        return Response(_document_data(documents, request, many=True))


@extend_schema_serializer(component_name="DocumentRejection")
class RejectionSerializer(serializers.Serializer):
    name = serializers.CharField()
    code = serializers.ChoiceField(choices=["too_large", "duplicate"])
    reason = serializers.CharField(help_text="Why, in the request's language.")
    document_id = serializers.IntegerField(allow_null=True, help_text="The existing document, for a duplicate.")


class DocumentUploadApi(APIView):
    """Upload one or many files and queue them for ingestion.

    201 when at least one file was accepted. When none was: 413 if any was too large, else 409
    (every file is already in the knowledge base; send ``force=true`` to add it again).
    """

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="DocumentUpload")
    class InputSerializer(serializers.Serializer):
        files = serializers.ListField(
            child=serializers.FileField(allow_empty_file=True), allow_empty=False, help_text="One or many files."
        )
        force = serializers.BooleanField(
            default=False, help_text="Accept files whose content is already in the knowledge base."
        )

    @extend_schema_serializer(component_name="DocumentUploadResult")
    class OutputSerializer(serializers.Serializer):
        documents = DocumentOutputSerializer(many=True, help_text="The accepted files, queued for ingestion.")
        rejected = RejectionSerializer(many=True)

    @extend_schema(
        operation_id="knowledge_bases_documents_upload",
        request={"multipart/form-data": InputSerializer},
        parameters=[LANG_PARAMETER],
        responses={201: OutputSerializer, 409: OutputSerializer, 413: OutputSerializer, **INVALID},
    )
    def post(self, request: Request, knowledge_base_id: int) -> Response:
        knowledge_base = _knowledge_base(request, knowledge_base_id)
        data = validated(self.InputSerializer, request.data)
        outcome = services.documents_upload(
            knowledge_base=knowledge_base, files=data["files"], force=data["force"]
        )
        body = {
            "documents": _document_data(outcome.accepted, request, many=True),
            "rejected": [
                {"name": rejection.name, "code": rejection.code, "document_id": rejection.document_id,
                 "reason": translate(rejection.template, rejection.context, request.LANGUAGE_CODE)}
                for rejection in outcome.rejected
            ],
        }
        if outcome.accepted:
            code = status.HTTP_201_CREATED
        elif any(rejection.code == "too_large" for rejection in outcome.rejected):
            code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        else:
            code = status.HTTP_409_CONFLICT
        return Response(body, status=code)


class DocumentDetailApi(APIView):
    """One document and where it stands in ingestion."""

    @extend_schema(operation_id="knowledge_bases_documents_retrieve", parameters=[LANG_PARAMETER],
                   responses=DocumentOutputSerializer)
    def get(self, request: Request, knowledge_base_id: int, document_id: int) -> Response:
        return Response(_document_data(_document(request, knowledge_base_id, document_id), request))


class DocumentDeleteApi(APIView):
    """Delete a document, its chunks, its stored file and its vectors in every index."""

    @extend_schema(operation_id="knowledge_bases_documents_destroy", responses={204: None})
    def delete(self, request: Request, knowledge_base_id: int, document_id: int) -> Response:
        services.document_delete(document=_document(request, knowledge_base_id, document_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentRetryApi(APIView):
    """Queue a failed document for ingestion again; 409 for a document that has not failed, or
    that failed on its own content and whose file has not changed (``code: "unchanged"``)."""

    @extend_schema(
        operation_id="knowledge_bases_documents_retry",
        request=None,
        parameters=[LANG_PARAMETER],
        responses={202: DocumentOutputSerializer, 409: ReasonSerializer},
    )
    def post(self, request: Request, knowledge_base_id: int, document_id: int) -> Response:
        document = _document(request, knowledge_base_id, document_id)
        # A queued document is retried too: its job may have been lost with an unreachable broker.
        if document.status not in (Document.Status.FAILED, Document.Status.QUEUED):
            detail = translate(gettext_noop("only a failed or queued document can be retried; this one is {status}"),
                               {"status": str(Document.Status(document.status).label)}, request.LANGUAGE_CODE)
            return Response({"detail": detail, "code": "not_failed"}, status=status.HTTP_409_CONFLICT)
        try:
            document = services.document_retry(document=document)
        except services.RetryRefused as refused:
            return Response({"detail": translate(refused.template, {}, request.LANGUAGE_CODE), "code": refused.code},
                            status=status.HTTP_409_CONFLICT)
        return Response(_document_data(document, request), status=status.HTTP_202_ACCEPTED)


class ChunkListApi(APIView):
    """The document's chunks in order, a page at a time."""

    class FilterSerializer(serializers.Serializer):
        limit = serializers.IntegerField(default=50, min_value=1, max_value=500)
        offset = serializers.IntegerField(default=0, min_value=0, max_value=2**31 - 1)

    @extend_schema_serializer(component_name="Chunk")
    class ChunkSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        position = serializers.IntegerField()
        text = serializers.CharField()
        metadata = serializers.JSONField(help_text=(
            "Page numbers, heading, title of the sections it covers; start and end, where it lies in the "
            "document's text, and gap_before, the text between it and the previous chunk when they do not overlap."))

    @extend_schema(
        operation_id="knowledge_bases_documents_chunks_list",
        parameters=[FilterSerializer],
        responses={
            200: inline_serializer("ChunkPage", {"count": serializers.IntegerField(), "results": ChunkSerializer(many=True)}),
            **INVALID,
        },
    )
    def get(self, request: Request, knowledge_base_id: int, document_id: int) -> Response:
        document = _document(request, knowledge_base_id, document_id)
        page = validated(self.FilterSerializer, request.query_params)
        limit, offset = page["limit"], page["offset"]
        chunks = selectors.chunk_list(document=document)
        return Response({
            "count": chunks.count(),
            "results": self.ChunkSerializer(chunks[offset:offset + limit], many=True).data,
        })
