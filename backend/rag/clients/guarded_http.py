"""HTTP clients that keep to an ``OutboundPolicy`` on every connection, and follow no redirects.

Checking a URL when a pipeline is saved is not enough: a name may resolve to another address by
the time a request is sent (DNS rebinding), and a server may answer ``307`` towards the server's
own network. So the client that sends a component's requests resolves each host once, checks
every address against the policy, and connects to the address it checked; and it never follows
a redirect (a redirect is an error naming its status).

Built on ``httpx2`` and ``httpcore2``, the HTTP stack of the ``openai`` client (the same API as
``httpx`` and ``httpcore``). Import this module where a client is built, not at start.
"""

from __future__ import annotations

import logging
from typing import Any

import httpcore2
import httpx2

from .outbound import REFUSED, OutboundPolicy, resolve

logger = logging.getLogger(__name__)


class OutboundRefused(httpcore2.ConnectError):
    """A connection the policy does not allow; nothing was sent. The client raises it as an
    ``httpx2.ConnectError`` whose ``__cause__`` is this, so callers can tell it from a server
    that did not answer."""

    def __init__(self, host: str) -> None:
        super().__init__(REFUSED)
        self.host = host


class PolicyBackend(httpcore2.NetworkBackend):
    """httpcore2's socket backend, connecting only to addresses ``policy`` allows.

    The host is resolved here, once; every address it resolves to must be allowed (a name that
    resolves nowhere is refused like a private address); the connection goes to those checked
    addresses, not to a second resolution. TLS still verifies the certificate against the name
    in the URL (httpcore2 passes it as the server name after connecting). A host an administrator
    allowed by name connects by name.
    """

    def __init__(self, policy: OutboundPolicy, backend: httpcore2.NetworkBackend | None = None) -> None:
        self.policy = policy
        self.backend = backend or httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore2.NetworkStream:
        options = {"timeout": timeout, "local_address": local_address, "socket_options": socket_options}
        if self.policy.names(host, port):
            return self.backend.connect_tcp(host, port, **options)
        addresses = resolve(host, port)
        if not self.policy.allowed_addresses(addresses, port):
            logger.warning("refused a connection to %s:%s (%s): not allowed by the outbound policy", host, port,
                           ", ".join(map(str, addresses)) or "resolves nowhere")
            raise OutboundRefused(host)
        failure: Exception | None = None
        for address in addresses:
            try:
                return self.backend.connect_tcp(str(address), port, **options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore2.NetworkStream:
        raise OutboundRefused(path)

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


def guarded_transport(policy: OutboundPolicy | None, **options: Any) -> httpx2.HTTPTransport:
    """A transport whose connections meet ``policy`` (None: any address, as for an
    administrator's components). ``options`` go to ``httpx2.HTTPTransport`` (``limits``...)."""
    transport = httpx2.HTTPTransport(**options)
    if policy is not None:
        pool = transport._pool  # the transport's connection pool; its network backend is the one seam
        if not isinstance(pool, httpcore2.ConnectionPool) or not hasattr(pool, "_network_backend"):
            raise RuntimeError("this httpx2 version keeps its connections elsewhere; the outbound guard needs updating")
        pool._network_backend = PolicyBackend(policy)
    return transport


def guarded_client(policy: OutboundPolicy | None, **options: Any) -> httpx2.Client:
    """An ``httpx2.Client`` that connects only where ``policy`` allows and follows no redirect.
    ``options`` go to ``httpx2.Client`` (``timeout``, ``headers``...). Proxies from the
    environment are not used: the policy checks the address actually connected to."""
    limits = options.pop("limits", httpx2.Limits(max_connections=100, max_keepalive_connections=20))
    return httpx2.Client(transport=guarded_transport(policy, limits=limits), follow_redirects=False, **options)


def refused(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an exception it was raised from, is a connection the policy refused."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OutboundRefused):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False
