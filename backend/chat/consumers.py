"""``ws/chat/<conversation_id>/``: ask, and watch the answer being found and written (DESIGN §8)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from common.i18n import language_of_scope, translate
from common.permissions import owns
from common.realtime import remember_server_loop
from rag.core.i18n import gettext_noop

from . import selectors, services
from .models import Conversation

FORBIDDEN = 4403


class ChatConsumer(AsyncJsonWebsocketConsumer):
    """One conversation's socket. Client messages: ``{"type": "ask", "question", "pipeline_id"?}``
    and ``{"type": "cancel"}``. Server messages are the events of ``services.chat_turn``, in
    order: ``run.started``, ``retrieval.node`` / ``retrieval.round`` as they complete,
    ``generation.delta`` tokens, then ``answer.completed``, ``run.failed`` or ``run.cancelled``.

    The consumer authenticates, checks each message and forwards the turn's events; the turn
    itself (building, timing, storing, cancelling) is the service's. Each turn is read on a
    task of its own, so many conversations stream at once; a client that leaves cancels its run."""

    conversation: Conversation | None = None
    task: asyncio.Task | None = None
    busy = False
    """A question is being answered; false again before the final event goes out, so a client
    may ask its next question the moment it has the answer."""

    async def connect(self) -> None:
        self.conversation = await self._conversation()
        await self.accept()
        if self.conversation is None:
            await self.close(code=FORBIDDEN)
            return
        remember_server_loop()

    async def disconnect(self, code: int) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except (ValueError, RecursionError):
            return None  # answered as an unknown message, not by closing the socket with an error

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        handler = self.handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            await self.send_json({"type": "error", "code": "unknown_type", "error": self._text(gettext_noop(
                "unknown message type {kind!r}; use ask or cancel"), kind=kind)})
            return
        await handler(self, content)

    # -- one handler per client message type --------------------------------------------------

    async def ask(self, content: dict[str, Any]) -> None:
        if self.busy:
            await self.send_json({"type": "run.failed", "code": "busy", "error": self._text(gettext_noop(
                "a question is already being answered; wait for it or cancel it"))})
            return
        self.busy = True
        assert self.conversation is not None
        events = services.chat_turn(conversation=self.conversation, user=self.scope["user"],
                                    question=str(content.get("question") or ""),
                                    pipeline_id=content.get("pipeline_id"), language=language_of_scope(self.scope))
        self.task = asyncio.create_task(self._forward(events))

    async def cancel(self, content: dict[str, Any]) -> None:
        if self.busy and self.task is not None:
            self.task.cancel()

    handlers: dict[str, Callable[[ChatConsumer, dict[str, Any]], Awaitable[None]]] = {"ask": ask, "cancel": cancel}

    # -----------------------------------------------------------------------------------------

    async def _forward(self, events: AsyncGenerator[dict[str, Any], None]) -> None:
        try:
            async for event in events:
                await self._send(event)
        except (asyncio.CancelledError, Exception) as exc:
            # Cancelled, or a send failed, while an event was going out: hand it to the turn,
            # which stores the outcome and answers with its last event.
            try:
                final = await events.athrow(exc)
            except (StopAsyncIteration, asyncio.CancelledError, Exception):
                return
            await self._send(final)
        finally:
            self.busy = False

    async def _send(self, event: dict[str, Any]) -> None:
        final = event["type"] in services.FINAL_EVENTS
        if final:
            self.busy = False
        try:
            await self.send_json(event)
        except Exception:
            if not final:
                raise
            # the client is gone; the answer is stored either way

    @database_sync_to_async
    def _conversation(self) -> Conversation | None:
        user = self.scope.get("user")
        conversation_id = self.scope["url_route"]["kwargs"]["conversation_id"]
        if not owns(user, "conversation_id", conversation_id):
            return None
        return selectors.conversation_get(user=user, conversation_id=conversation_id)

    def _text(self, template: str, **context: Any) -> str:
        return translate(template, context, language_of_scope(self.scope), fallback=template.format(**context))
