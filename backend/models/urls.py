from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path("models/", apis.ModelListApi.as_view(), name="model-list"),
    path("models/installer/", apis.ModelInstallerApi.as_view(), name="model-installer"),
    path("models/installs/", one_path("ModelInstallCollectionApi", apis.ModelInstallListApi,
                                      apis.ModelInstallCreateApi), name="model-install-list"),
    path("models/installs/upload/", apis.ModelInstallUploadApi.as_view(), name="model-install-upload"),
    path("models/installs/<int:install_id>/", one_path("ModelInstallItemApi", apis.ModelInstallDetailApi,
                                                        apis.ModelInstallDeleteApi), name="model-install-detail"),
    path("models/installs/<int:install_id>/retry/", apis.ModelInstallRetryApi.as_view(), name="model-install-retry"),
    path("models/installed/<str:name>/", apis.ModelRemoveApi.as_view(), name="model-remove"),
]
