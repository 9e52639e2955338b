"""Websocket routes of every app, gathered for the ASGI router."""

from chat.routing import websocket_urlpatterns as chat_websocket_urlpatterns
from evaluation.routing import websocket_urlpatterns as evaluation_websocket_urlpatterns
from knowledge.routing import websocket_urlpatterns as knowledge_websocket_urlpatterns
from models.routing import websocket_urlpatterns as models_websocket_urlpatterns

websocket_urlpatterns: list = [
    *knowledge_websocket_urlpatterns,
    *chat_websocket_urlpatterns,
    *evaluation_websocket_urlpatterns,
    *models_websocket_urlpatterns,
]
