"""ws/chat/<id>/: the DESIGN §8 protocol against real consumers, a real database and a
scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.urls import reverse

from chat.models import Message
from tests.support.scripted_openai import chat_stream, tool_call_response

from .conftest import agentic_pipeline, naive_pipeline, receive_until_final, socket

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

CHAT = "/v1/chat/completions"


def kinds(events):
    return [event["type"] for event in events]


async def test_a_naive_answer_streams_in_order_and_reloads_with_the_identical_trace(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["A hybrid retriever ", "fuses BM25 and dense [1]."]))
    communicator = socket(browser, conversation.pk)
    assert (await communicator.connect())[0]
    await communicator.send_json_to({"type": "ask", "question": "What is a hybrid retriever?",
                                     "pipeline_id": pipeline.pk})
    events = await receive_until_final(communicator)
    assert kinds(events) == ["run.started", "retrieval.node", "generation.delta", "generation.delta",
                             "answer.completed"]
    completed = events[-1]
    assert completed["answer"] == "A hybrid retriever fuses BM25 and dense [1]."
    assert completed["citations"][0]["n"] == 1 and completed["message_id"] == events[0]["message_id"]
    assert events[1]["node"]["class"] == "BM25Retriever"
    await communicator.disconnect()

    messages = (await sync_to_async(browser.get)(reverse("conversation-messages", args=[conversation.pk]))).json()
    assert [(message["role"], message["status"]) for message in messages] == [("user", "done"), ("assistant", "done")]
    assert messages[1]["trace"] == completed["trace"]
    assert messages[1]["chunks"][0]["n"] == 1 and messages[1]["timings"]["first_token_ms"] > 0


async def test_an_agentic_tree_sends_its_rounds_as_they_happen(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(agentic_pipeline)(owner, knowledge_base, scripted_openai)
    verdict = "retrieval_verdict"
    scripted_openai.enqueue(CHAT, tool_call_response(verdict, {"sufficient": False, "reason": "start",
                                                               "operations": [{"child": 0, "top_k": 1}]}))
    scripted_openai.enqueue(CHAT, tool_call_response(verdict, {"sufficient": False, "reason": "more",
                                                               "operations": [{"child": 1, "top_k": 3}]}))
    scripted_openai.enqueue(CHAT, chat_stream(["Done [1]."]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "agentic ensemble LLM", "pipeline_id": pipeline.pk})
    events = await receive_until_final(communicator)
    order = kinds(events)
    assert order[0] == "run.started" and order[-1] == "answer.completed"
    rounds = [event for event in events if event["type"] == "retrieval.round"]
    assert [event["round"]["round"] for event in rounds] == [1, 2]
    assert rounds[0]["round"]["verdict"] == {"sufficient": False, "reason": "more"}
    # every round is announced before the answer starts
    assert order.index("retrieval.round") < order.index("generation.delta")
    nodes = [event["node"]["class"] for event in events if event["type"] == "retrieval.node"]
    assert nodes == ["BM25Retriever", "BM25Retriever", "AgenticEnsembleRetriever"]
    stored = await sync_to_async(lambda: Message.objects.get(pk=events[0]["message_id"]).trace.rounds)()
    assert [summary["round"] for summary in stored] == [1, 2]
    await communicator.disconnect()


async def test_cancel_stops_generation_and_keeps_what_was_written(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream([f"word{i} " for i in range(300)], interval=0.02))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "hybrid", "pipeline_id": pipeline.pk})
    while (await communicator.receive_json_from(timeout=30))["type"] != "generation.delta":
        pass
    await communicator.send_json_to({"type": "cancel"})
    events = await receive_until_final(communicator)
    assert events[-1]["type"] == "run.cancelled"
    message = await sync_to_async(Message.objects.get)(pk=events[-1]["message_id"])
    assert message.status == Message.Status.CANCELLED
    assert message.text.startswith("word0 ") and len(message.text.split()) < 300
    await communicator.disconnect()


async def test_an_llm_error_mid_stream_fails_the_run_and_the_message(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    from tests.support.scripted_openai import ScriptedStream

    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    broken = chat_stream(["Half an ", "answer"])
    scripted_openai.enqueue(CHAT, ScriptedStream([*broken.chunks[:-1], {"error": {"message": "model overloaded"}}]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "hybrid", "pipeline_id": pipeline.pk})
    events = await receive_until_final(communicator)
    assert kinds(events)[-1] == "run.failed"
    assert "model overloaded" in events[-1]["error"]
    message = await sync_to_async(Message.objects.get)(pk=events[-1]["message_id"])
    assert (message.status, message.text) == (Message.Status.FAILED, "Half an answer")
    await communicator.disconnect()


async def test_a_client_that_leaves_cancels_its_run(owner, browser, knowledge_base, conversation, scripted_openai):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream([f"w{i} " for i in range(500)], interval=0.02))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "hybrid", "pipeline_id": pipeline.pk})
    while (await communicator.receive_json_from(timeout=30))["type"] != "generation.delta":
        pass
    await communicator.disconnect()
    for _ in range(100):
        status = await sync_to_async(lambda: Message.objects.filter(role="assistant").get().status)()
        if status != Message.Status.STREAMING:
            break
        await asyncio.sleep(0.05)
    assert status == Message.Status.CANCELLED


async def test_another_users_socket_is_closed_with_4403(conversation, django_user_model, scripted_openai):
    from django.test import Client

    stranger = await sync_to_async(django_user_model.objects.create_user)(username="mallory", password="x")
    client = Client()
    await sync_to_async(client.force_login)(stranger)
    for intruder in (socket(client, conversation.pk), socket(None, conversation.pk)):
        connected, _ = await intruder.connect()
        assert connected
        assert (await intruder.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4403}


async def test_a_pipeline_that_cannot_answer_yet_is_refused_with_the_reason(
    owner, browser, conversation, scripted_openai
):
    from knowledge.services import knowledge_base_create

    empty = await sync_to_async(knowledge_base_create)(owner=owner, name="Empty")
    pipeline = await sync_to_async(naive_pipeline)(owner, empty, scripted_openai, name="Waiting")
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "anything", "pipeline_id": pipeline.pk})
    event = await communicator.receive_json_from(timeout=10)
    assert event["type"] == "run.failed" and "has no ready document yet" in event["error"]
    await communicator.disconnect()


async def test_follow_up_questions_carry_the_previous_turn(owner, browser, knowledge_base, conversation,
                                                           scripted_openai):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["It fuses two searches [1]."]))
    scripted_openai.enqueue(CHAT, chat_stream(["k = 60 [1]."]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    for question in ("What is a hybrid retriever?", "And which fusion does it use?"):
        await communicator.send_json_to({"type": "ask", "question": question, "pipeline_id": pipeline.pk})
        await receive_until_final(communicator)
    second = scripted_openai.requests_to(CHAT)[1].body["messages"]
    assert [message["role"] for message in second] == ["system", "user", "assistant", "user"]
    assert second[1]["content"] == "What is a hybrid retriever?"
    assert second[2]["content"] == "It fuses two searches [1]."
    await communicator.disconnect()
