"""ws/chat/<id>/: the DESIGN §8 protocol against real consumers, a real database and a
scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.urls import reverse

from chat.models import Message
from tests.support.scripted_openai import chat_response, chat_stream, tool_call_response

from .conftest import agentic_pipeline, list_socket, naive_pipeline, receive_until_final, socket

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
    assert kinds(events) == ["run.started", "retrieval.node", "generation.started", "generation.delta",
                             "generation.delta", "answer.completed"]
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


async def test_a_run_stopped_while_the_model_reads_keeps_the_retrieval_and_the_time_and_calls_so_far(
    owner, browser, knowledge_base, conversation, scripted_openai, monkeypatch
):
    from chat import services
    from tests.support.scripted_openai import Delay

    # The model takes longer to answer than a stopped run is waited for: the chat stores the
    # trace while the generate step is still waiting on it.
    monkeypatch.setattr(services, "CANCEL_GRACE_S", 0.5)
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, Delay(20, chat_stream(["Too late."])))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "hybrid", "pipeline_id": pipeline.pk})
    while (await communicator.receive_json_from(timeout=30))["type"] != "generation.started":
        pass  # retrieval has reported; the model has the prompt
    await asyncio.sleep(0.2)
    await communicator.send_json_to({"type": "cancel"})
    events = await receive_until_final(communicator)
    stopped = events[-1]
    assert stopped["type"] == "run.cancelled" and stopped["answer"] == ""
    trace = stopped["trace"]
    assert trace["cancelled"] is True
    assert [step["step"] for step in trace["steps"]] == ["retrieve", "generate"]
    assert trace["steps"][0]["node"]["class"] == "BM25Retriever" and trace["steps"][0]["node"]["results"]
    assert trace["steps"][1]["interrupted"] is True and trace["steps"][1]["elapsed_ms"] >= 200
    assert trace["llm_calls"] == 1, "the answer's call was made"
    assert trace["elapsed_ms"] >= trace["steps"][1]["elapsed_ms"]
    messages = (await sync_to_async(browser.get)(reverse("conversation-messages", args=[conversation.pk]))).json()
    assert messages[1]["status"] == "cancelled" and messages[1]["trace"] == trace
    assert messages[1]["chunks"] and messages[1]["chunks"][0]["n"] == 1
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


async def test_a_client_that_leaves_stops_nothing_and_on_reconnecting_gets_the_events_so_far_then_the_rest(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    words = [f"{word} " for word in ("A hybrid retriever fuses BM25 keyword search and dense semantic search "
                                      "with reciprocal rank fusion. " * 4).split()] + ["[1]"]
    scripted_openai.enqueue(CHAT, chat_stream(words, interval=0.03))
    first = socket(browser, conversation.pk)
    await first.connect()
    await first.send_json_to({"type": "ask", "question": "hybrid", "pipeline_id": pipeline.pk})
    before = []
    while len([event for event in before if event["type"] == "generation.delta"]) < 3:
        before.append(await first.receive_json_from(timeout=30))
    await first.disconnect()
    await asyncio.sleep(0.5)  # the run goes on with nobody watching

    again = socket(browser, conversation.pk)
    assert (await again.connect())[0]
    events = await receive_until_final(again)
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1)), "replayed in order, none twice"
    assert events[:len(before)] == before, "the replay starts with exactly what the first socket got"
    assert kinds(events)[0] == "run.started" and events[0]["question"] == "hybrid"
    completed = events[-1]
    assert completed["type"] == "answer.completed" and completed["answer"] == "".join(words)
    assert "".join(event["text"] for event in events if event["type"] == "generation.delta") == "".join(words)
    message = await sync_to_async(Message.objects.get)(pk=completed["message_id"])
    assert (message.status, message.text) == (Message.Status.DONE, "".join(words))
    await again.disconnect()


async def test_every_open_tab_receives_the_same_run_and_any_tab_may_stop_it_keeping_the_trace_so_far(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream([f"word{i} " for i in range(300)], interval=0.02))
    asking, watching = socket(browser, conversation.pk), socket(browser, conversation.pk)
    await asking.connect()
    await watching.connect()
    await asking.send_json_to({"type": "ask", "question": "hybrid", "pipeline_id": pipeline.pk})
    seen = []
    while len([event for event in seen if event["type"] == "generation.delta"]) < 3:
        seen.append(await watching.receive_json_from(timeout=30))
    assert seen[0]["type"] == "run.started" and seen[1]["node"]["class"] == "BM25Retriever"

    # The other tab asks meanwhile: refused to it alone, the run goes on.
    await watching.send_json_to({"type": "ask", "question": "something else", "pipeline_id": pipeline.pk})
    await watching.send_json_to({"type": "cancel"})
    watched = seen + await receive_until_final(watching)
    watched += await receive_until_final(watching)  # the refusal came first; then the run's end
    refusals = [event for event in watched if event["type"] == "run.failed"]
    assert [(event["code"], event["message_id"]) for event in refusals] == [("busy", None)]
    asked = await receive_until_final(asking)
    assert [event for event in watched if event["type"] != "run.failed"] == asked, "both tabs saw the same run"

    stopped = asked[-1]
    assert stopped["type"] == "run.cancelled" and stopped["answer"].startswith("word0 ")
    assert [step["step"] for step in stopped["trace"]["steps"]] == ["retrieve", "generate"]
    assert stopped["trace"]["steps"][0]["node"]["class"] == "BM25Retriever"
    messages = (await sync_to_async(browser.get)(reverse("conversation-messages", args=[conversation.pk]))).json()
    assert [message["status"] for message in messages] == ["done", "cancelled"], "the refused question left no trace"
    assert messages[1]["trace"] == stopped["trace"] and messages[1]["text"] == stopped["answer"]
    assert messages[1]["chunks"] and messages[1]["chunks"][0]["n"] == 1, "the chunks the model was given are kept"
    assert len(stopped["answer"].split()) < 300
    await asking.disconnect()
    await watching.disconnect()


async def test_a_question_too_long_for_the_model_is_refused_at_once_in_the_askers_language(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    # An input budget of 1500 tokens: the socket's own 10,000-character limit comes before the
    # default 3000 for a question in Latin script.
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai, max_input_tokens=1500)
    communicator = socket(browser, conversation.pk, language="es")
    await communicator.connect()
    question = "¿Qué hace el recuperador híbrido con estas palabras? " + "palabra " * 1100
    assert len(question) < 10_000, "within the socket's plain length limit: this is about the model"
    await communicator.send_json_to({"type": "ask", "question": question, "pipeline_id": pipeline.pk})
    refused = await communicator.receive_json_from(timeout=10)
    assert (refused["type"], refused["code"], refused["message_id"]) == ("run.failed", "too_long", None)
    assert refused["error"].startswith("la pregunta es demasiado larga para el modelo de este pipeline")
    assert "1500" in refused["error"], refused["error"]
    assert scripted_openai.requests_to(CHAT) == [], "the model was never asked"
    assert await sync_to_async(Message.objects.count)() == 0
    await communicator.disconnect()


async def test_the_local_models_context_window_bounds_the_question_before_it_is_loaded(
    owner, browser, knowledge_base, conversation
):
    from pipelines.services import pipeline_create

    local = {"component": "LocalLLM", "params": {"model": "smollm2-135m-instruct", "context_tokens": 1024,
                                                 "max_tokens": 384}}
    pipeline = await sync_to_async(pipeline_create)(owner=owner, name="Small window", knowledge_base=knowledge_base,
                                                    strategy={"component": "NaiveRAG", "params": {
                                                        "retriever": {"component": "BM25Retriever", "params": {}},
                                                        "response_synthesizer": {"component": "ResponseSynthesizer",
                                                                                 "params": {"llm": local}}}})
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "retrieval " * 300, "pipeline_id": pipeline.pk})
    refused = await communicator.receive_json_from(timeout=30)
    assert (refused["type"], refused.get("code")) == ("run.failed", "too_long"), refused
    assert "at most 640" in refused["error"], "1024 tokens of context less 384 for the answer"
    await communicator.disconnect()


async def test_a_history_too_long_to_send_whole_is_trimmed_and_the_trace_says_so(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai, history_turns=3)
    long_answer = "fusion " * 2000
    scripted_openai.enqueue(CHAT, chat_stream([long_answer]))
    scripted_openai.enqueue(CHAT, chat_stream(["k = 60 [1]."]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    for question in ("What is a hybrid retriever?", "Which fusion does the hybrid retriever use?"):
        await communicator.send_json_to({"type": "ask", "question": question, "pipeline_id": pipeline.pk})
        final = (await receive_until_final(communicator))[-1]
    assert final["type"] == "answer.completed"
    second = scripted_openai.requests_to(CHAT)[1].body["messages"]
    assert "fusion fusion fusion" not in " ".join(message["content"] for message in second), \
        "the turn that did not fit was left out"
    assert final["trace"]["history"]["turns_dropped"] == 1 and final["trace"]["history"]["turns_sent"] == 0
    await communicator.disconnect()


async def test_titles_reach_every_open_conversation_list_live(owner, browser, knowledge_base, conversation,
                                                              scripted_openai):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["Fused [1]."]))
    tabs = [list_socket(browser), list_socket(browser)]
    for tab in tabs:
        assert (await tab.connect())[0]
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "What is a hybrid retriever?",
                                     "pipeline_id": pipeline.pk})
    await receive_until_final(communicator)
    for tab in tabs:
        event = await tab.receive_json_from(timeout=10)
        assert event["type"] == "conversation.updated"
        assert (event["conversation"]["id"], event["conversation"]["title"]) == (conversation.pk,
                                                                                 "What is a hybrid retriever?")
        assert event["conversation"]["pipeline_name"] == "Keyword"
    await sync_to_async(browser.patch)(reverse("conversation-detail", args=[conversation.pk]), {"title": "Fusion"},
                                       content_type="application/json")
    listed = (await sync_to_async(browser.get)(reverse("conversation-list"))).json()
    for tab in tabs:
        event = await tab.receive_json_from(timeout=10)
        assert event == {"type": "conversation.updated", "conversation": listed[0]}, "as the REST list shows it"
        await tab.disconnect()
    await communicator.disconnect()


async def test_the_conversation_list_socket_is_closed_for_visitors(conversation):
    visitor = list_socket(None)
    assert (await visitor.connect())[0]
    assert (await visitor.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4403}


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


async def test_a_follow_up_is_searched_as_a_question_that_stands_alone_and_the_trace_shows_it(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["The agentic ensemble lets an LLM choose retrievers [1]."]))
    scripted_openai.enqueue(CHAT, chat_response("The agentic ensemble"))  # what "it" stands for
    scripted_openai.enqueue(CHAT, chat_stream(["It chooses them round by round [1]."]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    for question in ("What does the agentic ensemble do?", "How often does it choose?"):
        await communicator.send_json_to({"type": "ask", "question": question, "pipeline_id": pipeline.pk})
        events = await receive_until_final(communicator)
    completed = events[-1]
    assert completed["type"] == "answer.completed"
    searched = next(step for step in completed["trace"]["steps"] if step["step"] == "search_question")
    assert (searched["question"], searched["search_question"]) == (
        "How often does it choose?", "How often does The agentic ensemble choose?")
    node = next(event["node"] for event in events if event["type"] == "retrieval.node")
    assert node["query"] == "How often does The agentic ensemble choose?"
    # The model reads the question that stands alone: no earlier turn is needed to answer it.
    answering = scripted_openai.requests_to(CHAT)[2].body["messages"]
    assert answering[-1]["content"].endswith("How often does The agentic ensemble choose?")
    assert "What does the agentic ensemble do?" not in [message["content"] for message in answering]
    assert any(event["type"] == "generation.started" and event["passages"] >= 1 for event in events)
    await communicator.disconnect()


async def test_an_answer_the_documents_do_not_hold_is_declined_and_stored_so(
    owner, browser, knowledge_base, conversation, scripted_openai
):
    pipeline = await sync_to_async(naive_pipeline)(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["The Orrin Lighthouse was first lit in 1890 [1]."]))
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    await communicator.send_json_to({"type": "ask", "question": "When was the Orrin Lighthouse first lit in retrieval?",
                                     "pipeline_id": pipeline.pk})
    completed = (await receive_until_final(communicator))[-1]
    assert completed["answer"].startswith("Not found in your documents") and completed["citations"] == []
    assert completed["declined"]["by"] == "support" and completed["declined"]["closest"]
    await communicator.disconnect()
    messages = (await sync_to_async(browser.get)(reverse("conversation-messages", args=[conversation.pk]))).json()
    assert messages[1]["text"] == completed["answer"] and messages[1]["declined"] == completed["declined"]


async def test_a_socket_follows_a_run_another_process_answers_and_fills_a_batch_the_layer_dropped_from_the_store(
    owner, browser, conversation
):
    from channels.layers import get_channel_layer

    from chat.models import Run, RunEvent
    from chat.services import conversation_group

    def stored_run():
        question = Message.objects.create(conversation=conversation, role="user", text="far away?")
        answer = Message.objects.create(conversation=conversation, role="assistant", status="streaming")
        return Run.objects.create(conversation=conversation, message=answer), question

    run, question = await sync_to_async(stored_run)()
    events = [{"type": "run.started", "message_id": run.message_id, "question_message_id": question.pk,
               "pipeline_id": None, "question": "far away?", "seq": 1}]
    events += [{"type": "generation.delta", "text": f"t{n} ", "seq": n} for n in range(2, 7)]

    async def store(batch):
        await sync_to_async(RunEvent.objects.create)(run=run, seq=batch[0]["seq"], events=batch)

    await store(events[:2])
    communicator = socket(browser, conversation.pk)
    await communicator.connect()
    assert [await communicator.receive_json_from(timeout=5) for _ in range(2)] == events[:2], "replayed"
    await store(events[2:4])  # stored, but its group message never arrived
    await store(events[4:])
    await get_channel_layer().group_send(conversation_group(conversation.pk), {
        "type": "chat.events", "message_id": run.message_id, "events": events[4:]})
    assert [await communicator.receive_json_from(timeout=5) for _ in range(4)] == events[2:]
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()
