"""``ws/models/``: the signed-in user's model installs, live."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from common.i18n import language_of_scope
from common.realtime import remember_server_loop

from . import selectors
from .services import install_snapshot, installs_group

FORBIDDEN = 4403


class ModelInstallConsumer(AsyncJsonWebsocketConsumer):
    """Sends the user's recent installs on connect (``model.installs``), then each change of
    one of them (``model.install``) or its removal (``model.install.deleted``), errors in the client's language. Anonymous clients are
    accepted and closed with 4403."""

    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.accept()
            await self.close(code=FORBIDDEN)
            return
        remember_server_loop()
        self.language = language_of_scope(self.scope)
        # Join before reading: an event published in between arrives after the snapshot.
        self.group = installs_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"type": "model.installs", "installs": await self._installs()})

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def model_install(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "model.install", "install": self._localised(event["install"])})

    async def model_install_deleted(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "model.install.deleted", "id": event["id"]})

    def _localised(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        public = {key: value for key, value in snapshot.items() if key not in ("error_template", "error_context")}
        public["error"] = selectors.install_error(snapshot, self.language)
        return public

    @database_sync_to_async
    def _installs(self) -> list[dict[str, Any]]:
        return [self._localised(install_snapshot(install))
                for install in selectors.model_install_list(user=self.scope["user"])]
