"""Sign-in throttling, as middleware: ``SignInThrottleMiddleware`` refuses sign-in attempts for a
user name and address that failed too often (``accounts.services`` counts them), before any
password is checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from math import ceil

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.translation import ngettext

from .services import client_address, login_lockout_seconds

Handler = Callable[[HttpRequest], HttpResponse]


class SignInThrottleMiddleware:
    """``429`` for a sign-in (API session or admin login) by a user name and address that
    failed ``TRELLIS_LOGIN_MAX_FAILURES`` times within ``TRELLIS_LOGIN_LOCKOUT_MINUTES``."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path_info in (reverse("auth-session"), reverse("admin:login")):
            username = _username(request)
            seconds = login_lockout_seconds(username=username, address=client_address(request)) if username else 0
            if seconds:
                return _refusal(request, seconds)
        return self.get_response(request)


def _username(request: HttpRequest) -> str | None:
    if request.content_type == "application/json":
        try:
            payload = json.loads(request.body or b"{}")
        except (ValueError, RecursionError):
            return None
        username = payload.get("username") if isinstance(payload, dict) else None
    else:
        username = request.POST.get("username")
    return username if isinstance(username, str) and username else None


def _refusal(request: HttpRequest, seconds: int) -> HttpResponse:
    minutes = ceil(seconds / 60)
    message = ngettext(
        "Too many failed sign-ins for this user name from your address. Try again in %(minutes)d minute.",
        "Too many failed sign-ins for this user name from your address. Try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}
    if request.path_info.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message, "code": "too_many_sign_in_failures"}, status=429)
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(seconds)
    return response
