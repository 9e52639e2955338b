"""``ws/evaluation/<id>/``: the owner sees the evaluation's state on connect, then its progress
until it is done."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.urls import reverse

from config.routing import websocket_urlpatterns

from .conftest import cranfield_head, wait_for_jobs
from .test_evaluation_api import create, upload

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))


def socket(client, evaluation_id: int) -> WebsocketCommunicator:
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]
    return WebsocketCommunicator(application, f"/ws/evaluation/{evaluation_id}/", headers=headers)


async def test_the_owner_follows_an_evaluation_to_done_and_a_stranger_is_closed(api, stranger_api, tmp_path):
    imported = await sync_to_async(upload)(api, tmp_path, cranfield_head(50), "Cranfield head")
    assert imported.status_code == 201, imported.content
    await sync_to_async(wait_for_jobs)()
    created = await sync_to_async(create)(api, dataset=imported.json()["id"], presets=["keyword", "semantic"])
    assert created.status_code == 201, created.content
    evaluation_id = created.json()["id"]

    communicator = socket(api, evaluation_id)
    connected, _ = await communicator.connect()
    assert connected
    states = []
    while not states or states[-1]["status"] not in ("done", "failed"):
        event = await communicator.receive_json_from(timeout=120)
        assert event["type"] == "evaluation.progress" and event["evaluation"]["id"] == evaluation_id
        states.append(event["evaluation"])
    await communicator.disconnect()

    assert states[-1] == {"id": evaluation_id, "status": "done", "done": 100, "total": 100, "error": None}
    done = [state["done"] for state in states]
    assert done == sorted(done), "progress went backwards"
    stored = (await sync_to_async(api.get)(reverse("evaluation-detail", args=[evaluation_id]))).json()
    assert stored["progress"] == {"done": 100, "total": 100, "queries": 50, "answers": 0}

    intruder = socket(stranger_api, evaluation_id)
    await intruder.connect()
    assert await intruder.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    await intruder.disconnect()
