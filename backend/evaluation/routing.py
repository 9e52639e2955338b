from django.urls import path

from . import consumers

websocket_urlpatterns = [
    path("ws/evaluation/<int:evaluation_id>/", consumers.EvaluationConsumer.as_asgi()),
]
