"""The OpenAI-compatible API driven by the real ``openai`` client against the served
application: pipelines as models, answers (whole and streamed) from the chat's own run, stored
as conversations with their traces, and every refusal in OpenAI's error shape."""

from __future__ import annotations

import httpx
import openai
import pytest
from django.urls import reverse

from accounts.models import ApiToken
from accounts.services import api_token_create, api_token_revoke
from chat.models import Conversation, Message
from tests.support.scripted_openai import chat_response, chat_stream

from .conftest import naive_pipeline

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CHAT = "/v1/chat/completions"


def client(server_url: str, token: str) -> openai.OpenAI:
    # No retries: a refusal is what these tests look at, not something to try again.
    return openai.OpenAI(base_url=f"{server_url}/v1", api_key=token, max_retries=0, timeout=60)


def test_the_openai_client_lists_pipelines_as_models_and_gets_an_answer_with_citations_and_its_trace(
    owner, knowledge_base, scripted_openai, server_url, token, api
):
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai, name="Keyword search")
    scripted_openai.enqueue(CHAT, chat_stream(["A hybrid retriever fuses ", "BM25 and dense search [1]."]))
    chat_client = client(server_url, token)
    assert [model.id for model in chat_client.models.list()] == ["keyword-search"]
    assert chat_client.models.retrieve(str(pipeline.pk)).id == "keyword-search"

    completion = chat_client.chat.completions.create(model="keyword-search", messages=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is a hybrid retriever?"}])

    assert completion.choices[0].message.content == "A hybrid retriever fuses BM25 and dense search [1]."
    assert completion.choices[0].finish_reason == "stop"
    # The scripted server counts the words of the prompt it was sent and the pieces it wrote.
    prompt_words = sum(len(message["content"].split()) for message in scripted_openai.requests_to(CHAT)[0].body["messages"])
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.total_tokens) == (
        prompt_words, 2, prompt_words + 2)
    trellis = completion.model_extra["trellis"]
    assert trellis["citations"][0]["n"] == 1 and "hybrid retriever" in trellis["citations"][0]["preview"]
    conversation = Conversation.objects.get(owner=owner)
    assert trellis["trace_url"] == f"{server_url}/chat/{conversation.pk}"
    messages = api.get(reverse("conversation-messages", args=[conversation.pk])).json()
    assert [(message["role"], message["status"]) for message in messages] == [("user", "done"), ("assistant", "done")]
    assert messages[1]["trace"]["strategy"] == "NaiveRAG" and messages[1]["id"] == trellis["message_id"]
    assert conversation.title == "What is a hybrid retriever?" and conversation.pipeline_id == pipeline.pk
    assert conversation.origin == Conversation.Origin.API


def test_a_streamed_follow_up_is_searched_on_its_own_and_the_earlier_turns_are_its_history(
    owner, knowledge_base, scripted_openai, server_url, token
):
    naive_pipeline(owner, knowledge_base, scripted_openai)
    api = client(server_url, token)
    scripted_openai.enqueue(CHAT, chat_stream(["A hybrid retriever fuses ", "two rankings [1]."]))
    first = api.chat.completions.create(model="keyword", messages=[
        {"role": "user", "content": "What does a hybrid retriever fuse?"}])
    answer = first.choices[0].message.content

    scripted_openai.enqueue(CHAT, chat_response("A hybrid retriever"))  # what "it" stands for
    scripted_openai.enqueue(CHAT, chat_stream(["It fuses them with ", "reciprocal rank fusion [1]."]))
    stream = api.chat.completions.create(model="keyword", stream=True, messages=[
        {"role": "user", "content": "What does a hybrid retriever fuse?"}, {"role": "assistant", "content": answer},
        {"role": "user", "content": "Which fusion does it use?"}])
    chunks = list(stream)

    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert text == "It fuses them with reciprocal rank fusion [1]."
    assert chunks[0].choices[0].delta.role == "assistant"
    trellis = chunks[-1].model_extra["trellis"]
    assert chunks[-1].choices[0].finish_reason == "stop" and trellis["citations"]
    assert trellis["search_question"] == "Which fusion does A hybrid retriever use?"
    rewrite, answering = scripted_openai.requests_to(CHAT)[-2:]
    assert "Q: What does a hybrid retriever fuse?" in rewrite.body["messages"][-1]["content"]
    assert answering.body["messages"][-1]["content"].endswith("Question: Which fusion does A hybrid retriever use?")
    conversation = Conversation.objects.get(owner=owner)  # the follow-up went on in the same conversation
    assert list(conversation.messages.values_list("role", "status")) == [("user", "done"), ("assistant", "done")] * 2
    stored = conversation.messages.last().trace.trace
    searched = next(step for step in stored["steps"] if step["step"] == "search_question")
    assert searched["search_question"] == "Which fusion does A hybrid retriever use?"


