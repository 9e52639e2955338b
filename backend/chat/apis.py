"""Chat API: conversations, their messages with traces, and asking without a websocket."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import Invalid, get_for_owner, message_error, no_such, validated
from common.i18n import translate
from pipelines.models import Pipeline
from pipelines.selectors import pipeline_get
from rag.core.i18n import gettext_noop

from . import selectors, services
from .models import Conversation, Message

STOPPED = gettext_noop("the answer was stopped before it was finished")


@extend_schema_serializer(component_name="Conversation")
class ConversationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    origin = serializers.ChoiceField(choices=Conversation.Origin.choices,
                                     help_text="Where it was started: web (the chat page or this API), api "
                                               "(/v1/chat/completions) or mcp (an MCP tool).")
    pipeline = serializers.IntegerField(source="pipeline_id", allow_null=True)
    pipeline_name = serializers.CharField(source="pipeline.name", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="ChatMessage")
class MessageOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Message.Role.choices)
    text = serializers.CharField()
    citations = serializers.JSONField()
    status = serializers.ChoiceField(choices=Message.Status.choices)
    error = serializers.CharField()
    pipeline = serializers.IntegerField(source="pipeline_id", allow_null=True)
    timings = serializers.JSONField()
    trace = serializers.SerializerMethodField()
    rounds = serializers.SerializerMethodField()
    chunks = serializers.SerializerMethodField()
    declined = serializers.SerializerMethodField(
        help_text="Set when the documents do not hold the answer: which check decided (`relevance`: no passage "
                  "was close enough to the question; `answer`: the model said so; `support`: nothing the draft "
                  "said was supported by the passage it cited; `number`: the question asked only for a number and "
                  "the draft stated none), why, and the closest passages.")
    unsupported = serializers.SerializerMethodField(
        help_text="The answer's sentences that the passage they cite does not support (flagged, not removed).")
    created_at = serializers.DateTimeField()

    def _trace(self, message: Message) -> Any:
        try:
            return message.trace
        except Message.trace.RelatedObjectDoesNotExist:
            return None

    def get_trace(self, message: Message) -> dict[str, Any] | None:
        trace = self._trace(message)
        return trace.trace if trace else None

    def get_rounds(self, message: Message) -> list[dict[str, Any]]:
        trace = self._trace(message)
        return trace.rounds if trace else []

    def get_chunks(self, message: Message) -> list[dict[str, Any]]:
        trace = self._trace(message)
        return trace.chunks if trace else []

    def get_declined(self, message: Message) -> dict[str, Any] | None:
        trace = self._trace(message)
        return trace.trace.get("declined") if trace else None

    def get_unsupported(self, message: Message) -> list[str]:
        trace = self._trace(message)
        return list(trace.trace.get("unsupported") or []) if trace else []


def _conversation(request: Request, conversation_id: int) -> Conversation:
    return get_for_owner(selectors.conversation_get, user=request.user, conversation_id=conversation_id)


def _pipeline(request: Request, pipeline_id: int | None, path: str = "pipeline") -> Pipeline | None:
    """The pipeline a request body names (None for none): a 400 at ``path`` when it is not the caller's."""
    if pipeline_id is None:
        return None
    return get_for_owner(pipeline_get, user=request.user, pipeline_id=pipeline_id,
                         missing=no_such(path, gettext_noop("no such pipeline"), request.LANGUAGE_CODE))


UNKNOWN_ORIGIN = gettext_noop("unknown origin {origin!r} (choose from web, api, mcp)")


class ConversationListApi(APIView):
    """The user's conversations, most recent first; ``origin`` keeps those started in the given
    places (``?origin=api,mcp``: the ones other programs asked)."""

    @extend_schema(operation_id="conversations_list", responses=ConversationOutputSerializer(many=True),
                   parameters=[OpenApiParameter("origin", OpenApiTypes.STR, description=(
                       "Comma-separated origins to keep: web, api, mcp. Omitted: every conversation."))])
    def get(self, request: Request) -> Response:
        origins = None
        if "origin" in request.query_params:
            origins = [origin.strip() for origin in request.query_params["origin"].split(",") if origin.strip()]
            known = Conversation.Origin.values
            unknown = [origin for origin in origins if origin not in known]
            if unknown:
                raise Invalid([message_error("origin", UNKNOWN_ORIGIN, "invalid_choice", request.LANGUAGE_CODE,
                                             origin=unknown[0][:20])])
        conversations = selectors.conversation_list(user=request.user, origins=origins)
        return Response(ConversationOutputSerializer(conversations, many=True).data)


