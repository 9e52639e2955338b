"""Pipelines API: save, validate on save, duplicate, export and import, templates."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.selectors import component_vocabulary
from common.api import (
    LANG_PARAMETER,
    ErrorActionSerializer,
    SeededTextField,
    consent_response,
    errors_response,
    get_for_owner,
    message_error,
    no_such,
    validated,
)
from knowledge.models import KnowledgeBase
from knowledge.selectors import knowledge_base_get
from models.selectors import models_visible_to
from rag.core import ConfigValidationError, TrellisError, readable_error
from rag.core.i18n import gettext_noop
from rag.presets import default_retriever
from rag.retrievers import RetrievalError

from . import playground, selectors, services
from .models import Pipeline
from .selectors import pipelines_readiness


@extend_schema_serializer(component_name="Pipeline")
class PipelineOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = SeededTextField("name")
    description = SeededTextField("description")
    knowledge_base = serializers.IntegerField(source="knowledge_base_id")
    knowledge_base_name = SeededTextField("name", source="knowledge_base")
    representation = serializers.SerializerMethodField()
    ready = serializers.SerializerMethodField()
    waiting_for = serializers.SerializerMethodField()
    documents_reading = serializers.SerializerMethodField(
        help_text="Documents of the knowledge base still being read: a ready pipeline cannot answer from them yet.")
    strategy = serializers.JSONField(help_text="The strategy tree, normalised (every default filled).")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_representation(self, pipeline: Pipeline) -> str:
        if "vocabulary" not in self.context:
            self.context["vocabulary"] = component_vocabulary(language=self.context.get("language"))
        return selectors.pipeline_representation(pipeline, self.context["vocabulary"])

    def _readiness(self, pipeline: Pipeline):
        known = self.context.setdefault("readiness", {})
        if pipeline.pk not in known:
            known.update(pipelines_readiness([pipeline]))
        return known[pipeline.pk]

    def get_ready(self, pipeline: Pipeline) -> bool:
        return self._readiness(pipeline).ready

    def get_waiting_for(self, pipeline: Pipeline) -> list[str]:
        return self._readiness(pipeline).reasons(self.context.get("language"))

    def get_documents_reading(self, pipeline: Pipeline) -> int:
        return self._readiness(pipeline).documents_reading


def _output(pipeline: Pipeline | Any, request: Request, *, many: bool = False) -> Any:
    context: dict[str, Any] = {"language": request.LANGUAGE_CODE}
    if many:
        pipeline = list(pipeline)
        context["readiness"] = pipelines_readiness(pipeline)
    return PipelineOutputSerializer(pipeline, many=many, context=context).data


def _pipeline(request: Request, pipeline_id: int) -> Pipeline:
    return get_for_owner(selectors.pipeline_get, user=request.user, pipeline_id=pipeline_id)


def _knowledge_base(request: Request, knowledge_base_id: int) -> KnowledgeBase:
    """The knowledge base a request body names: a 400 at ``knowledge_base`` when it is not the caller's."""
    return get_for_owner(knowledge_base_get, user=request.user, knowledge_base_id=knowledge_base_id,
                         missing=no_such("knowledge_base", gettext_noop("no such knowledge base"), request.LANGUAGE_CODE))


