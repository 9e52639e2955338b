from django.urls import path, re_path

from . import health, views

app_name = "web"

urlpatterns = [
    # Probes for proxies and orchestrators (docs/deploy.md); matched before the client routes.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("", views.spa_shell, name="spa"),
    # Client-side routes (e.g. /pipelines/3) load the same shell; API, admin and static
    # paths are matched earlier in the root URLconf.
    re_path(r"^(?!api/|admin/|static/|ws/|v1/|mcp/)[\w\-/]+/?$", views.spa_shell, name="spa-route"),
]
