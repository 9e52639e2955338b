"""Health endpoints for proxies and orchestrators, outside the API and without authentication.

``/healthz`` says the process is up and serving; it touches no dependency, so a restart is
never triggered by a database or Redis outage. ``/readyz`` says whether this process can do
its work now: the database answers a query, the broker (with ``REDIS_URL``) answers PING, the
channel layer carries a message, the vector store answers a heartbeat. It answers 200 with each
dependency's state, or 503 naming each failing one and why. Every check runs on its own thread
with a time limit, so one hanging dependency cannot hang the probe.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

CHECK_TIMEOUT_S = 3.0


class DependencyError(Exception):
    """A dependency is unreachable or answered wrongly; the message says which and why."""


def redacted(url: str) -> str:
    """``url`` with its password (if any) replaced, fit for a response or a log line."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def check_database() -> str:
    """Run one query on this thread's connection (opened for the check, closed after)."""
    vendor = connection.vendor
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        raise DependencyError(f"the {vendor} database did not answer: {_reason(exc)}") from exc
    finally:
        connection.close()
    return vendor


def check_broker(url: str, *, timeout: float = CHECK_TIMEOUT_S) -> str:
    """PING the Redis server that carries the job queue."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        if not client.ping():
            raise DependencyError(f"Redis at {redacted(url)} did not answer PING")
    except redis.RedisError as exc:
        raise DependencyError(f"cannot reach Redis at {redacted(url)}: {_reason(exc)}") from exc
    finally:
        client.close()
    return f"redis at {redacted(url)}"


def check_channel_layer(*, timeout: float = CHECK_TIMEOUT_S) -> str:
    """Send a message to a fresh channel and receive it back. The in-memory layer lives in this
    process and cannot be down."""
    from channels.layers import InMemoryChannelLayer, get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        raise DependencyError("no channel layer is configured (CHANNEL_LAYERS)")
    if isinstance(layer, InMemoryChannelLayer):
        return "in-memory (this process only)"
    channel = f"trellis-readyz.{uuid.uuid4().hex}"

    async def round_trip() -> dict[str, Any]:
        await layer.send(channel, {"type": "readyz.ping"})
        return await layer.receive(channel)

    try:
        # A fresh loop on this check's own thread; the layer keeps and closes connections per loop.
        message = asyncio.run(asyncio.wait_for(round_trip(), timeout))
    except Exception as exc:
        raise DependencyError(f"the {type(layer).__name__} did not carry a message: {_reason(exc)}") from exc
    if message.get("type") != "readyz.ping":
        raise DependencyError(f"the {type(layer).__name__} returned another message than it was sent")
    return type(layer).__name__


def check_vector_store() -> str:
    """A heartbeat of the Chroma server (``CHROMA_URL``) or of the local persistent store."""
    from knowledge.runtime import chroma_store
    from rag.stores import VectorStoreError

    store = chroma_store()
    # The probe answers anyone: the local store is named without the data folder's path.
    where = f"chroma server at {redacted(store.url)}" if store.url else "local chroma (in the data folder)"
    try:
        store.heartbeat()
    except VectorStoreError as exc:
        message = str(exc)
        for folder in sorted({str(store.path), str(settings.DATA_DIR)} - {"", "None"}, key=len, reverse=True):
            message = message.replace(folder, "<data folder>")
        raise DependencyError(message) from exc
    return where


def readiness_checks() -> dict[str, Callable[[], str]]:
    """What this process depends on, by name."""
    checks: dict[str, Callable[[], str]] = {"database": check_database}
    if settings.REDIS_URL:
        checks["broker"] = lambda: check_broker(settings.REDIS_URL)
    checks["channel_layer"] = check_channel_layer
    checks["vector_store"] = check_vector_store
    return checks


def run_checks(checks: dict[str, Callable[[], str]], *, timeout: float = CHECK_TIMEOUT_S + 1) -> dict[str, dict]:
    """Run every check at once; each result is ``{"status": "ok", "detail", "elapsed_ms"}`` or
    ``{"status": "failing", "error", "elapsed_ms"}``."""
    results: dict[str, dict] = {}
    started = time.monotonic()

    def run(name: str, check: Callable[[], str]) -> None:
        begin = time.monotonic()
        try:
            outcome: dict[str, Any] = {"status": "ok", "detail": check()}
        except DependencyError as exc:
            outcome = {"status": "failing", "error": str(exc)}
        except Exception as exc:  # a check's own bug still names the dependency
            outcome = {"status": "failing", "error": f"the {name} check failed: {_reason(exc)}"}
        outcome["elapsed_ms"] = round((time.monotonic() - begin) * 1000, 1)
        results[name] = outcome

    threads = [threading.Thread(target=run, args=item, name=f"readyz-{item[0]}", daemon=True)
               for item in checks.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, timeout - (time.monotonic() - started)))
    for name in checks:
        # A daemon thread still hanging is abandoned; its late result is ignored.
        results.setdefault(name, {"status": "failing", "error": f"no answer within {timeout:g} s",
                                  "elapsed_ms": round(timeout * 1000, 1)})
    return {name: results[name] for name in checks}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return "no answer in time"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    checks = run_checks(readiness_checks())
    ready = all(result["status"] == "ok" for result in checks.values())
    return JsonResponse({"status": "ready" if ready else "unavailable", "checks": checks},
                        status=200 if ready else 503)
