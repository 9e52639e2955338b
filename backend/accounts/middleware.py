"""Sign-in throttling, as middleware: ``SignInThrottleMiddleware`` refuses a sign-in that
``accounts.services.login_lockout`` locks out, before any password is checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from math import ceil

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.translation import ngettext

from .services import Lockout, client_address, login_lockout

Handler = Callable[[HttpRequest], HttpResponse]


class SignInThrottleMiddleware:
    """``429`` (with ``Retry-After``) for a sign-in on the API's session endpoint or the admin's
    login page that the throttle refuses; the user name is read as authentication reads it."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path_info in (reverse("auth-session"), reverse("admin:login")):
            username = _username(request)
            lockout = login_lockout(username=username, address=client_address(request)) if username else None
            if lockout is not None:
                return _refusal(request, lockout)
        return self.get_response(request)


def _username(request: HttpRequest) -> str | None:
    try:
        if request.content_type == "application/json":
            try:
                payload = json.loads(request.body or b"{}")
            except (ValueError, RecursionError):
                return None
            username = payload.get("username") if isinstance(payload, dict) else None
        else:
            username = request.POST.get("username")
    except RequestDataTooBig:
        return None  # nobody signs in with such a body; the view refuses it, naming the limit
    return username if isinstance(username, str) and username.strip() else None


def _refusal(request: HttpRequest, lockout: Lockout) -> HttpResponse:
    minutes = ceil(lockout.seconds / 60)
    if lockout.code == "too_many_user_names":
        message = ngettext(
            "Too many user names were tried from your address. Try again in %(minutes)d minute.",
            "Too many user names were tried from your address. Try again in %(minutes)d minutes.",
            minutes,
        )
    elif lockout.code == "too_many_sign_in_failures_for_name":
        message = ngettext(
            "Too many failed sign-ins for this user name. Sign in from an address you have used before, "
            "or try again in %(minutes)d minute.",
            "Too many failed sign-ins for this user name. Sign in from an address you have used before, "
            "or try again in %(minutes)d minutes.",
            minutes,
        )
    else:
        message = ngettext(
            "Too many failed sign-ins for this user name from your address. Try again in %(minutes)d minute.",
            "Too many failed sign-ins for this user name from your address. Try again in %(minutes)d minutes.",
            minutes,
        )
    message %= {"minutes": minutes}
    if request.path_info.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message, "code": lockout.code}, status=429)
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(lockout.seconds)
    return response
