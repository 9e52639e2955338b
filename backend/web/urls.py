from django.urls import path, re_path

from . import views

app_name = "web"

urlpatterns = [
    path("", views.spa_shell, name="spa"),
    # Client-side routes (e.g. /pipelines/3) load the same shell; API, admin and static
    # paths are matched earlier in the root URLconf.
    re_path(r"^(?!api/|admin/|static/|ws/)[\w\-/]+/?$", views.spa_shell, name="spa-route"),
]
