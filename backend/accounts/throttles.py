"""The session API's rate limit: ``TRELLIS_SESSION_API_RATE_LIMIT`` requests a minute per
signed-in user (0: none), on every API view; past it DRF answers ``429`` with ``Retry-After``.
Requests of visitors who are not signed in are left to the sign-in throttle
(``accounts.services.sign_in``): the only view they reach is sign-in itself."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


class SessionUserRateThrottle(SimpleRateThrottle):
    scope = "session-api"

    def get_rate(self) -> str | None:
        # Read at each request (not once at import, as DRF's own throttles read their rates), so
        # a changed setting applies at once.
        limit = settings.TRELLIS_SESSION_API_RATE_LIMIT
        return f"{limit}/min" if limit > 0 else None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": user.pk}
