from django.urls import path, re_path

from . import apis

urlpatterns = [
    path("v1/models", apis.ModelListApi.as_view(), name="openai-models"),
    path("v1/models/<str:model>", apis.ModelDetailApi.as_view(), name="openai-model"),
    path("v1/chat/completions", apis.ChatCompletionApi.as_view(), name="openai-chat-completions"),
    re_path(r"^v1/(?P<path>.*)$", apis.unknown_path),
]
