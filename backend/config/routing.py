"""Websocket routes of every app, gathered for the ASGI router; any other path is closed with
4404 (``common.sockets.UnknownPathSocket``), never a failed handshake."""

from django.urls import re_path

from chat.routing import websocket_urlpatterns as chat_websocket_urlpatterns
from common.sockets import UnknownPathSocket
from evaluation.routing import websocket_urlpatterns as evaluation_websocket_urlpatterns
from knowledge.routing import websocket_urlpatterns as knowledge_websocket_urlpatterns
from models.routing import websocket_urlpatterns as models_websocket_urlpatterns

websocket_urlpatterns: list = [
    *knowledge_websocket_urlpatterns,
    *chat_websocket_urlpatterns,
    *evaluation_websocket_urlpatterns,
    *models_websocket_urlpatterns,
    re_path(r"", UnknownPathSocket.as_asgi()),
]
