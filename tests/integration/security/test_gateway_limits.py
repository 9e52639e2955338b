"""The OpenAI-compatible API within bounds (issue 38): one rate limit per user whatever the number
of tokens, a 5000-digit ``model`` a 400 (and a number no pipeline can have a 404) instead of a
500, and a 2,001-message history stored as its latest turns only."""

from __future__ import annotations

import json

import httpx
import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache
from django.test import AsyncClient

from accounts.services import api_token_create
from chat.models import Conversation, Message

from ..chat.conftest import knowledge_base, naive_pipeline  # noqa: F401
from ..gateway.conftest import server_url  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()  # the rate limit counts in the cache, across tests of one process
    yield
    cache.clear()


def gateway(token: str, path: str = "/v1/chat/completions", body: dict | None = None):
    client = AsyncClient()
    if body is None:
        return async_to_sync(client.get)(path, headers={"Authorization": f"Bearer {token}"})
    return async_to_sync(client.post)(path, json.dumps(body), content_type="application/json",
                                      headers={"Authorization": f"Bearer {token}"})


def test_the_gateways_rate_limit_is_per_user_not_per_token(owner, stranger, settings):
    settings.TRELLIS_API_RATE_LIMIT = 3
    first, second = (api_token_create(owner=owner, name=name).secret for name in ("a", "b"))
    assert [gateway(first, "/v1/models").status_code for _ in range(3)] == [200] * 3
    refused = gateway(second, "/v1/models")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert "your API tokens" in refused.json()["error"]["message"]
    assert gateway(api_token_create(owner=stranger, name="theirs").secret, "/v1/models").status_code == 200


def test_a_huge_model_name_or_number_is_a_4xx_not_a_500(owner):
    token = api_token_create(owner=owner, name="t").secret
    question = [{"role": "user", "content": "q?"}]
    long = gateway(token, body={"model": "9" * 5000, "messages": question})
    assert long.status_code == 400 and long.json()["error"]["param"] == "model"
    assert "200 characters" in long.json()["error"]["message"]
    for model in ("9" * 30, "²"):
        missing = gateway(token, body={"model": model, "messages": question})
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "model_not_found", model
    assert gateway(token, f"/v1/models/{'9' * 5000}").status_code == 404
    assert gateway(token, f"/v1/models/{'9' * 30}").status_code == 404


def test_a_gateway_history_of_2001_messages_stores_only_its_latest_turns(owner, knowledge_base, scripted_openai,
                                                                          server_url, settings):
    settings.TRELLIS_GATEWAY_HISTORY_TURNS = 10
    naive_pipeline(owner, knowledge_base, scripted_openai)
    token = api_token_create(owner=owner, name="t").secret
    messages = []
    for index in range(1000):
        messages += [{"role": "user", "content": f"question {index}"}, {"role": "assistant", "content": f"answer {index}"}]
    messages.append({"role": "user", "content": "What is a hybrid retriever?"})
    scripted_openai.default_answer = ["Fused [1]."]
    response = httpx.post(f"{server_url}/v1/chat/completions", json={"model": "keyword", "messages": messages},
                          headers={"Authorization": f"Bearer {token}"}, timeout=60)
    assert response.status_code == 200, response.text[:500]
    conversation = Conversation.objects.get(owner=owner)
    stored = list(conversation.messages.order_by("pk").values_list("role", "text"))
    assert len(stored) == 2 * 10 + 2, len(stored)
    assert stored[0] == ("user", "question 990") and stored[-2] == ("user", "What is a hybrid retriever?")
    assert Message.objects.count() == 22
