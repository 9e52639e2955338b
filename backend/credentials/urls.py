from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path("credentials/", one_path("CredentialCollectionApi", apis.CredentialListApi, apis.CredentialCreateApi),
         name="credential-list"),
    path(
        "credentials/<int:credential_id>/",
        one_path("CredentialItemApi", apis.CredentialDetailApi, apis.CredentialUpdateApi, apis.CredentialDeleteApi),
        name="credential-detail",
    ),
    path("credentials/<int:credential_id>/rotate/", apis.CredentialRotateApi.as_view(), name="credential-rotate"),
]
