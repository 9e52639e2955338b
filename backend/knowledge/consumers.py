"""``ws/knowledge/<id>/``: where a knowledge base's documents stand, live."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from common.i18n import translate
from common.permissions import owns
from common.realtime import remember_server_loop
from common.sockets import FORBIDDEN, JsonSocket

from . import selectors
from .models import KnowledgeBase
from .services.events import document_snapshot, knowledge_base_group


class KnowledgeBaseConsumer(JsonSocket):
    """Sends the owner a ``snapshot`` of every document on connect, then each
    ``document.progress`` and ``document.deleted`` event as it happens. Anyone else is
    accepted and closed at once with code 4403, so a browser can tell why. It takes no client
    messages: each frame is answered with an error event."""

    group: str | None = None

    async def connect(self) -> None:
        knowledge_base = await self._knowledge_base()
        if knowledge_base is None:
            await self.accept()
            await self.close(code=FORBIDDEN)
            return
        remember_server_loop()
        # Join before reading the snapshot: an event published in between is delivered after it.
        self.group = knowledge_base_group(knowledge_base.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        documents = await self._documents(knowledge_base)
        await self.send_json({"type": "snapshot", "documents": [self._localized(document) for document in documents]})

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def document_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "document.progress", "document": self._localized(event["document"])})

    def _localized(self, document: dict[str, Any]) -> dict[str, Any]:
        """The document's state with its error in this client's language (events carry the
        message template, not one language's text)."""
        shown = {key: value for key, value in document.items() if key not in ("error_template", "error_context")}
        shown["error_detail"] = None
        if document.get("error") and document.get("error_template"):
            shown["error"] = translate(document["error_template"], document["error_context"],
                                       self.language, fallback=document["error"])
            shown["error_detail"] = (document["error_context"] or {}).get("detail") or None
        return shown

    async def document_deleted(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "document.deleted", "document_id": event["document_id"]})

    @database_sync_to_async
    def _knowledge_base(self) -> KnowledgeBase | None:
        user = self.scope.get("user")
        knowledge_base_id = self.scope["url_route"]["kwargs"]["knowledge_base_id"]
        if not owns(user, "knowledge_base_id", knowledge_base_id):
            return None
        return selectors.knowledge_base_get(user=user, knowledge_base_id=knowledge_base_id)

    @database_sync_to_async
    def _documents(self, knowledge_base: KnowledgeBase) -> list[dict[str, Any]]:
        return [document_snapshot(document) for document in selectors.document_list(knowledge_base=knowledge_base)]
