"""Sign-in throttling: failed sign-ins are counted per user name and client address in the
cache, and a pair that failed too often is refused for a while (``429``), on the API's
session endpoint and the admin's login page alike."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest


def _keys(*, username: str, address: str) -> tuple[str, str]:
    digest = hashlib.sha256(f"{username.casefold()}\x00{address}".encode()).hexdigest()
    return f"trellis:sign-in-failures:{digest}", f"trellis:sign-in-window:{digest}"


def client_address(request: HttpRequest | None) -> str:
    """The peer's address. ``X-Forwarded-For`` is not trusted: any client can send it."""
    return (request.META.get("REMOTE_ADDR") or "unknown") if request is not None else "unknown"


def login_failure_record(*, username: str, address: str) -> int:
    """Count one failed sign-in; returns the failures in the current window."""
    count_key, window_key = _keys(username=username, address=address)
    window = settings.TRELLIS_LOGIN_LOCKOUT_MINUTES * 60
    cache.add(window_key, time.time() + window, window)
    cache.add(count_key, 0, window)
    try:
        return cache.incr(count_key)
    except ValueError:  # expired between add and incr
        cache.set(count_key, 1, window)
        return 1


def login_lockout_seconds(*, username: str, address: str) -> int:
    """Seconds until ``username`` may try again from ``address`` (0: now)."""
    count_key, window_key = _keys(username=username, address=address)
    if (cache.get(count_key) or 0) < settings.TRELLIS_LOGIN_MAX_FAILURES:
        return 0
    return max(1, int((cache.get(window_key) or time.time()) - time.time()))


def login_failures_clear(*, username: str, address: str) -> None:
    cache.delete_many(list(_keys(username=username, address=address)))


@receiver(user_login_failed, dispatch_uid="accounts.count_failed_sign_in")
def _count_failed_sign_in(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                          **kwargs: Any) -> None:
    username = credentials.get("username")
    if isinstance(username, str):
        login_failure_record(username=username, address=client_address(request))


@receiver(user_logged_in, dispatch_uid="accounts.forget_failed_sign_ins")
def _forget_failed_sign_ins(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    login_failures_clear(username=user.get_username(), address=client_address(request))
