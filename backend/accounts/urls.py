from django.urls import path

from . import apis

urlpatterns = [
    path("auth/session/", apis.SessionApi.as_view(), name="auth-session"),
]
