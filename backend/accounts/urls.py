from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path("auth/session/", apis.SessionApi.as_view(), name="auth-session"),
    path("api-tokens/", one_path("ApiTokenCollectionApi", apis.ApiTokenListApi, apis.ApiTokenCreateApi),
         name="api-token-list"),
    path("api-tokens/<int:api_token_id>/revoke/", apis.ApiTokenRevokeApi.as_view(), name="api-token-revoke"),
]
