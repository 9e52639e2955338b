"""The MCP server over streamable HTTP, mounted on the web server at ``/mcp`` (``config.asgi``
routes the path here before Django). Every request must carry an API token
(``Authorization: Bearer``), is counted against its rate limit, and reaches the tools of the
token's owner only.

The SDK's session manager needs a task group that lives as long as the server. Its Starlette
app would start it on the ASGI lifespan event, which daphne does not send, so it starts with
the first request, in a task of its own, once per event loop. Sessions are stateless (each
request stands alone): no session lives in one server process's memory, so any of several
servers can answer any request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http.request import split_domain_port, validate_host
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from common.i18n import language_of_scope, translate

from .auth import Refusal, api_token_check
from .mcp import mcp_server

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
PATH = "/mcp"


async def _user_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    from channels.db import database_sync_to_async

    user = ctx.request.scope["user"] if ctx.request is not None else None
    if not isinstance(user, AuthenticatedUser) or user.access_token.subject is None:
        raise PermissionError("an MCP request reached a tool without its API token")
    return await database_sync_to_async(get_user_model().objects.get)(pk=int(user.access_token.subject))


def _trace_url(ctx: ServerRequestContext[Any, Any], conversation_id: int) -> str | None:
    if ctx.request is None:
        return None
    return str(ctx.request.base_url).rstrip("/") + f"/chat/{conversation_id}"


class McpHttpApp:
    """ASGI application for ``/mcp``: the API token gate, then the SDK's transport."""

    def __init__(self) -> None:
        self.server = mcp_server(_user_of, _trace_url)
        self._manager: StreamableHTTPSessionManager | None = None
        self._ready: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None

    async def _started(self) -> StreamableHTTPSessionManager:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._ready = loop, asyncio.Event()
            # Django checks the Host header of these requests (below); the SDK's own check knows
            # only fixed host names.
            self._manager = StreamableHTTPSessionManager(
                app=self.server, stateless=True,
                security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False))
            self._task = loop.create_task(self._serve(self._manager, self._ready), name="mcp-session-manager")
        assert self._ready is not None and self._manager is not None
        await self._ready.wait()
        return self._manager

    @staticmethod
    async def _serve(manager: StreamableHTTPSessionManager, ready: asyncio.Event) -> None:
        async with manager.run():
            ready.set()
            await asyncio.Event().wait()  # as long as the loop runs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers") or []}
        language = language_of_scope(scope)
        domain, _port = split_domain_port(headers.get("host", ""))
        if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
            await _answer(send, 400, {"error": "invalid_host", "error_description": "the Host header is not allowed"})
            return
        checked = await api_token_check(headers.get("authorization"))
        if isinstance(checked, Refusal):
            await _refuse(send, checked, language)
            return
        token = AccessToken(token=checked.prefix, client_id=f"api-token-{checked.pk}", scopes=[],
                            subject=str(checked.owner_id))
        manager = await self._started()
        await manager.handle_request({**scope, "user": AuthenticatedUser(token)}, receive, send)


async def _answer(send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": payload})


async def _refuse(send: Send, refusal: Refusal, language: str) -> None:
    """401 or 429 as OAuth bearer-token errors (RFC 6750), which MCP clients read."""
    message = translate(refusal.template, refusal.context, language,
                        fallback=refusal.template.format(**refusal.context))
    extra = [(b"www-authenticate", f'Bearer error="invalid_token", error_description="{refusal.code}"'.encode())]
    if refusal.retry_after is not None:
        extra = [(b"retry-after", str(refusal.retry_after).encode())]
    error = "invalid_token" if refusal.status == 401 else "rate_limit_exceeded"
    await _answer(send, refusal.status, {"error": error, "error_description": message}, extra)


def with_mcp(django_app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> Callable[[Scope, Receive, Send],
                                                                                        Awaitable[None]]:
    """``django_app`` with ``/mcp`` (and ``/mcp/``) answered by the MCP server instead."""
    mcp_app = McpHttpApp()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").rstrip("/") == PATH:
            await mcp_app(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return app
