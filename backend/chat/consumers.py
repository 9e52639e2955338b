"""``ws/chat/<conversation_id>/``: ask, and watch the answer being found and written (DESIGN §8)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from channels.db import database_sync_to_async

from common.permissions import owns
from common.realtime import remember_server_loop
from common.sockets import FORBIDDEN, ClientMessage, JsonSocket, invalid_event
from rag.core.i18n import gettext_noop

from . import selectors, services
from .apis import AskApi
from .models import Conversation


class ChatConsumer(JsonSocket):
    """One conversation's socket. Client messages: ``{"type": "ask", "question", "pipeline_id"?}``
    and ``{"type": "cancel"}``. Server messages are the events of ``services.chat_turn``, in
    order: ``run.started``, ``retrieval.node`` / ``retrieval.round`` as they complete,
    ``generation.delta`` tokens, then ``answer.completed``, ``run.failed`` or ``run.cancelled``.

    The consumer authenticates, checks each message with the REST API's serializer (an ask REST
    would refuse is answered ``run.failed`` with ``code: invalid`` and its ``errors``) and forwards
    the turn's events; the turn itself (building, timing, storing, cancelling) is the service's.
    Each turn is read on a task of its own, so many conversations stream at once; a client that
    leaves cancels its run."""

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

    # -- one handler per client message type --------------------------------------------------

    async def ask(self, fields: dict[str, Any]) -> None:
        if self.busy:
            await self.send_json({"type": "run.failed", "code": "busy", "error": self.text(gettext_noop(
                "a question is already being answered; wait for it or cancel it"))})
            return
        self.busy = True
        assert self.conversation is not None
        events = services.chat_turn(conversation=self.conversation, user=self.scope["user"],
                                    question=fields["question"], pipeline_id=fields["pipeline_id"],
                                    language=self.language)
        self.task = asyncio.create_task(self._forward(events))

    async def cancel(self, fields: dict[str, Any]) -> None:
        if self.busy and self.task is not None:
            self.task.cancel()

    messages = {"ask": ClientMessage(ask, AskApi.InputSerializer), "cancel": ClientMessage(cancel)}

    async def invalid(self, kind: str, errors: list[dict[str, str]]) -> None:
        # The client waits for an ask's final event: a refused ask ends as a failed run.
        await self.send_json(invalid_event("run.failed" if kind == "ask" else "error", errors))

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
