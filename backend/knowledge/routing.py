from django.urls import path

from . import consumers

websocket_urlpatterns = [
    path("ws/knowledge/<int:knowledge_base_id>/", consumers.KnowledgeBaseConsumer.as_asgi()),
]
