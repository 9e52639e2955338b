"""API tokens: made, checked, throttled and revoked.

A token is ``trl_`` and 43 URL-safe characters (256 random bits), so a hash without a salt is
enough to store it: nobody can guess a preimage, and a lookup by hash needs no scan. A user's
tokens may make ``TRELLIS_API_RATE_LIMIT`` requests per minute together (a fixed window counted
in the cache, shared by every server process once Redis is there), and a user may hold
``TRELLIS_MAX_API_TOKENS_PER_USER`` active tokens: more tokens are not more requests.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from rag.core import TrellisError
from rag.core.i18n import gettext_noop

from ..models import ApiToken

TOKEN_PREFIX = "trl_"
PREFIX_LENGTH = len(TOKEN_PREFIX) + 8
LAST_USED_PRECISION = timedelta(minutes=1)
"""``last_used_at`` is written at most this often: not one write per request."""
RATE_WINDOW_S = 60


TOO_MANY_TOKENS = gettext_noop(
    "you have {limit} active API tokens, the most one user may hold; revoke one you no longer use first")


class TooManyTokens(TrellisError):
    """The user holds as many active tokens as they may; ``template``/``context`` translate it."""

    code = "too_many_tokens"

    def __init__(self, limit: int) -> None:
        self.template, self.context = TOO_MANY_TOKENS, {"limit": limit}
        super().__init__(TOO_MANY_TOKENS.format(limit=limit))


@dataclass(frozen=True)
class IssuedToken:
    """A token just made: its row and its secret, which is never available again."""

    token: ApiToken
    secret: str


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def api_token_create(*, owner: AbstractBaseUser, name: str) -> IssuedToken:
    """A new token of ``owner``; raises ``TooManyTokens`` when they hold
    ``TRELLIS_MAX_API_TOKENS_PER_USER`` active ones already (0: no limit)."""
    limit = settings.TRELLIS_MAX_API_TOKENS_PER_USER
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        if limit > 0:
            # The owner's row is locked: two tokens made at once are counted one after the other.
            get_user_model().objects.select_for_update().filter(pk=owner.pk).values_list("pk", flat=True).first()
            if ApiToken.objects.filter(owner=owner, revoked_at__isnull=True).count() >= limit:
                raise TooManyTokens(limit)
        token = ApiToken.objects.create(owner=owner, name=name.strip(), prefix=secret[:PREFIX_LENGTH],
                                        digest=_digest(secret))
    return IssuedToken(token, secret)


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoke ``token`` (again is harmless): every request with it is refused from now on."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_authenticate(*, secret: str) -> ApiToken | None:
    """The active token whose secret is ``secret`` (with its owner), or None; records its use."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None
    token = (ApiToken.objects.select_related("owner").filter(digest=_digest(secret), revoked_at__isnull=True,
                                                             owner__is_active=True).first())
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def api_token_throttle(*, token: ApiToken) -> int | None:
    """Count one request of ``token`` against its owner's limit: None when it may go on, else
    the seconds until it may (the owner's tokens made ``TRELLIS_API_RATE_LIMIT`` requests in
    this minute already)."""
    limit = settings.TRELLIS_API_RATE_LIMIT
    if limit <= 0:
        return None
    now = time.time()
    window = int(now // RATE_WINDOW_S)
    key = f"trellis:api-rate:user:{token.owner_id}:{window}"
    cache.add(key, 0, RATE_WINDOW_S * 2)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, RATE_WINDOW_S * 2)
        count = 1
    if count <= limit:
        return None
    return max(1, int((window + 1) * RATE_WINDOW_S - now) + 1)
