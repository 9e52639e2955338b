"""User B against user A's objects, on every API route and every websocket route.

The routes come from the URL configuration itself, so a new endpoint is covered the day it is
added; a new ``*_id`` keyword without an object below makes this test fail and ask for one.
"""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.services import api_token_create
from chat.services import conversation_create
from common.permissions import path_keywords
from config.routing import websocket_urlpatterns
from credentials.services import credential_create
from evaluation.models import Evaluation, EvaluationDataset
from knowledge.models import Document
from knowledge.services import knowledge_base_create
from models.models import ModelInstall
from pipelines.services import pipeline_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

METHODS = ("get", "post", "put", "patch", "delete")
ALLOWED = {403, 404, 405}


def api_routes(patterns=None, prefix=""):
    """``(route template, view)`` of every pattern, with ``<int:x>`` converters kept."""
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from api_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
            yield route, pattern.callback


@pytest.fixture
def victim_objects(django_user_model):
    """One object of user A for every path keyword."""
    alice = django_user_model.objects.create_user(username="alice", password="x")
    knowledge_base = knowledge_base_create(owner=alice, name="Private")
    document = Document.objects.create(owner=alice, knowledge_base=knowledge_base, name="secret.txt", size=1,
                                       sha256="0" * 64, file="nowhere", status=Document.Status.FAILED)
    pipeline = pipeline_create(owner=alice, name="Mine", knowledge_base=knowledge_base,
                               strategy={"component": "NaiveRAG"})
    conversation = conversation_create(owner=alice, pipeline=pipeline)
    credential = credential_create(owner=alice, name="openai", kind="OpenAIAPIKey",
                                   values={"api_key": "sk-alice-secret-000000000000"})
    dataset = EvaluationDataset.objects.create(owner=alice, name="Private set", source="shared:cranfield",
                                               knowledge_base=knowledge_base_create(owner=alice, name="Private set"))
    evaluation = Evaluation.objects.create(owner=alice, dataset=dataset, status=Evaluation.Status.DONE)
    install = ModelInstall.objects.create(owner=alice, source=ModelInstall.Source.HUB, reference="acme/private-ce",
                                          kind="cross-encoder", name="private-ce", status=ModelInstall.Status.FAILED)
    token = api_token_create(owner=alice, name="Private laptop").token
    return {"knowledge_base_id": knowledge_base.pk, "document_id": document.pk, "pipeline_id": pipeline.pk,
            "conversation_id": conversation.pk, "credential_id": credential.pk, "dataset_id": dataset.pk,
            "evaluation_id": evaluation.pk, "install_id": install.pk, "api_token_id": token.pk, "name": "report.md"}


@pytest.fixture
def intruder(django_user_model):
    bob = django_user_model.objects.create_user(username="bob", password="x")
    client = Client()
    client.force_login(bob)
    return client


def test_every_path_keyword_has_an_ownership_rule_and_an_object_here(victim_objects):
    keywords = {keyword for route, _ in api_routes() for keyword in re.findall(r"<(?:\w+:)?(\w+_id)>", route)}
    assert keywords, "no API route has an object id: the URL walk is broken"
    assert keywords <= path_keywords(), f"no ownership rule for {keywords - path_keywords()}"
    assert keywords <= set(victim_objects), f"add an object of user A for {keywords - set(victim_objects)}"


def test_user_b_gets_nothing_of_user_a_on_any_route_or_method(victim_objects, intruder):
    checked = 0
    for route, view in api_routes():
        keywords = re.findall(r"<(?:\w+:)?(\w+)>", route)
        if not any(keyword.endswith("_id") for keyword in keywords):
            continue
        url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(victim_objects[match.group(1)]), route)
        view_class = getattr(view, "view_class", None) or getattr(view, "cls", None)
        for method in METHODS:
            if view_class is not None and not hasattr(view_class, method):
                continue
            response = getattr(intruder, method)(url, {}, content_type="application/json")
            assert response.status_code in ALLOWED, f"{method.upper()} {url} gave {response.status_code}"
            assert b"sk-alice-secret" not in response.content and b"Private" not in response.content
            checked += 1
    assert checked >= 20, f"only {checked} route/method pairs were checked"


@pytest.mark.django_db(transaction=True)
def test_user_b_cannot_open_user_a_websockets(victim_objects, intruder):
    application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
    session = intruder.cookies[settings.SESSION_COOKIE_NAME].value

    async def attempt(path):
        communicator = WebsocketCommunicator(application, path, headers=[
            (b"origin", b"http://localhost"), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())])
        connected, _ = await communicator.connect()
        output = await communicator.receive_output(timeout=5)
        await communicator.disconnect()
        return connected, output

    for pattern in websocket_urlpatterns:
        keywords = re.findall(r"<(?:\w+:)?(\w+_id)>", str(pattern.pattern))
        if not keywords:
            continue  # the fallback for unknown paths (closed with 4404)
        keyword = keywords[0]
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(victim_objects[match.group(1)]), str(pattern.pattern))
        connected, output = async_to_sync(attempt)(path)
        assert output == {"type": "websocket.close", "code": 4403}, f"{path} ({keyword}) answered {output}"