def test_usage_sums_every_llm_call_of_the_answer_whole_and_streamed_when_the_client_asks(
    owner, knowledge_base, scripted_openai, server_url, token
):
    naive_pipeline(owner, knowledge_base, scripted_openai)
    api = client(server_url, token)
    first_turn = [{"role": "user", "content": "What does a hybrid retriever fuse?"},
                  {"role": "assistant", "content": "Two rankings [1]."}]
    # A follow-up: the search question is rewritten by one call, then the answer is a second.
    scripted_openai.enqueue(CHAT, chat_response("A hybrid retriever", usage={"prompt_tokens": 40, "completion_tokens": 4}))
    scripted_openai.enqueue(CHAT, chat_stream(["It uses reciprocal ", "rank fusion [1]."],
                                              usage={"prompt_tokens": 300, "completion_tokens": 7}))
    whole = api.chat.completions.create(model="keyword", messages=[
        *first_turn, {"role": "user", "content": "Which fusion does it use?"}])
    assert (whole.usage.prompt_tokens, whole.usage.completion_tokens, whole.usage.total_tokens) == (340, 11, 351)
    assert scripted_openai.requests_to(CHAT)[-1].body["stream_options"] == {"include_usage": True}

    scripted_openai.enqueue(CHAT, chat_response("A hybrid retriever", usage={"prompt_tokens": 41, "completion_tokens": 4}))
    scripted_openai.enqueue(CHAT, chat_stream(["It uses RRF [1]."], usage={"prompt_tokens": 280, "completion_tokens": 5}))
    chunks = list(api.chat.completions.create(model="keyword", stream=True, stream_options={"include_usage": True},
                                              messages=[*first_turn, {"role": "user", "content": "Which fusion again?"}]))
    last = chunks[-1]
    assert last.choices == [] and (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (
        321, 9, 330)
    assert all(chunk.usage is None for chunk in chunks[:-1])
    assert chunks[-2].choices[0].finish_reason == "stop" and "trellis" in chunks[-2].model_extra

    # Not asked: the stream ends with the finishing chunk, as OpenAI's does.
    scripted_openai.enqueue(CHAT, chat_stream(["Fusion [1]."]))
    plain = list(api.chat.completions.create(model="keyword", stream=True, messages=[
        {"role": "user", "content": "What does the hybrid retriever fuse?"}]))
    assert plain[-1].choices[0].finish_reason == "stop" and plain[-1].usage is None


def test_usage_is_null_when_the_model_server_does_not_count_its_tokens(
    owner, knowledge_base, scripted_openai, server_url, token
):
    naive_pipeline(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["A hybrid retriever fuses two rankings [1]."], usage=None))
    completion = client(server_url, token).chat.completions.create(model="keyword", messages=[
        {"role": "user", "content": "What does a hybrid retriever fuse?"}])
    assert completion.choices[0].message.content and completion.usage is None
    stored = Message.objects.get(role="assistant").trace.trace
    assert stored["usage"]["responses_without_usage"] == 1, "the trace says why: a guess is not a count"


