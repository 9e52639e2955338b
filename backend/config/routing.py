"""Websocket routes of every app, gathered for the ASGI router."""

websocket_urlpatterns: list = []
