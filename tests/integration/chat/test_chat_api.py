import pytest
from django.test import Client
from django.urls import reverse

from tests.support.scripted_openai import chat_stream

from .conftest import naive_pipeline

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CHAT = "/v1/chat/completions"


def test_ask_without_a_websocket_returns_the_answer_completed_payload(owner, browser, knowledge_base, scripted_openai):
    pipeline = naive_pipeline(owner, knowledge_base, scripted_openai)
    conversation = browser.post(reverse("conversation-list"), {"pipeline": pipeline.pk},
                                content_type="application/json").json()
    scripted_openai.enqueue(CHAT, chat_stream(["Fused [1]."]))
    response = browser.post(reverse("conversation-ask", args=[conversation["id"]]),
                            {"question": "What is a hybrid retriever?"}, content_type="application/json")
    assert response.status_code == 200
    body = response.json()
    assert body["answer"] == "Fused [1]." and body["citations"][0]["n"] == 1
    assert body["trace"]["strategy"] == "NaiveRAG"
    listed = browser.get(reverse("conversation-list")).json()
    assert listed[0]["title"] == "What is a hybrid retriever?" and listed[0]["pipeline_name"] == "Keyword"


def test_conversations_are_private_renamable_and_deletable(owner, browser, django_user_model):
    conversation = browser.post(reverse("conversation-list"), {"title": "Mine"}, content_type="application/json").json()
    stranger = Client()
    stranger.force_login(django_user_model.objects.create_user(username="mallory", password="x"))
    for name in ("conversation-detail", "conversation-messages"):
        assert stranger.get(reverse(name, args=[conversation["id"]])).status_code == 404
    assert stranger.post(reverse("conversation-ask", args=[conversation["id"]]), {"question": "q"},
                         content_type="application/json").status_code == 404
    renamed = browser.patch(reverse("conversation-detail", args=[conversation["id"]]), {"title": "Renamed"},
                            content_type="application/json")
    assert renamed.json()["title"] == "Renamed"
    assert browser.delete(reverse("conversation-detail", args=[conversation["id"]])).status_code == 204
    assert browser.get(reverse("conversation-list")).json() == []


def test_asking_without_a_pipeline_is_refused_with_the_reason(browser):
    conversation = browser.post(reverse("conversation-list"), {}, content_type="application/json").json()
    response = browser.post(reverse("conversation-ask", args=[conversation["id"]]), {"question": "q"},
                            content_type="application/json")
    assert response.status_code == 409 and "choose a pipeline" in response.json()["detail"]
