"""``ws/chat/<conversation_id>/``: ask, and watch the answer being found and written (DESIGN §8)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from config.i18n import language_of_scope, translate
from config.permissions import owns
from rag.core.i18n import gettext_noop
from config.realtime import remember_server_loop
from pipelines.models import Pipeline
from pipelines.selectors import pipeline_get

from . import selectors, services
from .models import Conversation

logger = logging.getLogger(__name__)
FORBIDDEN = 4403
FORWARDED = ("retrieval.node", "retrieval.round")


class ChatConsumer(AsyncJsonWebsocketConsumer):
    """One conversation's socket. Client messages: ``{"type": "ask", "question", "pipeline_id"?}``
    and ``{"type": "cancel"}``. Server messages, in order: ``run.started``, ``retrieval.node`` /
    ``retrieval.round`` as they complete, ``generation.delta`` tokens, then ``answer.completed``,
    ``run.failed`` or ``run.cancelled``. The pipeline runs on its own thread, so many
    conversations stream at once; a client that leaves cancels its run."""

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
        if kind == "ask":
            if self.busy:
                await self.send_json({"type": "run.failed", "error": self._text(gettext_noop(
                    "a question is already being answered; wait for it or cancel it"))})
                return
            self.busy = True
            self.task = asyncio.create_task(self._answer(str(content.get("question") or ""),
                                                         content.get("pipeline_id")))
        elif kind == "cancel":
            if self.busy and self.task is not None:
                self.task.cancel()
        else:
            await self.send_json({"type": "error", "error": self._text(gettext_noop(
                "unknown message type {kind!r}; use ask or cancel"), kind=kind)})

    @database_sync_to_async
    def _conversation(self) -> Conversation | None:
        user = self.scope.get("user")
        conversation_id = self.scope["url_route"]["kwargs"]["conversation_id"]
        if not owns(user, "conversation_id", conversation_id):
            return None
        return selectors.conversation_get(user=user, conversation_id=conversation_id)

    async def _start(self, question: str, pipeline_id: Any) -> services.Turn:
        # Off the shared ORM thread: fifty conversations starting together must not queue there.
        return await database_sync_to_async(self._start_sync, thread_sensitive=False)(question, pipeline_id)

    def _start_sync(self, question: str, pipeline_id: Any) -> services.Turn:
        pipeline = None
        if pipeline_id is not None:
            try:
                pipeline = pipeline_get(user=self.scope["user"], pipeline_id=int(pipeline_id))
            except (Pipeline.DoesNotExist, TypeError, ValueError):
                raise services.ChatError(gettext_noop("no pipeline {id!r}"), id=pipeline_id) from None
        self.conversation.refresh_from_db()
        return services.chat_turn_start(conversation=self.conversation, question=question, pipeline=pipeline)

    async def _answer(self, question: str, pipeline_id: Any) -> None:
        try:
            turn = await self._start(question, pipeline_id)
        except services.ChatError as exc:
            self.busy = False
            await self.send_json({"type": "run.failed", "error": exc.translated(language_of_scope(self.scope)),
                                  "message_id": None})
            return
        await self.send_json({"type": "run.started", "message_id": turn.answer.pk,
                              "question_message_id": turn.question.pk, "pipeline_id": turn.pipeline.pk})
        pieces: list[str] = []
        trace: dict[str, Any] = {}
        finished = False
        try:
            # Building loads models and indices: off the loop, and off the shared ORM thread.
            strategy = await database_sync_to_async(turn.strategy, thread_sensitive=False)()
            async for event in strategy.astream(question, history=turn.history):
                kind = event["type"]
                if kind == "generation.delta":
                    if turn.first_token_ms is None:
                        turn.first_token_ms = round((time.perf_counter() - turn.started) * 1000, 1)
                    pieces.append(event["text"])
                    await self.send_json(event)
                elif kind in FORWARDED:
                    await self.send_json(event)
                elif kind == "answer.completed":
                    payload = await database_sync_to_async(_complete, thread_sensitive=False)(turn, event["state"])
                    finished, self.busy = True, False
                    await self.send_json({"type": "answer.completed", **payload})
                elif kind == "run.failed":
                    trace = event["trace"]
                    await database_sync_to_async(services.chat_turn_fail)(turn=turn, error=event["error"],
                                                                          state=event["state"])
                    finished, self.busy = True, False
                    await self.send_json({"type": "run.failed", "error": event["error"], "message_id": turn.answer.pk})
        except asyncio.CancelledError:
            if finished:
                return  # the answer is stored; only the tail of the event stream was cut
            await database_sync_to_async(services.chat_turn_cancel)(turn=turn, text="".join(pieces), trace=trace)
            self.busy = False
            await self._send_quietly({"type": "run.cancelled", "message_id": turn.answer.pk, "answer": "".join(pieces)})
        except Exception as exc:
            logger.exception("answering in conversation %s failed", self.conversation.pk)
            error = f"{type(exc).__name__}: {exc}"
            await database_sync_to_async(services.chat_turn_fail)(turn=turn, error=error)
            self.busy = False
            await self._send_quietly({"type": "run.failed", "error": error, "message_id": turn.answer.pk})

    def _text(self, template: str, **context: Any) -> str:
        return translate(template, context, language_of_scope(self.scope), fallback=template.format(**context))

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        try:
            await self.send_json(message)
        except Exception:
            pass  # the client is gone; the answer is stored either way


def _complete(turn: services.Turn, state: dict[str, Any]) -> dict[str, Any]:
    return services.answer_payload(services.chat_turn_complete(turn=turn, state=state))
