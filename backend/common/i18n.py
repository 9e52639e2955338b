"""Translating engine messages: a gettext template plus its context, in one language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.utils import translation

from rag.core.errors import FieldError
from rag.core.multilingual import MultilingualString, normalize_language


def translate(template: str, context: Mapping[str, Any] | None, language: str | None, *, fallback: str = "",
              plural: str = "") -> str:
    """``template`` translated into ``language`` and formatted with ``context``; string values
    of the context that are messages themselves ("a PDF document") are translated too, and texts
    given in several languages (``{"en": ..., "es": ...}``) give this language's. With ``plural``,
    the form follows ``context["count"]``."""
    language = normalize_language(language)
    context = context or {}
    with translation.override(language.lower()):
        if plural:
            translated = translation.ngettext(template, plural, int(context.get("count", 0)))
        else:
            translated = translation.gettext(template) if template else ""
        values = {key: _value(value, language) for key, value in context.items()}
    try:
        return translated.format(**values) if translated else fallback
    except (KeyError, IndexError, ValueError):
        return fallback or template


def _value(value: Any, language: str) -> Any:
    if isinstance(value, Mapping) and "en" in value:
        return MultilingualString.from_dict(value).get(language)
    return translation.gettext(value) if isinstance(value, str) and value else value


def language_of_scope(scope: Mapping[str, Any]) -> str:
    """The language a websocket client asked for: ``?lang=``, then the language cookie, then
    ``Accept-Language``."""
    query = parse_qs((scope.get("query_string") or b"").decode("latin-1"))
    if query.get("lang"):
        return normalize_language(query["lang"][0])
    cookies = scope.get("cookies") or {}
    if cookies.get(settings.LANGUAGE_COOKIE_NAME):
        return normalize_language(cookies[settings.LANGUAGE_COOKIE_NAME])
    for name, value in scope.get("headers") or []:
        if name == b"accept-language":
            first = value.decode("latin-1").split(",")[0].split(";")[0].strip()
            return normalize_language(first)
    return "en"


def seeded_text(item: Any, field: str, language: str | None) -> str:
    """``item.field`` in ``language`` when Trellis wrote it in every language (a demo's name,
    kept in ``item.translations``), else as stored: what a user typed reads as they typed it."""
    texts = (getattr(item, "translations", None) or {}).get(field)
    return MultilingualString.from_dict(texts).get(language) if texts else getattr(item, field)


def seeded_text_edit(item: Any, field: str, value: str) -> None:
    """Set ``item.field`` to what a user sent. A value that is one of the field's own
    translations is the same text shown in another language (the builder sends the name it
    shows), so nothing changes; any other value is the user's and replaces them."""
    translations = getattr(item, "translations", None) or {}
    if value in (translations.get(field) or {}).values():
        return
    setattr(item, field, value)
    if field in translations:
        item.translations = {key: texts for key, texts in translations.items() if key != field}

def field_error_data(field: FieldError, language: str | None) -> dict[str, Any]:
    """One engine problem in the API's error shape (path, message in ``language``, code), with its
    ``action`` when the user can fix it in the application."""
    data: dict[str, Any] = {
        "path": field.path,
        "message": translate(field.template, field.context, language, fallback=field.message, plural=field.plural),
        "code": field.code}
    if field.action is not None:
        data["action"] = field.action
    return data
