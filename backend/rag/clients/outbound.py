"""Where components may send requests: the origin of a URL, and the policy for the addresses a
pipeline of an ordinary user may reach.

A pipeline names servers (``base_url`` of an LLM, an embedding service, a search API). Saved by a
user who is not an administrator, that is a way into the server's own network: loopback ports,
private ranges, cloud metadata addresses. ``OutboundPolicy`` allows public addresses, and beyond
them only what an administrator listed (``TRELLIS_OUTBOUND_ALLOW``).

A URL is checked when it is saved, and the address each connection goes to is checked again when
it is opened (``rag.clients.guarded_http``): a name may point elsewhere by then (DNS rebinding),
and a server may redirect. A name that does not resolve is refused, like a private address.
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
        address that is not allowed, whatever answers there (a name that resolves nowhere too)."""
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
        if self.names(host, port):
            return None
        if self.allowed_addresses(_addresses(host, port), port):
            return None
        return REFUSED

    def names(self, host: str, port: int) -> bool:
        """Whether an administrator allowed ``host`` (or ``host:port``) by name: whatever it
        resolves to is then theirs to answer for."""
        host = host.lower().strip("[]").rstrip(".")
        spelt = f"[{host}]" if ":" in host else host
        return bool({host, spelt, f"{spelt}:{port}"} & self.hosts)

    def allowed_addresses(self, addresses: Iterable[Address], port: int) -> bool:
        """Whether every one of ``addresses`` may be reached on ``port``; none at all (a name that
        resolves nowhere) is not."""
        found = list(addresses)
        return bool(found) and all(self._reachable(address, port) for address in found)

    def _reachable(self, address: Address, port: int) -> bool:
        if any(address in network for network in self.networks) or self.names(str(address), port):
            return True
        mapped = getattr(address, "ipv4_mapped", None)
        return (mapped or address).is_global


REFUSED = gettext_noop("is not a public address; only an administrator can let pipelines reach it "
                       "(TRELLIS_OUTBOUND_ALLOW)")


def resolve(host: str, port: int) -> list[Address]:
    """The addresses ``host`` stands for (itself when it is one); none when it resolves nowhere."""
    return _addresses(host.lower().strip("[]").rstrip("."), port)


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
    return list(dict.fromkeys(addresses))
