"""Error pages: an unknown path under ``/api/`` answers JSON like the rest of the API, and so
does a body Django refuses while a middleware reads it (too large, too many files)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.defaults import bad_request as django_bad_request
from django.views.defaults import page_not_found

from common.limits import limit_refusal, refusal_response


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler400``: a request-size refusal names its limit (``413``/``400``, JSON under
    ``/api/``); any other bad request keeps Django's page, or ``{"detail"}`` under ``/api/``."""
    refusal = limit_refusal(exception, request) if exception is not None else None
    if refusal is not None:
        return refusal_response(request.path, *refusal)
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Bad request.")}, status=400)
    return django_bad_request(request, exception)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: ``{"detail": ...}`` for API paths (a client parses JSON), Django's page
    elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return page_not_found(request, exception)