def test_an_answer_the_documents_do_not_hold_says_so_after_the_streamed_draft(
    owner, knowledge_base, scripted_openai, server_url, token
):
    naive_pipeline(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["The Orrin Lighthouse was first lit in 1890 [1]."]))
    chunks = list(client(server_url, token).chat.completions.create(model="keyword", stream=True, messages=[
        {"role": "user", "content": "When was the Orrin Lighthouse first lit by the retriever?"}]))
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    stored = Message.objects.get(role="assistant").text
    assert stored.startswith("Not found in your documents") and text.endswith("\n\n" + stored)
    assert chunks[-1].model_extra["trellis"]["declined"]["by"] == "support"


def test_history_the_client_brings_starts_a_conversation_that_holds_it(owner, knowledge_base, scripted_openai,
                                                                       server_url, token):
    naive_pipeline(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, chat_stream(["Round by round [3]."]))
    client(server_url, token).chat.completions.create(model="keyword", messages=[
        {"role": "user", "content": "Hello"}, {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]},
        {"role": "user", "content": [{"type": "text", "text": "How does the agentic ensemble work?"}]}])
    conversation = Conversation.objects.get(owner=owner)
    assert list(conversation.messages.values_list("role", "text")) == [
        ("user", "Hello"), ("assistant", "Hi!"), ("user", "How does the agentic ensemble work?"),
        ("assistant", "Round by round [3].")]
    assert conversation.title == "Hello"


def test_a_token_reaches_its_owners_pipelines_only_and_a_revoked_or_missing_one_none(
    owner, stranger, knowledge_base, scripted_openai, server_url, token, stranger_token
):
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai)
    question = [{"role": "user", "content": "What is fusion?"}]
    theirs = client(server_url, stranger_token)
    assert list(theirs.models.list()) == []
    for model in ("keyword", str(pipeline.pk)):
        with pytest.raises(openai.NotFoundError) as refused:
            theirs.chat.completions.create(model=model, messages=question)
        assert refused.value.body["code"] == "model_not_found" and refused.value.body["type"] == "invalid_request_error"

    # The openai client will not send a request without a key: a plain one does.
    missing = httpx.post(f"{server_url}{CHAT}", json={"model": "keyword", "messages": question})
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert missing.json()["error"]["code"] == "missing_api_key" and "Bearer" in missing.json()["error"]["message"]
    api_token_revoke(token=ApiToken.objects.get(owner=owner))
    with pytest.raises(openai.AuthenticationError) as revoked:
        client(server_url, token).models.list()
    assert revoked.value.body["code"] == "invalid_api_key"
    assert not Message.objects.exists() and not scripted_openai.requests_to(CHAT)


def test_refusals_are_in_openais_error_shape_with_their_status(owner, stranger, knowledge_base, scripted_openai,
                                                               server_url, token, settings):
    naive_pipeline(owner, knowledge_base, scripted_openai)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server_url, headers=headers, timeout=30) as http:
        cases = [
            (http.post(CHAT, content=b"{not json", headers={"Content-Type": "application/json"}), 400, "invalid_json"),
            (http.post(CHAT, json={"model": "keyword", "messages": []}), 400, "invalid_value"),
            (http.post(CHAT, json={"model": "keyword", "messages": [{"role": "assistant", "content": "x"}]}), 400,
             "invalid_value"),
            (http.post(CHAT, json={"model": "nope", "messages": [{"role": "user", "content": "q"}]}), 404,
             "model_not_found"),
            (http.post(CHAT, json={"model": "keyword", "messages": [{"role": "user", "content": "q " * 6000}]}), 400,
             "invalid_value"),
            (http.get("/v1/embeddings"), 404, "unknown_url"),
            (http.get(CHAT), 405, "method_not_allowed"),
        ]
        for response, status, code in cases:
            assert response.status_code == status, response.text
            error = response.json()["error"]
            assert error["code"] == code and error["message"] and error["type"], error
        assert cases[1][0].json()["error"]["param"] == "messages"
        spanish = http.post(CHAT, json={"model": "nope", "messages": [{"role": "user", "content": "q"}]},
                            headers={"Accept-Language": "es"}).json()["error"]["message"]
        assert "no tienes ningún pipeline" in spanish

        settings.TRELLIS_API_RATE_LIMIT = 2  # per user: the owner spent theirs above, another user starts afresh
        other = api_token_create(owner=stranger, name="other").secret
        statuses = [http.get("/v1/models", headers={"Authorization": f"Bearer {other}"}) for _ in range(3)]
        assert [response.status_code for response in statuses] == [200, 200, 429]
        assert statuses[2].json()["error"]["code"] == "rate_limit_exceeded"
        assert 1 <= int(statuses[2].headers["Retry-After"]) <= 61
    assert not Message.objects.exists(), "no refused question is recorded"
    assert not Conversation.objects.exists()


