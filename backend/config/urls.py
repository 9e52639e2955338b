from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

api_v1 = [
    path("", include("accounts.urls")),
    path("", include("catalog.urls")),
    path("", include("knowledge.urls")),
    path("", include("credentials.urls")),
    path("", include("pipelines.urls")),
    path("", include("chat.urls")),
    path("", include("evaluation.urls")),
    path("", include("models.urls")),
]

handler400 = "common.errors.bad_request"
handler404 = "common.errors.not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/schema/swagger-ui/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/schema/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    # The OpenAI-compatible API, where its clients look for it (``<base URL>/v1/...``).
    path("", include("gateway.urls")),
    path("", include("web.urls")),
]
