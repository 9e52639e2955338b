"""Bounded runs (issue 38, finding 8): a user's concurrent runs are capped on every transport
(the websocket, the REST ask, the OpenAI-compatible API and MCP), and a run past its deadline or
its LLM-call budget fails with a message naming the limit, its trace and partial answer kept; a
REST ask stopped meanwhile says so (it was a 500)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from django.urls import reverse

from accounts.services import api_token_create
from chat import limits, services
from chat.models import Message
from chat.services import chat_turn_start, conversation_create
from gateway.mcp import Target, _ask
from rag.tracing import RunLimits, configure_run_limits, default_run_limits
from tests.support.scripted_openai import Delay, chat_stream

from ..chat.conftest import browser, knowledge_base, naive_pipeline, receive_until_final, socket  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CHAT = "/v1/chat/completions"


@pytest.fixture
def run_limits():
    """Set the process's run limits for one test, then back to those the settings gave."""
    before = default_run_limits()
    yield lambda **given: configure_run_limits(RunLimits(**given))
    configure_run_limits(before)


def answering(owner, pipeline, count: int) -> list:
    """``count`` questions of ``owner`` being answered now (recorded, streaming, their run open)."""
    return [chat_turn_start(conversation=conversation_create(owner=owner, pipeline=pipeline), question="q?")
            for _ in range(count)]


def test_a_third_concurrent_run_of_one_user_is_refused_on_every_transport(
        owner, stranger, browser, knowledge_base, scripted_openai, settings):
    settings.TRELLIS_MAX_CONCURRENT_RUNS_PER_USER = 2
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai)
    turns = answering(owner, pipeline, 2)
    third = conversation_create(owner=owner, pipeline=pipeline)

    async def over_the_socket(language):
        communicator = socket(browser, third.pk, language)
        await communicator.connect()
        await communicator.send_json_to({"type": "ask", "question": "And a third?"})
        event = await communicator.receive_json_from(timeout=30)
        await communicator.disconnect()
        return event

    refused = async_to_sync(over_the_socket)(None)
    assert refused["type"] == "run.failed" and refused["message_id"] is None and refused["code"] == "too_many_runs"
    assert "(the limit is 2)" in refused["error"]
    spanish = async_to_sync(over_the_socket)("es")
    assert spanish["code"] == "too_many_runs" and "preguntas" in spanish["error"], spanish["error"]

    rest = browser.post(reverse("conversation-ask", args=[third.pk]), {"question": "And a third?"},
                        content_type="application/json")
    assert rest.status_code == 429 and rest.json()["code"] == "too_many_runs"
    assert "(the limit is 2)" in rest.json()["detail"]

    token = api_token_create(owner=owner, name="laptop").secret
    gateway = async_to_sync(AsyncClient().post)(
        "/v1/chat/completions", json.dumps({"model": "keyword", "messages": [{"role": "user", "content": "Third?"}]}),
        content_type="application/json", headers={"Authorization": f"Bearer {token}"})
    assert gateway.status_code == 429
    assert gateway.json()["error"]["code"] == "too_many_runs" and gateway.json()["error"]["type"] == "invalid_request_error"

    tool = async_to_sync(_ask)(owner, Target("ask", pipeline.pk, pipeline.name, ""), {"question": "Third?"},
                               lambda conversation_id: None)
    assert tool.is_error and "(the limit is 2)" in tool.content[0].text

    assert not Message.objects.filter(conversation=third).exists(), "a refused question is not recorded"
    assert Message.objects.filter(status=Message.Status.STREAMING).count() == 2

    # Another user is not held back by them, and the owner may ask again once one has finished.
    stranger_pipeline = naive_pipeline(stranger, knowledge_base, scripted_openai)
    answering(stranger, stranger_pipeline, 1)
    services.chat_turn_complete(turn=turns[0], state={"response": "done", "citations": [], "trace": {},
                                                      "chunks_sent": []})
    assert chat_turn_start(conversation=third, question="Now?").answer.status == Message.Status.STREAMING


def test_a_run_past_its_deadline_fails_naming_the_limit_and_keeps_what_it_wrote(
        owner, browser, knowledge_base, scripted_openai, run_limits):
    run_limits(deadline_s=0.6)
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai)
    conversation = conversation_create(owner=owner, pipeline=pipeline)
    scripted_openai.enqueue(CHAT, chat_stream([f"word{index} " for index in range(100)], interval=0.1))

    async def ask():
        communicator = socket(browser, conversation.pk)
        await communicator.connect()
        await communicator.send_json_to({"type": "ask", "question": "What is a hybrid retriever?"})
        events = await receive_until_final(communicator, timeout=30)
        await communicator.disconnect()
        return events

    events = async_to_sync(ask)()
    final = events[-1]
    assert final["type"] == "run.failed" and final["code"] == "run_limit"
    assert "stopped after 0.6 seconds" in final["error"]
    answer = Message.objects.get(pk=final["message_id"])
    assert answer.status == Message.Status.FAILED and answer.text.startswith("word0 word1"), answer.text
    assert len(answer.text.split()) < 100
    trace = answer.trace.trace
    assert trace["stopped_by"]["limit"] == "deadline" and trace["stopped_by"]["setting"] == "TRELLIS_RUN_DEADLINE_S"
    assert [step["step"] for step in trace["steps"]][-1] == "generate"


def test_a_run_stuck_in_a_call_past_its_deadline_is_stopped_by_the_chat(
        owner, browser, knowledge_base, scripted_openai, run_limits, monkeypatch):
    run_limits(deadline_s=0.3)
    monkeypatch.setattr(limits, "DEADLINE_GRACE_S", 0.3)
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai)
    conversation = conversation_create(owner=owner, pipeline=pipeline)
    scripted_openai.enqueue(CHAT, Delay(20, chat_stream(["late"])))
    response = browser.post(reverse("conversation-ask", args=[conversation.pk]),
                            {"question": "What is a hybrid retriever?"}, content_type="application/json")
    assert response.status_code == 409 and response.json()["code"] == "run_limit"
    assert "stopped after 0.3 seconds" in response.json()["detail"]
    answer = Message.objects.get(conversation=conversation, role=Message.Role.ASSISTANT)
    assert answer.status == Message.Status.FAILED and "stopped after 0.3 seconds" in answer.error
    assert answer.trace.trace["stopped_by"]["limit"] == "deadline"
    assert any(step["step"] == "retrieve" for step in answer.trace.trace["steps"]), "the steps run so far are kept"


def test_a_rest_ask_stopped_from_a_socket_answers_409_saying_so(owner, browser, knowledge_base, scripted_openai,
                                                                 monkeypatch):
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai)
    conversation = services.conversation_create(owner=owner, pipeline=pipeline)

    def cancelled(**kwargs):  # what the service returns when a cancel reaches the run
        return {"type": "run.cancelled", "message_id": 7, "answer": "Half an ans", "trace": {}}

    monkeypatch.setattr(services, "chat_ask", cancelled)
    response = browser.post(reverse("conversation-ask", args=[conversation.pk]), {"question": "q?"},
                            content_type="application/json", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "cancelled" and body["answer"] == "Half an ans" and body["message_id"] == 7
    assert body["detail"] == "la respuesta se detuvo antes de terminar"
