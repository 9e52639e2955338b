from django.urls import path

from . import apis

urlpatterns = [
    path("components/", apis.ComponentListApi.as_view(), name="component-list"),
    path("components/validate/", apis.ComponentValidateApi.as_view(), name="component-validate"),
    path("components/presets/", apis.PresetListApi.as_view(), name="component-presets"),
    path("components/<str:name>/", apis.ComponentDetailApi.as_view(), name="component-detail"),
]
