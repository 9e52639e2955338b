"""ws/chat/<id>/: an agentic tree's plan and judgements reach the socket as they happen (issue 39)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from chat.models import Message
from tests.support.scripted_openai import chat_stream, tool_call_response

from .conftest import agentic_pipeline, receive_until_final, socket

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

CHAT = "/v1/chat/completions"


async def test_an_agentic_tree_sends_its_plan_before_any_child_and_says_when_it_judges(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(agentic_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", {
        "reason": "Dos partes.", "sufficient": False,
        "operations": [{"child": 0, "query": "conjunto agéntico"}, {"child": 1}]}))
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", {
        "reason": "Falta el LLM.", "sufficient": False, "operations": [{"child": 1, "query": "LLM"}]}))
    scripted_openai.enqueue(CHAT, chat_stream(["Listo [1]."]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "¿Qué es el conjunto agéntico y qué LLM usa?",
                                     "pipeline_id": pipeline.pk})
    events = await receive_until_final(communicator)
    order = [event["type"] for event in events if event["type"].startswith("retrieval.")]
    assert order == ["retrieval.plan", "retrieval.node", "retrieval.node", "retrieval.judging", "retrieval.round",
                     "retrieval.node", "retrieval.round", "retrieval.node"]
    plan = next(event for event in events if event["type"] == "retrieval.plan")
    assert plan["plan"]["reason"] == "Dos partes."
    assert [(op["child"], op["top_k"], op["query"], op["child_name"]) for op in plan["plan"]["operations"]] == [
        (0, 1, "conjunto agéntico", "Recuperador por palabras clave BM25"),
        (1, 3, None, "Recuperador por palabras clave BM25")]
    first_round = next(event for event in events if event["type"] == "retrieval.round")["round"]
    assert [(op["child"], op["query"]) for op in first_round["next_operations"]] == [(1, "LLM")]
    stored = await sync_to_async(lambda: Message.objects.get(pk=events[0]["message_id"]).trace.rounds)()
    assert stored[0]["plan"]["operations"] == plan["plan"]["operations"]
    await communicator.disconnect()
