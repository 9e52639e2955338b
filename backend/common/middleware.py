"""Request middleware shared by every app."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from rag.core.multilingual import normalize_language


def django_language(tag: str | None) -> str:
    """The Django language code (``en``, ``es``, ``zh-hant``) for any BCP 47 tag."""
    return normalize_language(tag).lower()


class QueryLanguageMiddleware:
    """Let ``?lang=es`` override ``Accept-Language`` for one request (links, API clients)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        tag = request.GET.get("lang")
        if not tag:
            return self.get_response(request)
        language = django_language(tag)
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        response.headers.setdefault("Content-Language", language)
        return response
