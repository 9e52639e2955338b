"""``ws/evaluation/<id>/``: how far an evaluation has run, live."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from common.permissions import owns
from common.realtime import remember_server_loop
from common.sockets import FORBIDDEN, JsonSocket

from . import selectors
from .models import Evaluation
from .services import evaluation_group, evaluation_snapshot


class EvaluationConsumer(JsonSocket):
    """Sends the owner the evaluation's state on connect (``evaluation.progress``), then every
    progress event until it is done or failed. Anyone else is accepted and closed with 4403. It takes
    no client messages: each frame is answered with an error event."""

    group: str | None = None

    async def connect(self) -> None:
        evaluation_id = self.scope["url_route"]["kwargs"]["evaluation_id"]
        if not await self._owned(evaluation_id):
            await self.accept()
            await self.close(code=FORBIDDEN)
            return
        remember_server_loop()
        # Join before reading the state: an event published in between is delivered after it.
        self.group = evaluation_group(evaluation_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"type": "evaluation.progress", "evaluation": await self._snapshot(evaluation_id)})

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def evaluation_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "evaluation.progress", "evaluation": event["evaluation"]})

    @database_sync_to_async
    def _owned(self, evaluation_id: int) -> bool:
        return owns(self.scope.get("user"), "evaluation_id", evaluation_id)

    @database_sync_to_async
    def _snapshot(self, evaluation_id: int) -> dict[str, Any]:
        evaluation: Evaluation = selectors.evaluation_get(user=self.scope["user"], evaluation_id=evaluation_id)
        return evaluation_snapshot(evaluation)
