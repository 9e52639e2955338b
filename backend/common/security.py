"""The Content-Security-Policy header, as middleware: Django 5.2 has no support of its own."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

Handler = Callable[[HttpRequest], HttpResponse]
API_DOCS = ("/api/schema/swagger-ui/", "/api/schema/redoc/")


def content_security_policy(request: HttpRequest) -> str:
    """The policy for ``request``'s page.

    Everything loads from this origin only; the websockets of the same host are allowed
    (``ws:`` on plain http, ``wss:`` behind TLS). The browser app needs ``'unsafe-eval'``: its
    forms validate against the backend's JSON Schemas with Ajv, which compiles each schema to a
    function at run time (never inline scripts, which stay forbidden). The admin needs nothing
    of the kind; the API documentation pages (Swagger UI, Redoc) start with an inline script.
    """
    host = request.get_host()
    if request.path.startswith("/admin/"):
        scripts, styles = "'self'", "'self'"
    elif request.path.startswith(API_DOCS):
        scripts, styles = "'self' 'unsafe-inline'", "'self' 'unsafe-inline'"
    else:
        scripts, styles = "'self' 'unsafe-eval'", "'self'"
    return "; ".join([
        "default-src 'self'",
        f"script-src {scripts}",
        f"style-src {styles}",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        f"connect-src 'self' ws://{host} wss://{host}",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = content_security_policy(request)
        return response