class ConversationCreateApi(APIView):
    """Start a conversation, optionally with a pipeline and a title (else the first question)."""

    @extend_schema_serializer(component_name="ConversationCreate")
    class InputSerializer(serializers.Serializer):
        title = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        pipeline = serializers.IntegerField(required=False, allow_null=True, default=None)

    @extend_schema(operation_id="conversations_create", request=InputSerializer,
                   responses={201: ConversationOutputSerializer})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        conversation = services.conversation_create(owner=request.user, pipeline=_pipeline(request, data["pipeline"]),
                                                    title=data["title"])
        return Response(ConversationOutputSerializer(conversation).data, status=status.HTTP_201_CREATED)


class ConversationDetailApi(APIView):
    """One conversation."""

    @extend_schema(operation_id="conversations_retrieve", responses=ConversationOutputSerializer)
    def get(self, request: Request, conversation_id: int) -> Response:
        return Response(ConversationOutputSerializer(_conversation(request, conversation_id)).data)


class ConversationUpdateApi(APIView):
    """Rename a conversation or switch its pipeline."""

    @extend_schema_serializer(component_name="ConversationUpdate")
    class InputSerializer(serializers.Serializer):
        title = serializers.CharField(max_length=200, required=False, allow_blank=True)
        pipeline = serializers.IntegerField(required=False)

    @extend_schema(operation_id="conversations_partial_update", request=InputSerializer,
                   responses=ConversationOutputSerializer)
    def patch(self, request: Request, conversation_id: int) -> Response:
        conversation = _conversation(request, conversation_id)
        data = validated(self.InputSerializer, request.data)
        conversation = services.conversation_update(conversation=conversation, pipeline=_pipeline(request, data.get("pipeline")),
                                                    title=data.get("title"))
        return Response(ConversationOutputSerializer(conversation).data)


class ConversationDeleteApi(APIView):
    """Delete a conversation with its messages and traces."""

    @extend_schema(operation_id="conversations_destroy", responses={204: None})
    def delete(self, request: Request, conversation_id: int) -> Response:
        services.conversation_delete(conversation=_conversation(request, conversation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MessageListApi(APIView):
    """Every message of the conversation, each answer with its full trace, round summaries and
    the chunks the model was given."""

    @extend_schema(operation_id="conversations_messages", responses=MessageOutputSerializer(many=True))
    def get(self, request: Request, conversation_id: int) -> Response:
        messages = selectors.message_list(conversation=_conversation(request, conversation_id))
        return Response(MessageOutputSerializer(messages, many=True).data)


@extend_schema_serializer(component_name="AnswerCompleted")
class AnswerSerializer(serializers.Serializer):
    message_id = serializers.IntegerField()
    answer = serializers.CharField()
    citations = serializers.JSONField()
    trace = serializers.JSONField()


class AskApi(APIView):
    """Ask and wait for the whole answer: the same payload as the websocket's
    ``answer.completed``, for clients without websockets."""

    @extend_schema_serializer(component_name="Ask")
    class InputSerializer(serializers.Serializer):
        question = serializers.CharField(max_length=services.QUESTION_MAX_LENGTH)
        pipeline_id = serializers.IntegerField(required=False, allow_null=True, default=None)

    @extend_schema(operation_id="conversations_ask", request=InputSerializer,
                   responses={200: AnswerSerializer, 400: None, 409: None, 429: None})
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = _conversation(request, conversation_id)
        data = validated(self.InputSerializer, request.data)
        _pipeline(request, data["pipeline_id"])  # a 400 before the question is recorded
        final = services.chat_ask(conversation=conversation, user=request.user, question=data["question"],
                                  pipeline_id=data["pipeline_id"], language=request.LANGUAGE_CODE)
        if final["type"] == "run.cancelled":  # stopped from a socket of the conversation meanwhile
            return Response({"detail": translate(STOPPED, {}, request.LANGUAGE_CODE, fallback=STOPPED),
                             "code": "cancelled", "answer": final.get("answer", ""),
                             "message_id": final.get("message_id")}, status=status.HTTP_409_CONFLICT)
        if final["type"] != "answer.completed":
            code = final.get("code")
            if code == "too_many_runs":
                return Response({"detail": final["error"], "code": code}, status=status.HTTP_429_TOO_MANY_REQUESTS)
            return Response({"detail": final["error"], "code": "run_limit" if code == "run_limit" else "not_answered"},
                            status=status.HTTP_409_CONFLICT)
        final.pop("type")
        return Response(AnswerSerializer(final).data)
