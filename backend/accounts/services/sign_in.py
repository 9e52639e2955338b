"""Sign-in throttling: failed sign-ins are counted in the cache, and a sign-in is refused for a
while (``429``), on the API's session endpoint and the admin's login page alike, when

- its user name failed ``TRELLIS_LOGIN_MAX_FAILURES`` times from its address;
- its address failed for ``TRELLIS_LOGIN_MAX_NAMES_PER_ADDRESS`` other user names (one address
  cannot try user name after user name);
- its user name failed ``TRELLIS_LOGIN_MAX_FAILURES_PER_NAME`` times from all addresses
  together, unless the address is one the user signed in from before (so guessing from many
  addresses is bounded, and cannot lock a user out of the address they use).

Every count lasts ``TRELLIS_LOGIN_LOCKOUT_MINUTES`` from its first failure. User names are
counted as authentication reads them (``username_normalized``); addresses as
``client_address`` finds them (behind ``TRELLIS_TRUSTED_PROXIES``, the forwarded one), IPv6
ones by their /64 network, which one client holds whole.
"""

from __future__ import annotations

import hashlib
import ipaddress
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest

KNOWN_ADDRESS_SECONDS = 90 * 24 * 3600
"""How long an address a user signed in from stays theirs, for the per-name limit."""
IPV6_CLIENT_PREFIX = 64
_PREFIX = "trellis:sign-in"


def username_normalized(raw: str) -> str:
    """``raw`` as sign-in authenticates it: stripped, as the admin's form and the API's
    serializer strip it, then NFKC-normalised, as the form's ``UsernameField`` and
    ``AbstractBaseUser.normalize_username`` do."""
    return AbstractBaseUser.normalize_username(raw.strip())


def client_address(request: HttpRequest | None) -> str:
    """The client's address: the peer's, or, when the peer is a trusted proxy
    (``TRELLIS_TRUSTED_PROXIES``), the last address in ``X-Forwarded-For`` that is not one.
    Entries before it were written by the client itself and are never believed."""
    if request is None:
        return "unknown"
    peer = _ip(request.META.get("REMOTE_ADDR"))
    if peer is None:
        return request.META.get("REMOTE_ADDR") or "unknown"
    trusted = _trusted_proxies()
    if not trusted or not _within(peer, trusted):
        return str(peer)
    client = peer
    for entry in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        hop = _ip(entry.strip())
        if hop is None:
            break  # a malformed entry: nothing before it can be trusted either
        client = hop
        if not _within(hop, trusted):
            break
    return str(client)


@dataclass(frozen=True)
class Lockout:
    """Why a sign-in is refused (``code``) and for how many more seconds."""

    code: str
    seconds: int


def login_lockout(*, username: str, address: str) -> Lockout | None:
    """Whether ``username`` may try to sign in from ``address`` now (None: it may)."""
    name, client = _name(username), _client(address)
    now = time.time()
    pair = _Counter("pair", name, client)
    if pair.count() >= settings.TRELLIS_LOGIN_MAX_FAILURES:
        return Lockout("too_many_sign_in_failures", pair.seconds_left(now))
    spread = _Counter("names", client)
    if not pair.exists() and spread.count() >= settings.TRELLIS_LOGIN_MAX_NAMES_PER_ADDRESS:
        return Lockout("too_many_user_names", spread.seconds_left(now))
    everywhere = _Counter("name", name)
    if everywhere.count() >= settings.TRELLIS_LOGIN_MAX_FAILURES_PER_NAME \
            and not cache.get(_key("known", name, client)):
        return Lockout("too_many_sign_in_failures_for_name", everywhere.seconds_left(now))
    return None


def login_failure_record(*, username: str, address: str) -> None:
    """Count one failed sign-in of ``username`` from ``address``."""
    name, client = _name(username), _client(address)
    if _Counter("pair", name, client).increment():
        _Counter("names", client).increment()  # a user name this address had not tried yet
    _Counter("name", name).increment()


def login_success_record(*, username: str, address: str) -> None:
    """A successful sign-in: its address's failures for the name are forgotten, and the
    address is remembered as the user's own."""
    name, client = _name(username), _client(address)
    _Counter("pair", name, client).clear()
    cache.set(_key("known", name, client), 1, KNOWN_ADDRESS_SECONDS)


class _Counter:
    """A count in the cache that lasts the lock-out window from its first increment."""

    def __init__(self, kind: str, *parts: str) -> None:
        self.count_key, self.window_key = _key(kind, *parts), _key(f"{kind}-until", *parts)

    def count(self) -> int:
        return cache.get(self.count_key) or 0

    def exists(self) -> bool:
        return cache.get(self.count_key) is not None

    def increment(self) -> bool:
        """Count one; true when this was the first of its window."""
        window = settings.TRELLIS_LOGIN_LOCKOUT_MINUTES * 60
        first = cache.add(self.count_key, 0, window)
        if first:
            cache.set(self.window_key, time.time() + window, window)
        try:
            cache.incr(self.count_key)
        except ValueError:  # expired between add and incr
            cache.set(self.count_key, 1, window)
            cache.set(self.window_key, time.time() + window, window)
            return True
        return first

    def seconds_left(self, now: float) -> int:
        return max(1, int((cache.get(self.window_key) or now) - now))

    def clear(self) -> None:
        cache.delete_many([self.count_key, self.window_key])


def _key(kind: str, *parts: str) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{_PREFIX}:{kind}:{digest}"


def _name(username: str) -> str:
    # Casefolded as well: names that differ in case only share a count, never escape one.
    return username_normalized(username).casefold()


def _client(address: str) -> str:
    ip = _ip(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((ip, IPV6_CLIENT_PREFIX), strict=False))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else ip) if ip is not None else address


def _ip(value: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address((value or "").strip().strip("[]").split("%")[0])
    except ValueError:
        return None


def _trusted_proxies() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(entry, strict=False) for entry in settings.TRELLIS_TRUSTED_PROXIES]


def _within(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, networks: list) -> bool:
    return any(ip.version == network.version and ip in network for network in networks)


@receiver(user_login_failed, dispatch_uid="accounts.count_failed_sign_in")
def _count_failed_sign_in(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                          **kwargs: Any) -> None:
    username = credentials.get("username")
    if isinstance(username, str):
        login_failure_record(username=username, address=client_address(request))


@receiver(user_logged_in, dispatch_uid="accounts.forget_failed_sign_ins")
def _forget_failed_sign_ins(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    login_success_record(username=user.get_username(), address=client_address(request))
