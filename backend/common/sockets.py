"""What every websocket consumer shares: frames read as JSON objects with a ``type``, one
handler per type with the REST serializer of its fields, and every refusal as an event, so a
hostile frame never closes a socket with 1011 and a socket stays usable after bad input.

A client frame that is binary, not JSON, not an object, of an unknown type or with invalid
fields is answered ``{"type": "error", "code", "error"}`` (``errors`` too for invalid fields, in
the API's ``[{"path", "message", "code"}]`` shape, in the client's language). A path no route
matches is accepted and closed with ``4404``, as a path to someone else's object is with
``4403``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.utils import translation
from rest_framework import serializers

from common.api import serializer_errors
from common.i18n import language_of_scope, translate
from rag.core.i18n import gettext_noop
from rag.core.multilingual import normalize_language

FORBIDDEN = 4403
NOT_FOUND = 4404


@dataclass(frozen=True)
class ClientMessage:
    """How a consumer takes one client message ``type``: ``handler(consumer, fields)`` with the
    fields ``serializer`` validated (none: the message carries no fields)."""

    handler: Callable[..., Awaitable[None]]
    serializer: type[serializers.Serializer] | None = None


def frame_fields(serializer_class: type[serializers.Serializer], content: dict[str, Any],
                 language: str | None) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """``content`` (a frame's object, its ``type`` left out) validated by ``serializer_class``:
    the validated fields and no errors, or None and each problem at its path, in ``language``.

    The same serializer validates the REST request of the same operation, so both transports
    refuse exactly the same input."""
    fields = {key: value for key, value in content.items() if key != "type"}
    with translation.override(normalize_language(language).lower()):
        serializer = serializer_class(data=fields)
        if serializer.is_valid():
            return dict(serializer.validated_data), []
        return None, serializer_errors(serializer.errors)


class JsonSocket(AsyncJsonWebsocketConsumer):
    """A JSON websocket whose client messages are declared in ``messages`` (``{type: ClientMessage}``);
    a consumer that only sends declares none and answers every frame with an error event."""

    messages: ClassVar[dict[str, ClientMessage]] = {}

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if text_data is None:
            await self.refuse("binary_frame", gettext_noop("send messages as JSON text, not binary frames"))
            return
        try:
            content = json.loads(text_data)
        except (ValueError, RecursionError):
            await self.refuse("not_json", gettext_noop("a message must be a JSON object"))
            return
        kind = content.get("type") if isinstance(content, dict) else None
        message = self.messages.get(kind) if isinstance(kind, str) else None
        if message is None:
            await self.refuse("unknown_type", self.unknown_type_template(), kind=kind if isinstance(kind, str) else "",
                              known=", ".join(self.messages) or "-")
            return
        if message.serializer is None:
            await message.handler(self, {})
            return
        fields, errors = frame_fields(message.serializer, content, self.language)
        if fields is None:
            await self.invalid(kind, errors)
            return
        await message.handler(self, fields)

    def unknown_type_template(self) -> str:
        if not self.messages:
            return gettext_noop("this socket only sends; it takes no messages (got {kind!r})")
        return gettext_noop("unknown message type {kind!r}; use {known}")

    async def invalid(self, kind: str, errors: list[dict[str, str]]) -> None:
        """Answer a message of type ``kind`` whose fields are invalid (consumers may answer
        with their own final event)."""
        await self.send_json(invalid_event("error", errors))

    async def refuse(self, code: str, template: str, **context: Any) -> None:
        await self.send_json({"type": "error", "code": code, "error": self.text(template, **context)})

    @property
    def language(self) -> str:
        return language_of_scope(self.scope)

    def text(self, template: str, **context: Any) -> str:
        return translate(template, context, self.language, fallback=template.format(**context))


def invalid_event(kind: str, errors: list[dict[str, str]]) -> dict[str, Any]:
    """The event refusing invalid fields: every problem, and one readable line of them all."""
    summary = "; ".join(f"{error['path']}: {error['message']}" if error["path"] else error["message"]
                        for error in errors)
    return {"type": kind, "code": "invalid", "error": summary, "errors": errors}


class UnknownPathSocket(AsyncWebsocketConsumer):
    """Every websocket path no route matches (``/ws/knowledge/abc/``): accepted and closed with
    4404, so the client can tell, instead of the handshake failing with a server error."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=NOT_FOUND)
