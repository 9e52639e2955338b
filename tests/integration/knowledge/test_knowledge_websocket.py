"""``ws/knowledge/<id>/``: the owner sees a snapshot, then every document's progress live."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.urls import reverse

import jobs
from config.routing import websocket_urlpatterns

from .conftest import IDLE_TIMEOUT, text_file, upload

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
ORDER = ["queued", "parsing", "chunking", "embedding", "indexing", "ready"]


def socket(client: Client | None, knowledge_base_id: int) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost")]
    if client is not None:
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode()))
    return WebsocketCommunicator(application, f"/ws/knowledge/{knowledge_base_id}/", headers=headers)


async def events_until_settled(communicator: WebsocketCommunicator, document_id: int) -> list[dict]:
    events = []
    while True:
        event = await communicator.receive_json_from(timeout=60)
        events.append(event)
        if event["type"] == "document.progress" and event["document"]["id"] == document_id \
                and event["document"]["status"] in ("ready", "failed"):
            return events


async def test_the_owner_gets_a_snapshot_then_progress_in_order_through_ready_then_the_deletion(
    api, create_knowledge_base
):
    knowledge_base = await sync_to_async(create_knowledge_base)()
    earlier = (await sync_to_async(upload)(api, knowledge_base["id"], text_file("earlier.txt", topic="Squash"))).json()
    assert await sync_to_async(jobs.wait_until_idle)(IDLE_TIMEOUT)

    communicator = socket(api, knowledge_base["id"])
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_json_from(timeout=10)
    assert snapshot["type"] == "snapshot"
    assert [(document["id"], document["status"]) for document in snapshot["documents"]] == [
        (earlier["documents"][0]["id"], "ready")
    ]

    response = await sync_to_async(upload)(api, knowledge_base["id"], text_file(paragraphs=8))
    assert response.status_code == 201
    document_id = response.json()["documents"][0]["id"]
    events = await events_until_settled(communicator, document_id)
    assert all(event["type"] == "document.progress" and event["document"]["id"] == document_id for event in events)
    statuses = [event["document"]["status"] for event in events]
    assert statuses[-1] == "ready", f"ended {statuses[-1]}: {events[-1]['document']['error']}"
    # Statuses only move forward, and none is skipped after parsing.
    ranks = [ORDER.index(status) for status in statuses]
    assert ranks == sorted(ranks), statuses
    assert statuses[0] in ("queued", "parsing")
    assert {"parsing", "chunking", "embedding", "indexing", "ready"} <= set(statuses), statuses
    embedding = [event["document"] for event in events if event["document"]["status"] == "embedding"]
    done = [document["done"] for document in embedding]
    assert done == sorted(done), done
    assert embedding[-1]["done"] == embedding[-1]["total"] == embedding[-1]["chunk_count"] > 0
    assert events[-1]["document"]["chunk_count"] == embedding[-1]["total"]

    deleted = await sync_to_async(api.delete)(reverse("document-detail", args=[knowledge_base["id"], document_id]))
    assert deleted.status_code == 204
    assert await communicator.receive_json_from(timeout=10) == {"type": "document.deleted", "document_id": document_id}
    await communicator.disconnect()
    assert await sync_to_async(jobs.wait_until_idle)(IDLE_TIMEOUT)


async def test_embedding_progress_moves_batch_by_batch_before_the_document_is_ready(
    api, create_knowledge_base, monkeypatch
):
    from knowledge.services import ingestion

    # Every batch reports (the quarter-second throttle would hide them on a fast machine).
    monkeypatch.setattr(ingestion, "PROGRESS_INTERVAL_S", 0.0)
    knowledge_base = await sync_to_async(create_knowledge_base)(
        embedding_model={"component": "AllMiniLML6V2Embedding", "params": {"batch_size": 16}})
    communicator = socket(api, knowledge_base["id"])
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from(timeout=10))["type"] == "snapshot"

    response = await sync_to_async(upload)(api, knowledge_base["id"], text_file(paragraphs=300))
    document_id = response.json()["documents"][0]["id"]
    events = await events_until_settled(communicator, document_id)
    embedding = [event["document"] for event in events if event["document"]["status"] == "embedding"]
    total = embedding[-1]["total"]
    assert total >= 300
    between = sorted({document["done"] for document in embedding if 0 < document["done"] < total})
    # One report per batch of 16 chunks.
    assert len(between) >= total // 16 - 1, f"progress of {total} chunks: {[d['done'] for d in embedding]}"
    assert events[-1]["document"]["status"] == "ready"
    await communicator.disconnect()


async def test_another_users_socket_and_an_anonymous_one_are_closed_with_4403(
    create_knowledge_base, stranger_api
):
    knowledge_base = await sync_to_async(create_knowledge_base)()
    for client in (stranger_api, None):
        communicator = socket(client, knowledge_base["id"])
        connected, _ = await communicator.connect()
        assert connected
        assert await communicator.receive_output(timeout=10) == {"type": "websocket.close", "code": 4403}
        await communicator.wait()


async def test_a_missing_knowledge_base_is_closed_with_4403_too(api):
    communicator = socket(api, 987654)
    await communicator.connect()
    assert await communicator.receive_output(timeout=10) == {"type": "websocket.close", "code": 4403}
    await communicator.wait()
