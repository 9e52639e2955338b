"""Request size limits, refused in the API's error shape and naming the limit.

- A body larger than its limit is refused ``413`` from its ``Content-Length``, before any of it
  is read, and, without one (a chunked body), as soon as the bytes read pass the limit: by
  ``RequestBodyLimit`` around the ASGI application (daphne), and by
  ``RequestBodyLimitMiddleware`` under WSGI. The limit of a multipart upload is
  ``TRELLIS_MAX_REQUEST_BYTES``; of any other body, Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``.
- Django's own refusals met while a body is parsed (too large, too many files, too many
  fields) become the same JSON answers (``limit_refusal``), from a view (the API's exception
  handler) or from a middleware (``handler400``).

Files inside an upload have their own limit, applied while they are read (``common.uploads``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse

from common.i18n import language_of_scope, translate
from rag.core.i18n import gettext_noop
from rag.documents.parsers.base import readable_size

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

BODY_TOO_LARGE = gettext_noop("the request body is {size}, larger than the limit of {limit}")
BODY_PAST_LIMIT = gettext_noop("the request body is larger than the limit of {limit}")
TOO_MANY_FILES = gettext_noop("one upload may carry at most {limit} files")
TOO_MANY_FIELDS = gettext_noop("one request may carry at most {limit} fields")


def body_limit(content_type: str) -> int | None:
    """The largest body of a request of ``content_type`` (None: no limit)."""
    if content_type.split(";")[0].strip().lower() == "multipart/form-data":
        return settings.TRELLIS_MAX_REQUEST_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _error(template: str, code: str, path: str, language: str | None, **context: Any) -> dict[str, str]:
    return {"path": path, "message": translate(template, context, language, fallback=template.format(**context)),
            "code": code}


def too_large_error(size: int | None, limit: int, language: str | None) -> dict[str, str]:
    if size is None:
        return _error(BODY_PAST_LIMIT, "too_large", "", language, limit=readable_size(limit))
    return _error(BODY_TOO_LARGE, "too_large", "", language, size=readable_size(size), limit=readable_size(limit))


def limit_refusal(exc: BaseException, request: HttpRequest) -> tuple[int, dict[str, str]] | None:
    """The status and error for one of Django's request-size refusals (None for anything else)."""
    language = getattr(request, "LANGUAGE_CODE", None)
    if isinstance(exc, RequestDataTooBig):
        limit = body_limit(request.content_type or "") or settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        return 413, too_large_error(_content_length(request.META.get("CONTENT_LENGTH")), limit, language)
    if isinstance(exc, TooManyFilesSent):
        return 400, _error(TOO_MANY_FILES, "too_many_files", "files", language,
                           limit=settings.DATA_UPLOAD_MAX_NUMBER_FILES)
    if isinstance(exc, TooManyFieldsSent):
        return 400, _error(TOO_MANY_FIELDS, "too_many_fields", "", language,
                           limit=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)
    return None


def refusal_response(path: str, status: int, error: dict[str, str]) -> HttpResponse:
    """The answer: the API's error shape under ``/api/``, the message as text elsewhere."""
    if path.startswith("/api/"):
        return JsonResponse({"errors": [error]}, status=status)
    return HttpResponse(error["message"], status=status, content_type="text/plain; charset=utf-8")


def _content_length(raw: Any) -> int | None:
    try:
        length = int(raw)
    except (TypeError, ValueError):
        return None
    return length if length >= 0 else None


class RequestBodyLimitMiddleware:
    """Under WSGI, where nothing has read the body yet: a ``Content-Length`` past the limit is
    refused before the view (and Django's parsers) read any of it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit(request.META.get("CONTENT_TYPE", ""))
        declared = _content_length(request.META.get("CONTENT_LENGTH"))
        if limit is not None and declared is not None and declared > limit:
            language = getattr(request, "LANGUAGE_CODE", None)
            return refusal_response(request.path, 413, too_large_error(declared, limit, language))
        return self.get_response(request)


class RequestBodyLimit:
    """ASGI middleware around Django's HTTP application, which otherwise reads a whole body
    (into a temporary file) before any middleware sees the request. A ``Content-Length`` past
    the limit is answered at once; a body without one is cut off when the bytes read pass the
    limit (the application sees a disconnect), and answered."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.lower(): value for name, value in scope.get("headers") or []}
        limit = body_limit(headers.get(b"content-type", b"").decode("latin-1"))
        if limit is None:
            await self.app(scope, receive, send)
            return
        declared = _content_length(headers.get(b"content-length", b"").decode("latin-1") or None)
        if declared is not None and declared > limit:
            await self._refuse(scope, send, declared, limit)
            return
        received = 0
        cut = False

        async def limited_receive() -> dict[str, Any]:
            nonlocal received, cut
            if cut:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    cut = True
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, limited_receive, send)
        if cut:
            await self._refuse(scope, send, None, limit)

    @staticmethod
    async def _refuse(scope: Scope, send: Send, size: int | None, limit: int) -> None:
        response = refusal_response(scope.get("path", ""), 413, too_large_error(size, limit, language_of_scope(scope)))
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": [(name.lower().encode("latin-1"), value.encode("latin-1"))
                                for name, value in response.items()] + [(b"connection", b"close")]})
        await send({"type": "http.response.body", "body": response.content})
