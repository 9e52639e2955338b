"""A knowledge base with one ready document, and pipelines answered by a scripted LLM server."""

from __future__ import annotations

import pytest
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

import jobs
from chat.services import conversation_create
from config.routing import websocket_urlpatterns
from knowledge.services import documents_upload, knowledge_base_create
from pipelines.services import pipeline_create

application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))

GUIDE = (
    "A hybrid retriever fuses BM25 keyword search and dense semantic search with reciprocal rank fusion.\n\n"
    "Retrieve-then-expand returns each retrieved chunk with its neighbours in the document.\n\n"
    "The agentic ensemble lets an LLM choose which retrievers to consult, round by round."
)


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


@pytest.fixture
def knowledge_base(owner):
    base = knowledge_base_create(owner=owner, name="Guide", chunker={
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 120, "chunk_overlap": 0}})
    documents_upload(knowledge_base=base, files=[SimpleUploadedFile("guide.txt", GUIDE.encode())])
    assert jobs.wait_until_idle(120)
    base.refresh_from_db()
    return base


def llm(server) -> dict:
    return {"component": "OpenAICompatibleLLM", "params": {"base_url": server.base_url, "model": "m",
                                                           "function_calling": "tools"}}


def naive_pipeline(owner, knowledge_base, server, name="Keyword", **synthesizer):
    """NaiveRAG over BM25 answering with ``server``; ``synthesizer`` adds the synthesizer's settings."""
    return pipeline_create(owner=owner, name=name, knowledge_base=knowledge_base, strategy={
        "component": "NaiveRAG", "params": {
            "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
            "followup_llm": llm(server),
            "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm(server), **synthesizer}}}})


def agentic_pipeline(owner, knowledge_base, server):
    return pipeline_create(owner=owner, name="Agentic", knowledge_base=knowledge_base, strategy={
        "component": "NaiveRAG", "params": {
            "retriever": {"component": "AgenticEnsembleRetriever", "params": {
                "max_iters": 2, "llm_model": llm(server),
                "children": [{"component": "BM25Retriever", "params": {"top_k": 1}},
                             {"component": "BM25Retriever", "params": {"top_k": 3, "k1": 1.2}}]}},
            "followup_llm": llm(server),
            "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm(server)}}}})


@pytest.fixture
def conversation(owner):
    return conversation_create(owner=owner)


def socket(client: Client | None, conversation_id: int, language: str | None = None) -> WebsocketCommunicator:
    return _communicator(client, f"/ws/chat/{conversation_id}/", language)


def list_socket(client: Client | None) -> WebsocketCommunicator:
    """The owner's conversation list, live."""
    return _communicator(client, "/ws/conversations/", None)


def _communicator(client: Client | None, path: str, language: str | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost")]
    if client is not None:
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode()))
    if language is not None:
        headers.append((b"accept-language", language.encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def receive_until_final(communicator: WebsocketCommunicator, timeout: float = 60) -> list[dict]:
    events = []
    while True:
        event = await communicator.receive_json_from(timeout=timeout)
        events.append(event)
        if event["type"] in ("answer.completed", "run.failed", "run.cancelled"):
            return events
