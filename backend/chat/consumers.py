"""``ws/chat/<conversation_id>/``: ask, and watch the answer being found and written (DESIGN §8);
``ws/conversations/``: the owner's conversations as they are created, renamed and deleted."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from common.permissions import owns
from common.realtime import remember_server_loop
from common.sockets import FORBIDDEN, ClientMessage, JsonSocket, invalid_event

from . import selectors, services
from .apis import AskApi
from .models import Conversation


class ChatConsumer(JsonSocket):
    """One conversation's socket. Client messages: ``{"type": "ask", "question", "pipeline_id"?}``
    and ``{"type": "cancel"}``. Server messages are the events of the conversation's runs
    (``services.chat_run_start``), each with its ``seq``: ``run.started``, ``retrieval.node`` /
    ``retrieval.round`` as they complete, ``generation.delta`` tokens, then ``answer.completed``,
    ``run.failed`` or ``run.cancelled``.

    A run belongs to the conversation: every socket open on it gets its events, a socket that
    opens mid-run gets the events so far first (in order, none twice), and a socket that closes
    stops nothing. A refused ask (invalid fields, too long, busy) is answered to its asker alone
    with ``run.failed`` and ``message_id: null``."""

    conversation: Conversation | None = None
    group: str | None = None
    sent: tuple[int | None, int] = (None, 0)
    """The run whose events this socket has sent, and the last ``seq`` sent."""

    async def connect(self) -> None:
        self.conversation = await self._conversation()
        await self.accept()
        if self.conversation is None:
            await self.close(code=FORBIDDEN)
            return
        remember_server_loop()
        # Join before reading the stored events: an event is stored before it is sent, so the
        # ones sent meanwhile are either read here or arrive after, and ``seq`` drops repeats.
        self.group = services.conversation_group(self.conversation.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        message_id, events = await database_sync_to_async(selectors.run_events)(conversation=self.conversation)
        await self._forward(message_id, events)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    # -- one handler per client message type --------------------------------------------------

    async def ask(self, fields: dict[str, Any]) -> None:
        assert self.conversation is not None
        refusal = await services.chat_run_start(conversation=self.conversation, user=self.scope["user"],
                                                question=fields["question"], pipeline_id=fields["pipeline_id"],
                                                language=self.language)
        if refusal is not None:
            await self.send_json(refusal)

    async def cancel(self, fields: dict[str, Any]) -> None:
        assert self.conversation is not None
        await services.chat_run_cancel(conversation=self.conversation)

    messages = {"ask": ClientMessage(ask, AskApi.InputSerializer), "cancel": ClientMessage(cancel)}

    async def invalid(self, kind: str, errors: list[dict[str, str]]) -> None:
        # The client waits for an ask's final event: a refused ask ends as a failed run.
        await self.send_json(invalid_event("run.failed" if kind == "ask" else "error", errors))

    # -- channel-layer events ------------------------------------------------------------------

    async def chat_events(self, message: dict[str, Any]) -> None:
        await self._forward(message["message_id"], message["events"])

    # -----------------------------------------------------------------------------------------

    async def _forward(self, message_id: int | None, events: list[dict[str, Any]]) -> None:
        run, last = self.sent
        expected = last + 1 if run == message_id else 1
        if events and events[0]["seq"] > expected:
            # A batch the layer dropped (a full channel): the stored events fill the gap.
            stored_id, stored = await database_sync_to_async(selectors.run_events)(conversation=self.conversation)
            if stored_id == message_id:
                events = [event for event in stored if event["seq"] < events[0]["seq"]] + events
        for event in events:
            if run == message_id and event["seq"] <= last:
                continue
            run, last = message_id, event["seq"]
            await self.send_json(event)
        self.sent = (run, last)

    @database_sync_to_async
    def _conversation(self) -> Conversation | None:
        user = self.scope.get("user")
        conversation_id = self.scope["url_route"]["kwargs"]["conversation_id"]
        if not owns(user, "conversation_id", conversation_id):
            return None
        return selectors.conversation_get(user=user, conversation_id=conversation_id)


class ConversationListConsumer(JsonSocket):
    """The signed-in user's conversation list, live: ``conversation.created``,
    ``conversation.updated`` (a new title, pipeline or activity; ``conversation`` as the REST
    list shows it) and ``conversation.deleted`` (``conversation_id``). It takes no messages; a
    visitor who is not signed in is closed with 4403."""

    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=FORBIDDEN)
            return
        remember_server_loop()
        self.group = services.owner_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def chat_conversation(self, message: dict[str, Any]) -> None:
        await self.send_json(message["event"])
