from django.urls import path

from .consumers import ChatConsumer, ConversationListConsumer

websocket_urlpatterns = [
    path("ws/conversations/", ConversationListConsumer.as_asgi()),
    path("ws/chat/<int:conversation_id>/", ChatConsumer.as_asgi()),
]