def test_a_failed_answer_is_a_server_error_and_stays_on_the_chat_page(owner, knowledge_base, scripted_openai,
                                                                      server_url, token):
    from tests.support.scripted_openai import ScriptedError

    naive_pipeline(owner, knowledge_base, scripted_openai)
    scripted_openai.enqueue(CHAT, ScriptedError(400, {"error": {"message": "model exploded", "type": "x"}}))
    with pytest.raises(openai.InternalServerError) as failed:
        client(server_url, token).chat.completions.create(model="keyword", messages=[
            {"role": "user", "content": "What is fusion?"}])
    assert failed.value.body["type"] == "server_error"
    assert Message.objects.get(role="assistant").status == Message.Status.FAILED


@pytest.mark.slow
def test_the_packaged_local_model_answers_through_the_api(owner, knowledge_base, server_url, token):
    from pipelines.services import pipeline_create

    local = {"component": "LocalLLM", "params": {"model": "smollm2-135m-instruct", "max_tokens": 24}}
    pipeline_create(owner=owner, name="Local", knowledge_base=knowledge_base, strategy={
        "component": "NaiveRAG", "params": {
            "retriever": {"component": "BM25Retriever", "params": {"top_k": 1}},
            "response_synthesizer": {"component": "ResponseSynthesizer",
                                     "params": {"llm": local, "max_answer_tokens": 24}}}})
    stream = client(server_url, token).chat.completions.create(model="local", stream=True, messages=[
        {"role": "user", "content": "What does a hybrid retriever fuse?"}])
    chunks = list(stream)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert text.strip() and chunks[-1].choices[0].finish_reason == "stop"
    # The stored message is the answer, or, when the documents do not hold it, the reply that
    # followed the streamed draft.
    assert text.endswith(Message.objects.get(role="assistant").text)


def test_the_chat_list_marks_where_each_conversation_began_and_filters_by_it(
    owner, stranger, knowledge_base, scripted_openai, server_url, token, api, stranger_api
):
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai, name="Keyword search")
    scripted_openai.enqueue(CHAT, chat_stream(["Fused [1]."]))
    client(server_url, token).chat.completions.create(
        model="keyword-search", messages=[{"role": "user", "content": "Asked by a script"}])
    typed = api.post(reverse("conversation-list"), {"pipeline": pipeline.pk, "title": "Typed in the browser"},
                     content_type="application/json").json()
    assert typed["origin"] == "web"

    def listed(query: str = "", user=api) -> list[tuple[str, str]]:
        response = user.get(reverse("conversation-list") + query)
        assert response.status_code == 200, response.content
        return [(conversation["title"], conversation["origin"]) for conversation in response.json()]

    assert listed() == [("Typed in the browser", "web"), ("Asked by a script", "api")]
    assert listed("?origin=web") == [("Typed in the browser", "web")]
    assert listed("?origin=api,mcp") == [("Asked by a script", "api")]
    assert listed("?origin=mcp") == []
    assert listed("?origin=api", user=stranger_api) == []  # another user's filter sees only theirs
    refused = api.get(reverse("conversation-list") + "?origin=email&lang=es")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"path": "origin", "code": "invalid_choice",
                                         "message": "origen desconocido 'email' (elija entre web, api, mcp)"}]
