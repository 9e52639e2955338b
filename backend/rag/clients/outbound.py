"""Where components may send requests: the origin of a URL, and the policy for the addresses a
pipeline of an ordinary user may reach.

A pipeline names servers (``base_url`` of an LLM, an embedding service, a search API). Saved by a
user who is not an administrator, that is a way into the server's own network: loopback ports,
private ranges, cloud metadata addresses. ``OutboundPolicy`` allows public addresses, and beyond
them only what an administrator listed (``TRELLIS_OUTBOUND_ALLOW``).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from rag.core.i18n import gettext_noop

DEFAULT_PORTS = {"http": 80, "https": 443}
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def origin(url: str | None) -> str | None:
    """``scheme://host:port`` of an http(s) URL, lower-cased and with the default port spelt
    out, so two spellings of one server compare equal; None for anything else."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower().rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or DEFAULT_PORTS[scheme]}"


class OutboundPolicy:
    """Public addresses, plus the hosts, ``host:port`` pairs, addresses and networks allowed.

    Parameters
    ----------
    allowed : iterable of str
        Entries such as ``llm.internal``, ``10.0.0.5:8000``, ``127.0.0.1``, ``10.0.0.0/8``.
    """

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self.hosts: set[str] = set()
        self.networks: list[Network] = []
        for entry in (item.strip().lower() for item in allowed):
            if not entry:
                continue
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.hosts.add(entry.rstrip("."))

    def problem(self, url: str) -> str | None:
        """None when ``url`` may be requested; otherwise a translatable sentence, the same for every
        address that is not allowed, whatever answers there."""
        parts = urlsplit(url.strip())
        try:
            port = parts.port
        except ValueError:
            port = None
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower().rstrip(".")
        if scheme not in DEFAULT_PORTS or not host:
            return gettext_noop("must be an http:// or https:// address")
        port = port or DEFAULT_PORTS[scheme]
        if host in self.hosts or f"{host}:{port}" in self.hosts:
            return None
        addresses = _addresses(host, port)
        # A name that does not resolve reaches nothing now; it is checked again before each run,
        # when it may resolve (to a public address, or not).
        if all(self._reachable(address) for address in addresses):
            return None
        return gettext_noop("is not a public address; only an administrator can let pipelines reach it "
                            "(TRELLIS_OUTBOUND_ALLOW)")

    def _reachable(self, address: Address) -> bool:
        if any(address in network for network in self.networks):
            return True
        mapped = getattr(address, "ipv4_mapped", None)
        return (mapped or address).is_global


def _addresses(host: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    addresses = []
    for *_, sockaddr in found:
        try:
            addresses.append(ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0]))
        except ValueError:
            continue
    return addresses
