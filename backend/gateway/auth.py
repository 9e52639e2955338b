"""Who is calling the OpenAI-compatible API or the MCP server: the API token sent as
``Authorization: Bearer``, checked and counted against its rate limit.

Only these endpoints read a bearer token; the session API never does, so a token cannot do
there what only a signed-in browser may (and a browser's cookies cannot reach these)."""

from __future__ import annotations

from dataclasses import dataclass

from channels.db import database_sync_to_async

from accounts.models import ApiToken
from accounts.services import api_token_authenticate, api_token_throttle
from rag.core.i18n import gettext_noop

MISSING = gettext_noop("send an API token as 'Authorization: Bearer <token>'; make one on your account page")
UNKNOWN = gettext_noop("this API token is not valid: it was revoked, or never existed")
THROTTLED = gettext_noop("your API tokens made too many requests this minute; try again in {seconds} seconds")


@dataclass(frozen=True)
class Refusal:
    """Why a request is not served: ``status`` (401 or 429), a message ``template`` with its
    ``context``, a stable ``code``, and for 429 the ``retry_after`` seconds."""

    status: int
    template: str
    code: str
    context: dict
    retry_after: int | None = None


def bearer_secret(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None."""
    scheme, _, secret = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return secret.strip() or None


def _check(secret: str | None) -> ApiToken | Refusal:
    if not secret:
        return Refusal(401, MISSING, "missing_api_key", {})
    token = api_token_authenticate(secret=secret)
    if token is None:
        return Refusal(401, UNKNOWN, "invalid_api_key", {})
    retry_after = api_token_throttle(token=token)
    if retry_after is not None:
        return Refusal(429, THROTTLED, "rate_limit_exceeded", {"seconds": retry_after}, retry_after)
    return token


async def api_token_check(authorization: str | None) -> ApiToken | Refusal:
    """The active token of an ``Authorization`` header (its owner loaded), counted once against
    its rate limit; or why it is refused."""
    return await database_sync_to_async(_check)(bearer_secret(authorization))
