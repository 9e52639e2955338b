"""Hostile input on every websocket: malformed URLs, binary and non-JSON frames, values REST
refuses. Each gets an error event (an ask: ``run.failed``), never a handshake error or a close
with 1011, and the socket answers the next frame as if nothing had happened."""

from __future__ import annotations

import json

import hypothesis
import pytest
import schemathesis
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from hypothesis import strategies as st
from schemathesis import GenerationMode

from chat.apis import AskApi
from chat.models import Conversation, Message
from evaluation.models import Evaluation, EvaluationDataset
from knowledge.services import knowledge_base_create
from tests.support.scripted_openai import chat_stream

from ..chat.conftest import (  # noqa: F401  (fixtures)
    application,
    browser,
    conversation,
    knowledge_base,
    naive_pipeline,
    receive_until_final,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

CHAT = "/v1/chat/completions"
NOT_FOUND = 4404


def communicator(client, path: str) -> WebsocketCommunicator:
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return WebsocketCommunicator(application, path, headers=[
        (b"origin", b"http://localhost"), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())])


async def opened(client, path: str) -> WebsocketCommunicator:
    socket = communicator(client, path)
    connected, _ = await socket.connect(timeout=10)
    assert connected, f"{path} refused the handshake"
    return socket


async def test_an_ask_with_an_unrepresentable_pipeline_id_fails_the_run_and_the_next_ask_is_answered(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["Reciprocal rank fusion [1]."]))
    socket = await opened(browser, f"/ws/chat/{conversation.pk}/")

    await socket.send_to(text_data='{"type": "ask", "question": "x", "pipeline_id": 1e400}')
    failed = await socket.receive_json_from(timeout=10)
    assert failed["type"] == "run.failed", failed
    assert failed["code"] == "invalid" and [error["path"] for error in failed["errors"]] == ["pipeline_id"]
    assert failed["error"], "the refusal must say why"

    await socket.send_json_to({"type": "ask", "question": "What does the hybrid retriever fuse?",
                               "pipeline_id": pipeline.pk})
    events = await receive_until_final(socket)
    assert events[0]["type"] == "run.started" and events[-1]["type"] == "answer.completed", events
    assert events[-1]["answer"] == "Reciprocal rank fusion [1]."
    await socket.disconnect()
    assert await sync_to_async(Message.objects.filter(role="user").count)() == 1, "the refused ask was recorded"


async def test_the_socket_refuses_exactly_the_questions_rest_refuses(browser, conversation):
    limit = AskApi.InputSerializer().fields["question"].max_length
    assert limit == 10_000
    socket = await opened(browser, f"/ws/chat/{conversation.pk}/")

    await socket.send_json_to({"type": "ask", "question": "q" * 1_000_000})
    too_long = await socket.receive_json_from(timeout=10)
    assert (too_long["type"], too_long["code"]) == ("run.failed", "invalid")
    assert [(error["path"], error["code"]) for error in too_long["errors"]] == [("question", "max_length")]
    assert "10000" in too_long["errors"][0]["message"]

    # At the limit the question is taken: it fails only because the conversation has no pipeline.
    await socket.send_json_to({"type": "ask", "question": "q" * limit})
    taken = await socket.receive_json_from(timeout=10)
    assert (taken["type"], taken["code"]) == ("run.failed", "not_answered") and "pipeline" in taken["error"]

    for bad, path in [({"question": ["a"]}, "question"), ({"question": "   "}, "question"), ({}, "question"),
                      ({"question": "x", "pipeline_id": "three"}, "pipeline_id"),
                      ({"question": "x", "pipeline_id": True}, "pipeline_id")]:
        await socket.send_json_to({"type": "ask", **bad})
        event = await socket.receive_json_from(timeout=10)
        assert event["type"] == "run.failed" and event["code"] == "invalid", (bad, event)
        assert [error["path"] for error in event["errors"]] == [path], (bad, event)
    spanish = communicator(browser, f"/ws/chat/{conversation.pk}/?lang=es")
    await spanish.connect()
    await spanish.send_json_to({"type": "ask", "question": "q" * 20_000})
    assert "caracteres" in (await spanish.receive_json_from(timeout=10))["errors"][0]["message"]
    await spanish.disconnect()
    await socket.disconnect()


@pytest.fixture
def evaluation(owner):
    dataset = EvaluationDataset.objects.create(owner=owner, name="Set", source="upload:set.zip",
                                               knowledge_base=knowledge_base_create(owner=owner, name="Set"))
    return Evaluation.objects.create(owner=owner, dataset=dataset)


@pytest.fixture
def socket_paths(owner, conversation, evaluation):
    return {"chat": f"/ws/chat/{conversation.pk}/",
            "knowledge": f"/ws/knowledge/{evaluation.dataset.knowledge_base_id}/",
            "evaluation": f"/ws/evaluation/{evaluation.pk}/"}


HOSTILE_FRAMES = [  # as the ASGI server hands them over
    ({"bytes": b"\x00\x01binary"}, "binary_frame"),
    ({"text": "not json at all"}, "not_json"),
    ({"text": ""}, "not_json"),
    ({"text": "[" * 100_000}, "not_json"),
    ({"text": "[1, 2]"}, "unknown_type"),
    ({"text": '{"type": 7}'}, "unknown_type"),
    ({"text": '{"type": "subscribe"}'}, "unknown_type"),
]


