from django.urls import path

from . import consumers

websocket_urlpatterns = [
    path("ws/models/", consumers.ModelInstallConsumer.as_asgi()),
]
