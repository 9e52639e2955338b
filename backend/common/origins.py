"""Websocket handshakes from the app's own pages only: the same origin check Django's CSRF
protection makes for REST (scheme, host and port), applied to sockets.

A browser sends the session cookie with a websocket handshake from any page, and cookies are not
bound to a port: a page served on ``http://127.0.0.1:8201`` could open ``ws://127.0.0.1:8000/ws/…``
as the signed-in user. Channels' ``AllowedHostsOriginValidator`` compares host names only, so it
let that page in. Here the handshake's ``Origin`` must be the request's own origin (its scheme,
and its ``Host``, which must be in ``ALLOWED_HOSTS``) or one of ``CSRF_TRUSTED_ORIGINS``
(``https://*.example.com`` matching its subdomains), as Django's ``CsrfViewMiddleware`` decides
for a POST. A handshake without an ``Origin`` is refused: every browser sends one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

logger = logging.getLogger(__name__)

Scope = Mapping[str, Any]
Application = Callable[[Any, Any, Any], Awaitable[Any]]


def _headers(scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in scope.get("headers") or []:
        try:
            found.setdefault(name.decode("latin1").lower(), value.decode("latin1"))
        except (AttributeError, UnicodeDecodeError):
            continue
    return found


def _allowed_hosts() -> list[str]:
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]  # what Django's get_host allows then
    return allowed


def _secure(scope: Scope, headers: Mapping[str, str]) -> bool:
    """Whether the handshake came over TLS, as ``HttpRequest.is_secure`` decides (the proxy's
    header when ``SECURE_PROXY_SSL_HEADER`` trusts one)."""
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header:
        meta_name, secure_value = proxy_header
        value = headers.get(meta_name.removeprefix("HTTP_").lower().replace("_", "-"))
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") in ("wss", "https")


def own_origin(scope: Scope) -> str | None:
    """``http(s)://host[:port]`` of the server the handshake was sent to, or None when its host is
    not one of ``ALLOWED_HOSTS`` (or it names none)."""
    headers = _headers(scope)
    secure = _secure(scope, headers)
    if settings.USE_X_FORWARDED_HOST and "x-forwarded-host" in headers:
        host = headers["x-forwarded-host"].split(",", 1)[0].strip()
    elif "host" in headers:
        host = headers["host"].strip()
    elif scope.get("server"):
        name, port = scope["server"][0], scope["server"][1]
        host = name if port is None or str(port) == ("443" if secure else "80") else f"{name}:{port}"
    else:
        return None
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    return f"{'https' if secure else 'http'}://{host}"


def origin_allowed(scope: Scope) -> bool:
    """Whether the handshake's ``Origin`` is the app's own, by Django's CSRF origin rules."""
    origin = _headers(scope).get("origin")
    if not origin:
        return False
    if origin == own_origin(scope):
        return True
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in {entry for entry in trusted if "*" not in entry}:
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    return any(is_same_domain(parsed.netloc, pattern.netloc.lstrip("*"))
               for pattern in (urlsplit(entry) for entry in trusted if "*" in entry)
               if pattern.scheme == parsed.scheme)


class SameOriginValidator:
    """ASGI middleware for websockets: the handshake goes on to ``application`` only from the
    app's own origins (``origin_allowed``); any other is refused (HTTP 403) before a consumer,
    the session or the database is touched."""

    def __init__(self, application: Application) -> None:
        self.application = application

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator guards websocket connections only")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        logger.warning("refused a websocket handshake to %s from origin %r", scope.get("path"),
                       _headers(scope).get("origin"))
        return await WebsocketDenier()(scope, receive, send)