async def test_binary_non_json_and_unknown_frames_get_an_error_event_on_every_socket(browser, socket_paths):
    for name, path in socket_paths.items():
        socket = await opened(browser, path)
        if name != "chat":
            await socket.receive_json_from(timeout=10)  # the snapshot sent on connect
        for frame, code in HOSTILE_FRAMES:
            await socket.send_input({"type": "websocket.receive", **frame})
            event = await socket.receive_json_from(timeout=10)
            assert (event["type"], event["code"]) == ("error", code), f"{name}: {frame!r:.60} answered {event}"
            assert event["error"]
        # Still open and still answering: a last frame gets its answer too.
        await socket.send_to(text_data='{"type": "ping"}')
        assert (await socket.receive_json_from(timeout=10))["code"] == "unknown_type"
        assert await socket.receive_nothing(timeout=0.2)
        await socket.disconnect()


async def test_a_malformed_socket_url_is_closed_with_4404_instead_of_failing_the_handshake(browser, socket_paths):
    for path in ["/ws/knowledge/abc/", "/ws/chat/1.5/", "/ws/evaluation/-3/", "/ws/chat/", "/ws/nowhere/",
                 "/ws/knowledge/7/extra/", "/"]:
        socket = communicator(browser, path)
        connected, _ = await socket.connect(timeout=10)
        assert connected, path
        assert await socket.receive_output(timeout=5) == {"type": "websocket.close", "code": NOT_FOUND}, path
    # An id past any database integer is simply nobody's object.
    for path in socket_paths.values():
        huge = path.rsplit("/", 2)[0] + "/" + "9" * 40 + "/"
        socket = communicator(browser, huge)
        await socket.connect(timeout=10)
        assert await socket.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}, huge


async def test_cancel_with_nothing_running_is_harmless_and_the_socket_keeps_answering(browser, conversation):
    socket = await opened(browser, f"/ws/chat/{conversation.pk}/")
    await socket.send_json_to({"type": "cancel", "extra": [1, 2, 3]})
    assert await socket.receive_nothing(timeout=0.3)
    await socket.send_json_to({"type": "ask", "question": "anything"})
    event = await socket.receive_json_from(timeout=10)
    assert (event["type"], event["code"]) == ("run.failed", "not_answered")
    await socket.disconnect()



async def test_an_ask_that_fails_before_its_run_starts_frees_the_socket(browser, conversation):
    socket = await opened(browser, f"/ws/chat/{conversation.pk}/")
    # Another tab deletes the conversation while this socket is open.
    await sync_to_async(Conversation.objects.filter(pk=conversation.pk).delete)()
    for _ in range(2):
        await socket.send_json_to({"type": "ask", "question": "still there?"})
        event = await socket.receive_json_from(timeout=10)
        assert event["type"] == "run.failed" and event["code"] != "busy", event
        assert "conversation" in event["error"], event
    await socket.disconnect()


def ask_bodies_from_the_openapi_schema(count: int) -> list:
    """Bodies Schemathesis generates for REST's ask operation, valid and invalid alike: the
    socket's ask frames carry the same fields, validated by the same serializer."""
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(),
                                            headers={"Accept": "application/json"})
    operation = schema.find_operation_by_label("POST /api/v1/conversations/{conversation_id}/ask/")
    strategy = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
    bodies: list = []

    @hypothesis.settings(max_examples=count, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck), phases=[hypothesis.Phase.generate])
    @hypothesis.given(case=strategy)
    def collect(case) -> None:
        if case.media_type == "application/json":  # what a socket frame can carry
            bodies.append(case.body)

    collect()
    return bodies


async def test_schemathesis_ask_bodies_each_get_one_final_event_and_never_break_the_socket(browser, conversation):
    bodies = await sync_to_async(ask_bodies_from_the_openapi_schema)(200)
    assert len(bodies) >= 50, len(bodies)
    socket = await opened(browser, f"/ws/chat/{conversation.pk}/")
    outcomes = set()
    for body in bodies:
        frame = {"type": "ask", **body} if isinstance(body, dict) else body
        if isinstance(body, bytes):  # a body that is not JSON at all: sent as the text (or bytes) it is
            try:
                await socket.send_input({"type": "websocket.receive", "text": body.decode()})
            except UnicodeDecodeError:
                await socket.send_input({"type": "websocket.receive", "bytes": body})
        else:
            await socket.send_input({"type": "websocket.receive", "text": json.dumps(frame)})
        event = await socket.receive_json_from(timeout=10)
        expected = ("run.failed",) if isinstance(body, dict) else ("error", "run.failed")
        assert event["type"] in expected and event["code"] in ("invalid", "not_answered", "unknown_type",
                                                               "not_json", "binary_frame"), \
            f"{frame!r:.200} answered {event}"
        assert event["error"], f"{frame!r:.200} answered {event} without saying why"
        outcomes.add(event["code"])
        assert await socket.receive_nothing(timeout=0.01), f"{frame!r:.200} answered more than once"
    assert {"invalid", "not_answered"} <= outcomes, "the generated bodies should include valid and invalid asks"
    assert await sync_to_async(Message.objects.count)() == 0  # no pipeline: nothing was asked
    await socket.disconnect()
