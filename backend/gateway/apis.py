"""The OpenAI-compatible API: ``GET /v1/models`` lists the caller's pipelines, and
``POST /v1/chat/completions`` asks one, answered by the chat's own run
(``chat.services.chat_run_follow``), so the conversation, its answer and its trace are on the
chat page as if asked there.

These views are plain Django (not DRF): a streamed answer is an async response, and errors
are in OpenAI's shape (``{"error": {"message", "type", "param", "code"}}``), which clients of
that API parse. They are outside ``/api/`` and its OpenAPI schema."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from accounts.models import ApiToken
from chat.models import Conversation
from chat.services import FINAL_EVENTS, chat_run_follow, conversation_continue_or_create, conversation_delete
from pipelines.models import Pipeline
from pipelines.selectors import pipeline_get_by_slug, pipeline_list, pipeline_slugs
from rag.core.i18n import gettext_noop

from . import completions
from .auth import Refusal, api_token_check
from .completions import BadRequest, ChatRequest, error_body

logger = logging.getLogger(__name__)

NO_SUCH_MODEL = gettext_noop("you have no pipeline {model!r}; GET /v1/models lists yours")
NO_SUCH_PATH = gettext_noop("no such endpoint: this server offers GET /v1/models and POST /v1/chat/completions")
NOT_JSON = gettext_noop("the body is not JSON")
STOPPED = gettext_noop("the answer was stopped before it was finished")
REFUSAL_STATUS = {"busy": 409, "too_long": 400, "too_many_runs": 429}
REFUSAL_CODE = {"too_long": "context_length_exceeded"}


def _language(request: HttpRequest) -> str | None:
    return getattr(request, "LANGUAGE_CODE", None)


def _refused(request: HttpRequest, refusal: Refusal) -> JsonResponse:
    kind = "rate_limit_error" if refusal.status == 429 else "invalid_request_error"
    response = JsonResponse(error_body(refusal.template, refusal.code, _language(request), kind=kind,
                                       **refusal.context), status=refusal.status)
    if refusal.retry_after is not None:
        response["Retry-After"] = str(refusal.retry_after)
    if refusal.status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="trellis"'
    return response


def _model(pipeline: Pipeline, slug: str) -> dict[str, Any]:
    return {"id": slug, "object": "model", "created": int(pipeline.created_at.timestamp()),
            "owned_by": pipeline.owner.get_username(), "name": pipeline.name,
            "knowledge_base": pipeline.knowledge_base.name}


def _models(user: Any) -> list[dict[str, Any]]:
    slugs = pipeline_slugs(user=user)
    return [_model(pipeline, slugs[pipeline.pk]) for pipeline in pipeline_list(user=user).select_related("owner")]


def _pipeline_named(user: Any, model: str) -> Pipeline:
    """The user's pipeline ``model`` names; ``Pipeline.DoesNotExist`` for a name no pipeline can
    have (a number past any id, a digit of another script, a name past any slug's length)."""
    if len(model) > completions.MODEL_MAX_LENGTH or (model.isdigit() and not (model.isascii() and len(model) < 19)):
        raise Pipeline.DoesNotExist(model[:50])
    return pipeline_get_by_slug(user=user, slug=model)


def _model_named(user: Any, model: str) -> dict[str, Any]:
    pipeline = _pipeline_named(user, model)
    return _model(pipeline, pipeline_slugs(user=user)[pipeline.pk])


class _TokenApi(View):
    """Authenticates every request by its API token before the handler runs."""

    token: ApiToken

    async def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        checked = await api_token_check(request.headers.get("Authorization"))
        if isinstance(checked, Refusal):
            return _refused(request, checked)
        self.token = checked
        return await super().dispatch(request, *args, **kwargs)

    async def http_method_not_allowed(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return JsonResponse(error_body(NO_SUCH_PATH, "method_not_allowed", _language(request)), status=405)


class ModelListApi(_TokenApi):
    """``GET /v1/models``: the caller's pipelines, by the names ``model`` takes."""

    async def get(self, request: HttpRequest) -> HttpResponse:
        return JsonResponse({"object": "list", "data": await database_sync_to_async(_models)(self.token.owner)})


class ModelDetailApi(_TokenApi):
    """``GET /v1/models/<model>``: one of the caller's pipelines."""

    async def get(self, request: HttpRequest, model: str) -> HttpResponse:
        try:
            return JsonResponse(await database_sync_to_async(_model_named)(self.token.owner, model))
        except Pipeline.DoesNotExist:
            return JsonResponse(error_body(NO_SUCH_MODEL, "model_not_found", _language(request), model=model[:50]),
                                status=404)


@method_decorator(csrf_exempt, name="dispatch")  # a bearer token, never a cookie, authenticates these requests
class ChatCompletionApi(_TokenApi):
    """``POST /v1/chat/completions``: ask the pipeline ``model`` the last user message, with the
    earlier turns as the history; one completion, or server-sent chunks with ``stream: true``."""

    async def post(self, request: HttpRequest) -> HttpResponse:
        language = _language(request)
        try:
            body = json.loads(request.body or b"null")
        except (ValueError, RecursionError):
            return JsonResponse(error_body(NOT_JSON, "invalid_json", language), status=400)
        try:
            asked = completions.chat_request(body)
        except BadRequest as exc:
            return JsonResponse(error_body(exc.template, "invalid_value", language, param=exc.param, **exc.context),
                                status=400)
        owner = self.token.owner
        try:
            pipeline = await database_sync_to_async(_pipeline_named)(owner, asked.model)
        except Pipeline.DoesNotExist:
            return JsonResponse(error_body(NO_SUCH_MODEL, "model_not_found", language, param="model",
                                           model=asked.model), status=404)
        conversation, created = await database_sync_to_async(conversation_continue_or_create)(
            owner=owner, pipeline=pipeline, history=asked.history, origin=Conversation.Origin.API)
        events = chat_run_follow(conversation=conversation, user=owner, question=asked.question,
                                 pipeline_id=pipeline.pk, language=language)
        first = await anext(events)
        if first["type"] == "run.failed" and first.get("message_id") is None:
            if created:  # nothing of this request is worth keeping
                await database_sync_to_async(conversation_delete)(conversation=conversation)
            code = first.get("code", "not_answered")
            return JsonResponse({"error": {"message": first["error"], "type": "invalid_request_error",
                                           "param": "messages", "code": REFUSAL_CODE.get(code, code)}},
                                status=REFUSAL_STATUS.get(code, 400))
        trace_url = request.build_absolute_uri(f"/chat/{conversation.pk}")
        if asked.stream:
            response = StreamingHttpResponse(_stream(first, events, asked, trace_url, language),
                                             content_type="text/event-stream")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"  # a proxy in front must pass each chunk on at once
            return response
        final = first
        async for event in events:
            final = event
        return _completed(final, asked, trace_url, language)


def _completed(final: dict[str, Any], asked: ChatRequest, trace_url: str, language: str | None) -> JsonResponse:
    if final["type"] == "answer.completed":
        return JsonResponse(completions.completion(final, asked.model, trace_url))
    return JsonResponse(_failure(final, trace_url, language), status=500)


def _failure(final: dict[str, Any], trace_url: str, language: str | None) -> dict[str, Any]:
    """The error of a run that ended without an answer (its message and trace are stored)."""
    if final["type"] == "run.failed":
        body = {"error": {"message": final["error"], "type": "server_error", "param": None,
                          "code": final.get("code") or "error"}}
    else:
        body = error_body(STOPPED, "cancelled", language, kind="server_error")
    body["trellis"] = {"trace_url": trace_url, "message_id": final.get("message_id")}
    return body


async def _stream(first: dict[str, Any], events: AsyncIterator[dict[str, Any]], asked: ChatRequest, trace_url: str,
                  language: str | None) -> AsyncIterator[bytes]:
    message_id = first["message_id"]
    # Asked to include usage, every chunk carries "usage": null and a last one holds it, as OpenAI streams.
    extra: dict[str, Any] = {"usage": None} if asked.include_usage else {}
    yield completions.chunk(message_id, asked.model, {"role": "assistant", "content": ""}, **extra)
    event = first
    while event["type"] not in FINAL_EVENTS:
        event = await anext(events)
        if event["type"] == "generation.delta" and event["text"]:
            yield completions.chunk(message_id, asked.model, {"content": event["text"]}, **extra)
    if event["type"] == "answer.completed":
        if event.get("declined"):
            # The draft streamed is not supported by the documents; a stream cannot take it back,
            # so the reply that replaces it follows (the stored message holds the reply alone).
            yield completions.chunk(message_id, asked.model, {"content": "\n\n" + event["answer"]}, **extra)
        yield completions.chunk(message_id, asked.model, {}, "stop", trellis=completions.extension(event, trace_url),
                                **extra)
        if asked.include_usage:
            yield completions.usage_chunk(message_id, asked.model, completions.usage(event.get("trace") or {}))
    else:
        yield completions.sse(_failure(event, trace_url, language))
    yield completions.DONE


async def unknown_path(request: HttpRequest, path: str = "") -> HttpResponse:
    return JsonResponse(error_body(NO_SUCH_PATH, "unknown_url", _language(request)), status=404)
