"""Finding 1 of the second security round: a credential goes only to the servers it is bound to.

An administrator shares an OpenAI key (bound to api.openai.com) with a user. The user saves a
pipeline whose LLM points at a listener of their own with that credential: saving is refused,
and a run built around the check never sends the key (the listener proves nothing arrived).
"""

from __future__ import annotations

import pytest

from credentials import services as credentials
from pipelines.services import pipeline_create
from rag.core import ConfigValidationError, CredentialError, build
from tests.support.scripted_openai import ScriptedOpenAIServer, chat_response, chat_stream

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SHARED_KEY = "sk-shared-admin-key-0123456789abcdef"
CHAT = "/v1/chat/completions"


@pytest.fixture
def knowledge_base(owner):
    from knowledge.services import knowledge_base_create

    return knowledge_base_create(owner=owner, name="Notes")


@pytest.fixture
def shared_openai_key(django_user_model, owner):
    admin = django_user_model.objects.create_superuser(username="root", password="correct horse battery")
    credential = credentials.credential_create(owner=admin, name="team-openai", kind="OpenAIAPIKey",
                                               values={"api_key": SHARED_KEY}, shared=True)
    return credentials.credential_grant(credential=credential, users=[owner])


def answering_through(base_url: str, credential: str) -> dict:
    llm = {"component": "OpenAICompatibleLLM", "params": {"base_url": base_url, "model": "m", "credential": credential}}
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm}}}}


def test_a_pipeline_sending_a_shared_key_to_the_users_own_listener_is_refused_at_save(
    owner, shared_openai_key, knowledge_base
):
    with ScriptedOpenAIServer() as listener:
        with pytest.raises(ConfigValidationError) as refused:
            pipeline_create(owner=owner, name="steal", knowledge_base=knowledge_base,
                            strategy=answering_through(listener.base_url, "team-openai"))
        assert listener.requests == []
    error, = refused.value.errors
    assert error.path == "strategy.params.response_synthesizer.params.llm.params.credential"
    assert error.code == "credential_destination"
    assert "may be sent only to https://api.openai.com:443, not to http://127.0.0.1:" in error.message
    assert SHARED_KEY not in error.message


def test_at_run_time_the_key_never_leaves_for_another_host(owner, shared_openai_key):
    with ScriptedOpenAIServer() as listener:
        listener.enqueue(CHAT, chat_stream(["stolen"]))
        # The model is built (and its key resolved) as a run starts: the check comes first.
        with pytest.raises(CredentialError, match="may be sent only to https://api.openai.com:443"):
            build({"component": "OpenAICompatibleLLM", "params": {
                "base_url": listener.base_url, "model": "m", "credential": "team-openai"}},
                credentials=credentials.credential_resolver_for(owner))
        assert listener.requests == []


def test_an_administrator_can_bind_a_credential_to_more_servers(owner, shared_openai_key, knowledge_base):
    with ScriptedOpenAIServer() as gateway:
        credentials.credential_destinations_set(credential=shared_openai_key, destinations=[gateway.base_url])
        pipeline = pipeline_create(owner=owner, name="through the gateway", knowledge_base=knowledge_base,
                                   strategy=answering_through(gateway.base_url, "team-openai"))
        gateway.enqueue(CHAT, chat_response("ok"))
        llm = build(pipeline.strategy["params"]["response_synthesizer"]["params"]["llm"],
                    credentials=credentials.credential_resolver_for(owner))
        assert llm.generate([{"role": "user", "content": "hi"}]) == "ok"
        assert gateway.requests[0].headers["authorization"] == f"Bearer {SHARED_KEY}"


def test_a_shared_credential_nobody_granted_is_unknown_to_other_users(stranger, shared_openai_key):
    from knowledge.services import knowledge_base_create

    knowledge_base = knowledge_base_create(owner=stranger, name="Theirs")
    with pytest.raises(ConfigValidationError) as refused:
        pipeline_create(owner=stranger, name="borrow", knowledge_base=knowledge_base,
                        strategy=answering_through("https://api.openai.com/v1", "team-openai"))
    assert [error.code for error in refused.value.errors] == ["unknown_credential"]
