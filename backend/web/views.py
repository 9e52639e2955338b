from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from .frontend_assets import FrontendNotBuilt, entry_assets


@ensure_csrf_cookie
def spa_shell(request: HttpRequest) -> HttpResponse:
    """The single page application's HTML; the client routes everything below it."""
    try:
        assets = entry_assets()
    except FrontendNotBuilt as exc:
        return render(request, "frontend_missing.html", {"reason": str(exc)}, status=503)
    return render(request, "spa.html", {"assets": assets})


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages that name no icon (the admin's): the app's icon."""
    return HttpResponsePermanentRedirect(staticfiles_storage.url("favicon.svg"))