class PipelineListApi(APIView):
    """The user's pipelines, with whether each can answer now."""

    @extend_schema(operation_id="pipelines_list", parameters=[LANG_PARAMETER],
                   responses=PipelineOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(_output(selectors.pipeline_list(user=request.user), request, many=True))


class PipelineCreateApi(APIView):
    """Save a new pipeline. Invalid trees are refused with every error and its JSON path."""

    @extend_schema_serializer(component_name="PipelineCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="")
        knowledge_base = serializers.IntegerField()
        strategy = serializers.JSONField(help_text='A strategy component reference: {"component", "params"}.')

    @extend_schema(operation_id="pipelines_create", request=InputSerializer,
                   responses={201: PipelineOutputSerializer, 400: None})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        knowledge_base = _knowledge_base(request, data["knowledge_base"])
        pipeline = services.pipeline_create(owner=request.user, name=data["name"], description=data["description"],
                                            knowledge_base=knowledge_base, strategy=data["strategy"])
        return Response(_output(pipeline, request), status=status.HTTP_201_CREATED)


class PipelineDetailApi(APIView):
    """One pipeline with its strategy tree."""

    @extend_schema(operation_id="pipelines_retrieve", parameters=[LANG_PARAMETER], responses=PipelineOutputSerializer)
    def get(self, request: Request, pipeline_id: int) -> Response:
        return Response(_output(_pipeline(request, pipeline_id), request))


class PipelineUpdateApi(APIView):
    """Rename, re-describe, move to another knowledge base, or save a new strategy tree."""

    @extend_schema_serializer(component_name="PipelineUpdate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        description = serializers.CharField(required=False, allow_blank=True)
        knowledge_base = serializers.IntegerField(required=False)
        strategy = serializers.JSONField(required=False)

    @extend_schema(operation_id="pipelines_partial_update", request=InputSerializer,
                   responses={200: PipelineOutputSerializer, 400: None})
    def patch(self, request: Request, pipeline_id: int) -> Response:
        pipeline = _pipeline(request, pipeline_id)
        data = validated(self.InputSerializer, request.data)
        if "knowledge_base" in data:
            data["knowledge_base"] = _knowledge_base(request, data["knowledge_base"])
        pipeline = services.pipeline_update(pipeline=pipeline, **data)
        return Response(_output(pipeline, request))


class PipelineDeleteApi(APIView):
    """Delete a pipeline."""

    @extend_schema(operation_id="pipelines_destroy", responses={204: None})
    def delete(self, request: Request, pipeline_id: int) -> Response:
        services.pipeline_delete(pipeline=_pipeline(request, pipeline_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class PipelineDuplicateApi(APIView):
    """A copy of the pipeline, named "<name> (copy)"."""

    @extend_schema(operation_id="pipelines_duplicate", request=None, responses={201: PipelineOutputSerializer})
    def post(self, request: Request, pipeline_id: int) -> Response:
        copy = services.pipeline_duplicate(pipeline=_pipeline(request, pipeline_id))
        return Response(_output(copy, request), status=status.HTTP_201_CREATED)


@extend_schema_serializer(component_name="PipelineDocumentKnowledgeBase")
class PipelineDocumentKnowledgeBaseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


@extend_schema_serializer(component_name="PipelineDocument")
class PipelineDocumentSerializer(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.IntegerField()
    description = serializers.CharField(required=False)
    knowledge_base = PipelineDocumentKnowledgeBaseSerializer(
        required=False, help_text="The knowledge base it was exported from; an import by its owner keeps it.")
    strategy = serializers.JSONField()


class PipelineExportApi(APIView):
    """The pipeline as one JSON document (DESIGN §6), for download and import."""

    @extend_schema(operation_id="pipelines_export", responses=PipelineDocumentSerializer)
    def get(self, request: Request, pipeline_id: int) -> Response:
        pipeline = _pipeline(request, pipeline_id)
        response = Response(pipeline.document())
        filename = "".join(c if c.isalnum() or c in "-_" else "-" for c in pipeline.name).strip("-") or "pipeline"
        response["Content-Disposition"] = f'attachment; filename="{filename}.json"'
        return response


class PipelineImportApi(APIView):
    """Create a pipeline from an exported document; errors carry ``document.`` paths. Without
    ``knowledge_base`` it goes over the knowledge base the document was exported from, when the
    user has it (by id, or else by its name); otherwise that is a 400 at ``knowledge_base``."""

    @extend_schema_serializer(component_name="PipelineImport")
    class InputSerializer(serializers.Serializer):
        knowledge_base = serializers.IntegerField(required=False, help_text="Default: the document's own, if yours.")
        document = serializers.JSONField()

    @extend_schema(operation_id="pipelines_import", request=InputSerializer,
                   responses={201: PipelineOutputSerializer, 400: None})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        knowledge_base = _knowledge_base(request, data["knowledge_base"]) if "knowledge_base" in data else None
        pipeline = services.pipeline_import(owner=request.user, knowledge_base=knowledge_base,
                                            document=data["document"])
        return Response(_output(pipeline, request), status=status.HTTP_201_CREATED)


class PipelineTemplateListApi(APIView):
    """One-click starting points: NaiveRAG over each retriever preset."""

    @extend_schema_serializer(component_name="PipelineTemplate")
    class OutputSerializer(serializers.Serializer):
        name = serializers.CharField()
        display_name = serializers.CharField()
        description = serializers.CharField()
        icon = serializers.CharField()
        default = serializers.BooleanField()
        available = serializers.BooleanField()
        unavailable_reason = serializers.CharField(allow_null=True)
        unavailable_action = ErrorActionSerializer(
            allow_null=True, help_text="What the user can do about it in the application (install_model), or null.")
        document = PipelineDocumentSerializer()

    @extend_schema(operation_id="pipelines_templates", parameters=[LANG_PARAMETER],
                   responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        # A template may use an installed cross-encoder: one this user may use (their own or shared).
        with models_visible_to(request.user):
            rows = selectors.pipeline_templates(language=request.LANGUAGE_CODE)
        return Response(self.OutputSerializer(rows, many=True).data)


@extend_schema_serializer(component_name="PlaygroundRequest")
class PlaygroundInputSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=2000)
    retriever = serializers.JSONField(required=False, help_text="The retriever tree to try; default: see the operation.")
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=100,
                                     help_text="How many results; default: the retriever's own top_k.")
    allow_llm = serializers.BooleanField(
        default=False, help_text="Run a tree that calls a language model (it costs time or money); otherwise 409.")


@extend_schema_serializer(component_name="PlaygroundResult")
class PlaygroundOutputSerializer(serializers.Serializer):
    score_scale = serializers.CharField(allow_null=True, help_text="What the scores measure: bm25, cosine, rrf, …")
    elapsed_ms = serializers.FloatField()
    results = serializers.ListField(child=serializers.DictField(), help_text=(
        "rank, chunk_id, document_id, document_name, position, page, text, score and explanation (BM25: terms "
        "with each one's contribution, which add up to the score; fusion: sources with each child's rank, score "
        "and contribution)."))
    trace = serializers.DictField(help_text="The run's trace node (DESIGN §4), children included.")


def _playground(request: Request, knowledge_base: KnowledgeBase, default_retriever: Any) -> Response:
    data = validated(PlaygroundInputSerializer, request.data)
    try:
        answer = playground.retriever_try(
            owner=request.user, knowledge_base=knowledge_base, retriever=data.get("retriever", default_retriever),
            question=data["question"], top_k=data.get("top_k"), allow_llm=data["allow_llm"])
    except playground.LanguageModelConsentNeeded as needed:
        return consent_response(needed.components, request.LANGUAGE_CODE)
    except ConfigValidationError:
        raise
    except TrellisError as failed:
        # A failed search says why in its cause; a model that cannot load says so itself.
        cause = failed.__cause__ if isinstance(failed, RetrievalError) and failed.__cause__ else failed
        readable = readable_error(cause)
        return errors_response([message_error("retriever", readable.template, readable.code, request.LANGUAGE_CODE,
                                              **readable.context)], status.HTTP_422_UNPROCESSABLE_ENTITY)
    return Response(answer)


class KnowledgeBasePlaygroundApi(APIView):
    """Try a retriever over one of your knowledge bases (default: the Hybrid preset): each hit's
    text, its score on a named scale, and why it ranks there. Writes nothing."""

    @extend_schema(operation_id="knowledge_bases_playground", request=PlaygroundInputSerializer,
                   responses={200: PlaygroundOutputSerializer, 400: None, 404: None, 409: None, 422: None})
    def post(self, request: Request, knowledge_base_id: int) -> Response:
        knowledge_base = get_for_owner(knowledge_base_get, user=request.user, knowledge_base_id=knowledge_base_id)
        return _playground(request, knowledge_base, default_retriever())


class PipelinePlaygroundApi(APIView):
    """Try a retriever tree over the pipeline's knowledge base: a node of the tree being edited
    ("try this node"), or by default the saved pipeline's own retriever. Writes nothing."""

    @extend_schema(operation_id="pipelines_playground", request=PlaygroundInputSerializer,
                   responses={200: PlaygroundOutputSerializer, 400: None, 404: None, 409: None, 422: None})
    def post(self, request: Request, pipeline_id: int) -> Response:
        pipeline = _pipeline(request, pipeline_id)
        return _playground(request, pipeline.knowledge_base, pipeline.strategy["params"].get("retriever"))
