"""The scripted test server speaks what the real openai client expects (chat shapes included,
for the LLM components that will use it)."""

import json

import openai
import pytest
from openai import OpenAI

from tests.support.fixtures import scripted_openai  # noqa: F401  (a fixture)
from tests.support.scripted_openai import Delay, ScriptedError, ScriptedStream, embedding_for

pytestmark = pytest.mark.unit


def client_for(server, **options):
    return OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, **options)


def chunk(delta, finish_reason=None):
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def test_a_scripted_chat_completion_with_a_tool_call_is_returned_as_is(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "verdict", "arguments": '{"sufficient": true}'}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    })
    response = client_for(scripted_openai).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "judge"}],
        tools=[{"type": "function", "function": {"name": "verdict", "parameters": {"type": "object"}}}])
    call = response.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("verdict", {"sufficient": True})
    path, body, headers = scripted_openai.requests[0]
    assert path == "/v1/chat/completions"
    assert body["messages"] == [{"role": "user", "content": "judge"}] and body["tools"][0]["function"]["name"]
    assert headers["authorization"] == "Bearer test-key"


def test_a_scripted_stream_arrives_chunk_by_chunk_with_tool_call_fragments(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", ScriptedStream([
        chunk({"role": "assistant", "content": "Hel"}),
        chunk({"content": "lo"}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "verdict", "arguments": '{"suff'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'icient": false}'}}]}),
        chunk({}, finish_reason="tool_calls"),
    ], interval=0.01))
    stream = client_for(scripted_openai).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    text, arguments, reasons = "", "", []
    for event in stream:
        delta = event.choices[0].delta
        text += delta.content or ""
        arguments += "".join(call.function.arguments or "" for call in delta.tool_calls or [])
        reasons.append(event.choices[0].finish_reason)
    assert text == "Hello"
    assert json.loads(arguments) == {"sufficient": False}
    assert reasons[-1] == "tool_calls"
    assert scripted_openai.requests[0].body["stream"] is True


def test_scripted_errors_become_the_clients_status_errors(scripted_openai):
    scripted_openai.enqueue("/v1/chat/completions", ScriptedError(400, {"error": {"message": "bad tools"}}))
    with pytest.raises(openai.BadRequestError, match="bad tools"):
        client_for(scripted_openai).chat.completions.create(model="m", messages=[])


def test_an_unscripted_path_answers_500_saying_so(scripted_openai):
    with pytest.raises(openai.InternalServerError, match="nothing scripted for POST /v1/chat/completions"):
        client_for(scripted_openai).chat.completions.create(model="m", messages=[])


def test_responses_to_one_path_are_served_in_order_and_counted(scripted_openai):
    for name in ("first", "second"):
        scripted_openai.enqueue("/v1/models", {"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "me"}]})
    assert scripted_openai.pending() == 2
    client = client_for(scripted_openai)
    assert [model.id for model in client.models.list()] == ["first"]
    assert [model.id for model in client.models.list()] == ["second"]
    assert [model.id for model in client.models.list()] == ["scripted-model"]
    assert scripted_openai.pending("/v1/models") == 0


def test_default_embeddings_answer_base64_and_float_alike(scripted_openai):
    client = client_for(scripted_openai)
    as_base64 = client.embeddings.create(model="m", input=["a", "b"], dimensions=3)
    as_float = client.embeddings.create(model="m", input="a", encoding_format="float")
    assert scripted_openai.requests[0].body["encoding_format"] == "base64"
    assert [len(item.embedding) for item in as_base64.data] == [3, 3]
    assert as_base64.data[1].embedding == pytest.approx(embedding_for("b", 3), abs=1e-6)
    assert as_float.data[0].embedding == pytest.approx(embedding_for("a"), abs=1e-6)


def test_a_delayed_answer_arrives_late_or_times_the_client_out(scripted_openai):
    scripted_openai.enqueue("/v1/models", Delay(0.05, {"object": "list", "data": []}))
    assert list(client_for(scripted_openai).models.list()) == []
    scripted_openai.enqueue("/v1/models", Delay(5, {"object": "list", "data": []}))
    with pytest.raises(openai.APITimeoutError):
        client_for(scripted_openai, timeout=0.2).models.list()
