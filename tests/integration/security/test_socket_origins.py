"""Finding 5 of the third security round: a websocket handshake is accepted from the app's own
origin only (scheme, host and port), as Django's CSRF check decides for REST.

A page on ``http://127.0.0.1:8201`` opened alice's ``ws/chat/1/`` on ``127.0.0.1:8000`` with her
cookie (cookies are not bound to a port) and read her answers: the host names matched, which was
all Channels' ``AllowedHostsOriginValidator`` compared. The served application (``config.asgi``)
is driven here with the handshake a browser sends; ``tests/e2e/test_newcomer.py`` does it with a
real page on another port.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from chat.services import conversation_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

APP = "127.0.0.1:8000"


async def handshake(owner, *, origin: str | None, host: str = APP, scheme: str = "ws",
                    extra: list[tuple[bytes, bytes]] = ()) -> bool:
    """Whether the served application accepts alice's chat socket from ``origin`` (her session
    cookie sent, as a browser sends it from any page)."""
    from config.asgi import application

    conversation = await sync_to_async(conversation_create)(owner=owner)
    client = Client()
    await sync_to_async(client.force_login)(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [(b"host", host.encode()), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode()), *extra]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation.pk}/", headers=headers)
    communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect(timeout=10)  # refused: closed before it is accepted (HTTP 403)
    await communicator.disconnect()
    return connected


async def test_a_page_on_another_port_of_the_same_host_cannot_open_a_users_socket(owner, settings):
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    assert await handshake(owner, origin="http://127.0.0.1:8201") is False
    assert await handshake(owner, origin="http://localhost:8000") is False  # another host name
    assert await handshake(owner, origin="https://127.0.0.1:8000") is False  # another scheme
    assert await handshake(owner, origin="null") is False
    assert await handshake(owner, origin=None) is False


async def test_the_apps_own_origin_is_accepted(owner, settings):
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    assert await handshake(owner, origin=f"http://{APP}") is True
    assert await handshake(owner, origin="http://localhost", host="localhost") is True


async def test_a_host_outside_allowed_hosts_has_no_origin_of_its_own(owner, settings):
    """DNS rebinding of the app itself: a page on evil.example:8000 pointing that name at the
    server sends Origin and Host alike, but its host is not one the server answers as."""
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    assert await handshake(owner, origin="http://evil.example:8000", host="evil.example:8000") is False


async def test_behind_tls_the_scheme_counts_and_trusted_origins_are_accepted(owner, settings):
    settings.ALLOWED_HOSTS = ["trellis.example.org"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://admin.example.org", "https://*.tools.example.org"]
    host = "trellis.example.org"
    assert await handshake(owner, origin=f"https://{host}", host=host, scheme="wss") is True
    assert await handshake(owner, origin=f"http://{host}", host=host, scheme="wss") is False
    assert await handshake(owner, origin="https://admin.example.org", host=host, scheme="wss") is True
    assert await handshake(owner, origin="https://a.tools.example.org", host=host, scheme="wss") is True
    assert await handshake(owner, origin="http://a.tools.example.org", host=host, scheme="wss") is False
    # A proxy that ends TLS says so in the header Django is told to trust.
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    forwarded = [(b"x-forwarded-proto", b"https")]
    assert await handshake(owner, origin=f"https://{host}", host=host, extra=forwarded) is True
    assert await handshake(owner, origin=f"http://{host}", host=host, extra=forwarded) is False
