"""Error pages: an unknown path under ``/api/`` answers JSON like the rest of the API."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.defaults import page_not_found


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: ``{"detail": ...}`` for API paths (a client parses JSON), Django's page
    elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return page_not_found(request, exception)
