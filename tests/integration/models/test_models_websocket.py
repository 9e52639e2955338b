"""``ws/models/``: an install from the loopback hub followed live, byte by byte, to ready; then
the cross-encoder preset, now offered, re-ranks over a real knowledge base."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

import jobs
from config.routing import websocket_urlpatterns
from knowledge.runtime import retriever_infra
from knowledge.services import documents_upload, knowledge_base_create
from rag.components import load_components
from rag.core import build

from .conftest import REPO, wait_for_jobs

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
DOCUMENTS = {
    "festival.txt": "The Zorblax lantern festival is held in Quillon every March, on the first full moon of spring.",
    "river.txt": "The Vell river floods the lower quarter of Quillon when the snow melts.",
    "bank.txt": "The bank of Quillon keeps its money in a vault under the market square.",
}


def socket(client, language: str = "en") -> WebsocketCommunicator:
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]
    return WebsocketCommunicator(application, f"/ws/models/?lang={language}", headers=headers)


async def test_a_hub_install_is_followed_to_ready_then_the_cross_encoder_preset_reranks_a_knowledge_base(
        api, owner, hub):
    hub.delay_s = 0.01  # a few events while the weights arrive
    communicator = socket(api)
    connected, _ = await communicator.connect()
    assert connected
    assert await communicator.receive_json_from(timeout=10) == {"type": "model.installs", "installs": []}

    created = await sync_to_async(api.post)(reverse("model-install-list"), {
        "source": "hub", "reference": REPO, "kind": "cross-encoder", "name": "tiny-ce"}, content_type="application/json")
    assert created.status_code == 201, created.content
    events = []
    while not events or events[-1]["status"] not in ("ready", "failed"):
        event = await communicator.receive_json_from(timeout=120)
        assert event["type"] == "model.install" and event["install"]["id"] == created.json()["id"]
        events.append(event["install"])
    await communicator.disconnect()

    statuses = [event["status"] for event in events]
    assert statuses[0] == "queued" and statuses[-1] == "ready", statuses
    assert "downloading" in statuses and "checking" in statuses
    assert statuses.index("checking") > max(index for index, status in enumerate(statuses) if status == "downloading")
    received = [event["done"] for event in events if event["status"] == "downloading"]
    total = sum(len(item.data) for item in hub.repos[REPO].files.values())
    assert received == sorted(received) and received[-1] == total and len(received) >= 3, received
    assert events[-1]["error"] is None and events[-1]["size"] == total

    presets = (await sync_to_async(api.get)(reverse("component-presets"))).json()
    chosen = next(row for row in presets if row["name"] == "hybrid-cross-encoder")
    assert chosen["available"] and chosen["tree"]["params"]["model_name"] == "tiny-ce"

    def rerank() -> tuple[list, object, dict]:
        knowledge_base = knowledge_base_create(owner=owner, name="Quillon", chunker={
            "component": "RecursiveCharacterChunker", "params": {"chunk_size": 200, "chunk_overlap": 0}})
        documents_upload(knowledge_base=knowledge_base, files=[SimpleUploadedFile(name, text.encode())
                                                               for name, text in DOCUMENTS.items()])
        assert jobs.wait_until_idle(180)
        knowledge_base.refresh_from_db()
        retriever = build(chosen["tree"], kind="retriever", registry=load_components(),
                          infra=retriever_infra(knowledge_base))
        chunks, node = retriever.retrieve("When is the lantern festival held?")
        names = {document.pk: document.name for document in knowledge_base.documents.all()}
        return chunks, node, names

    chunks, node, names = await sync_to_async(rerank)()
    assert node["class"] == "SentenceTransformerCrossEncoderRetriever"
    assert node["params"]["model_name"] == "tiny-ce"
    fusion = node["children"][0]
    assert {names[row["document_id"]] for row in fusion["results"]} == set(DOCUMENTS)
    assert 1 <= len(chunks) <= 5 and all(0 < row["score"] < 1 for row in node["results"])
    assert [row["score"] for row in node["results"]] == sorted((row["score"] for row in node["results"]), reverse=True)


async def test_a_failed_install_arrives_with_its_reason_in_the_sockets_language(api, hub):
    communicator = socket(api, "es")
    await communicator.connect()
    await communicator.receive_json_from(timeout=10)
    created = await sync_to_async(api.post)(reverse("model-install-list"), {
        "source": "hub", "reference": "acme/missing", "kind": "cross-encoder"}, content_type="application/json")
    assert created.status_code == 201
    event = {"status": "queued"}
    while event["status"] not in ("ready", "failed"):
        event = (await communicator.receive_json_from(timeout=60))["install"]
    await communicator.disconnect()
    assert event["status"] == "failed" and event["error_code"] == "not_found"
    assert event["error"].startswith("el hub en ") and "error_template" not in event
    await sync_to_async(wait_for_jobs)()


async def test_an_anonymous_socket_is_closed():
    communicator = WebsocketCommunicator(application, "/ws/models/", headers=[(b"origin", b"http://localhost")])
    await communicator.connect()
    assert await communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    await communicator.disconnect()
