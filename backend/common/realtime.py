"""Publishing channel-layer events from anywhere: request threads, job threads, Celery workers.

The in-memory layer lives in the server's event loop; an ``asyncio.Queue`` must not be touched
from another thread's loop, so events from job threads are scheduled onto the server loop
(recorded when a consumer connects). The Redis layer accepts sends from any thread.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger(__name__)
_server_loop: asyncio.AbstractEventLoop | None = None


def remember_server_loop() -> None:
    """Record the running loop as the one that owns the in-memory layer (call from async code)."""
    global _server_loop
    _server_loop = asyncio.get_running_loop()


def publish(group: str, message: dict[str, Any], *, timeout: float = 5.0) -> None:
    """Send ``message`` to every consumer in ``group``. Never raises: a lost progress event
    must not fail the work that produced it."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        if isinstance(layer, InMemoryChannelLayer):
            loop = _server_loop
            if loop is None or loop.is_closed():
                return  # no consumer has connected in this process: nobody could receive it
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                loop.create_task(layer.group_send(group, message))
                return
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(timeout)
        else:
            async_to_sync(layer.group_send)(group, message)
    except Exception:
        logger.warning("could not publish %s to %s", message.get("type"), group, exc_info=True)
