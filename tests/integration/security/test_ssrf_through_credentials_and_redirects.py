"""Findings 3 and 4 of the third security round: nothing reaches the server's own network through a
credential's base URL, a redirect, or a name that changes what it points at.

Each test aims at a loopback listener (the "internal service") that must receive nothing. For the
redirect, an administrator allows one loopback port (``TRELLIS_OUTBOUND_ALLOW=127.0.0.1:<port>``)
so the first hop stands for an allowed public server; the listener's port is not allowed.
"""

from __future__ import annotations

import re
import socket

import pytest
from django.urls import reverse

from common.outbound import outbound_policy_for
from credentials import services as credentials
from credentials.models import Credential
from rag.clients.guarded_http import guarded_client
from rag.clients.openai_api import make_client, readable_errors
from rag.clients.outbound import REFUSED, OutboundPolicy
from rag.core import ConfigValidationError, CredentialError, TrellisError, build
from rag.embeddings.base import EmbeddingError
from rag.llms.base import LLMError
from tests.support.listener import Listener, closed_port
from tests.support.scripted_openai import ScriptedError, ScriptedOpenAIServer

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

KEY = "tvly-secret-0123456789abcdef"
PUBLIC = "93.184.216.34"  # what a name resolves to when it looks harmless


def web_search(credential: str = "search") -> dict:
    return {"component": "WebSearchAPIRetriever", "params": {"provider": "tavily", "credential": credential}}


def search_as(user, credential: str = "search"):
    """CRAG's web retriever, built as a pipeline of ``user`` builds it, searching once."""
    retriever = build(web_search(credential), kind="web_retriever",
                      credentials=credentials.credential_resolver_for(user))
    return retriever.search("what is on port 8301?")


def stored_before_the_policy(owner, base_url: str, name: str = "search") -> Credential:
    """A credential saved while its address was allowed (or by an older version)."""
    from django.test import override_settings

    with override_settings(TRELLIS_OUTBOUND_ALLOW=["127.0.0.0/8"]):
        return credentials.credential_create(owner=owner, name=name, kind="WebSearchAPIKey",
                                             values={"api_key": KEY, "provider": "tavily", "base_url": base_url})


# -- finding 3: a credential's base URL ---------------------------------------------------------------

def test_an_ordinary_user_cannot_store_or_change_a_credential_to_point_at_the_servers_network(api, owner, settings):
    settings.TRELLIS_OUTBOUND_ALLOW = []
    with Listener() as internal:
        created = api.post(reverse("credential-list"), {
            "name": "search", "kind": "WebSearchAPIKey",
            "values": {"api_key": KEY, "provider": "tavily", "base_url": internal.url}}, content_type="application/json")
        assert created.status_code == 400, created.content
        error, = created.json()["errors"]
        assert (error["path"], error["code"]) == ("values.base_url", "outbound_address")
        assert "TRELLIS_OUTBOUND_ALLOW" in error["message"]

        public = api.post(reverse("credential-list"), {
            "name": "openai", "kind": "OpenAIAPIKey", "values": {"api_key": KEY}}, content_type="application/json")
        assert public.status_code == 201, public.content  # OpenAI's own address is public
        changed = api.patch(reverse("credential-detail", args=[public.json()["id"]]),
                            {"values": {"base_url": f"{internal.url}/v1"}}, content_type="application/json")
        assert changed.status_code == 400 and changed.json()["errors"][0]["code"] == "outbound_address"
    assert internal.connections == 0


def test_a_stored_credential_pointing_inside_is_refused_at_run_time_alike_whether_the_port_listens(owner, settings):
    with Listener() as internal:
        stored_before_the_policy(owner, internal.url, name="listening")
        stored_before_the_policy(owner, f"http://127.0.0.1:{closed_port()}", name="closed")
        settings.TRELLIS_OUTBOUND_ALLOW = []
        messages = []
        for name in ("listening", "closed"):
            with pytest.raises(CredentialError) as refused:
                search_as(owner, name)
            assert refused.value.code == "outbound_address"
            messages.append(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", str(refused.value)).replace(name, "<name>"))
        assert internal.connections == 0, internal.received
    # The same sentence for a port that answers and one that does not: no port scanner.
    assert messages[0] == messages[1]
    assert KEY not in str(messages)


def test_an_administrators_credential_still_goes_where_they_set_it(admin_user, settings):
    """The control: the listener does see a request when the policy lets it through."""
    settings.TRELLIS_OUTBOUND_ALLOW = []
    with Listener() as internal:
        credentials.credential_create(owner=admin_user, name="search", kind="WebSearchAPIKey",
                                      values={"api_key": KEY, "provider": "tavily", "base_url": internal.url})
        retriever = build({"component": "WebSearchAPIRetriever", "params": {
            "provider": "tavily", "credential": "search", "timeout": 0.5}}, kind="web_retriever",
            credentials=credentials.credential_resolver_for(admin_user))
        with pytest.raises(TrellisError):
            retriever.search("q")
    assert internal.connections == 1 and b"POST /search" in internal.received


def test_a_pipeline_naming_a_credential_that_points_inside_is_refused_at_save(owner, settings):
    from knowledge.services import knowledge_base_create
    from pipelines.services import pipeline_create

    with Listener() as internal:
        stored_before_the_policy(owner, internal.url)
        settings.TRELLIS_OUTBOUND_ALLOW = []
        base = knowledge_base_create(owner=owner, name="Notes")
        strategy = {"component": "CRAG", "params": {
            "retriever": {"component": "BM25Retriever", "params": {}},
            "response_synthesizer": {"component": "ResponseSynthesizer", "params": {}},
            "web_retriever": web_search()}}
        with pytest.raises(ConfigValidationError) as refused:
            pipeline_create(owner=owner, name="scan", knowledge_base=base, strategy=strategy)
    error, = refused.value.errors
    assert error.path == "strategy.params.web_retriever.params.credential" and error.code == "outbound_address"
    assert internal.connections == 0


# -- finding 4: redirects, and what a name resolves to when the connection opens ---------------------

def chat_llm(base_url: str) -> dict:
    return {"component": "OpenAICompatibleLLM", "params": {"base_url": base_url, "model": "m", "timeout": 2}}


def embedder(base_url: str) -> dict:
    return {"component": "OpenAICompatibleEmbedding", "params": {"base_url": base_url, "model": "e", "timeout": 2}}


@pytest.mark.parametrize("component", ["llm", "embedding"])
def test_a_307_from_an_allowed_server_is_not_followed_into_the_servers_network(owner, settings, component):
    with ScriptedOpenAIServer() as allowed, Listener() as internal:
        settings.TRELLIS_OUTBOUND_ALLOW = [f"127.0.0.1:{allowed.port}"]
        path = "/v1/chat/completions" if component == "llm" else "/v1/embeddings"
        allowed.enqueue(path, ScriptedError(307, "", headers={"location": f"{internal.url}{path}"}))
        config = chat_llm(allowed.base_url) if component == "llm" else embedder(allowed.base_url)
        built = build(config, kind=component, infra={"outbound": outbound_policy_for(owner)})
        with pytest.raises((LLMError, EmbeddingError)) as failed:
            if component == "llm":
                built.generate([{"role": "user", "content": "the prompt"}])
            else:
                built.embed_query("the document")
        assert internal.connections == 0, internal.received
    assert "answered HTTP 307" in str(failed.value)


def test_a_307_from_an_allowed_searxng_is_not_followed_into_the_servers_network(owner, settings):
    with ScriptedOpenAIServer() as allowed, Listener() as internal:
        settings.TRELLIS_OUTBOUND_ALLOW = [f"127.0.0.1:{allowed.port}"]
        allowed.enqueue("/v1/search", ScriptedError(307, "", headers={"location": f"{internal.url}/search"}))
        retriever = build({"component": "SearxngWebRetriever", "params": {"base_url": allowed.base_url}},
                          kind="web_retriever", infra={"outbound": outbound_policy_for(owner)})
        with pytest.raises(TrellisError, match="answered HTTP 307"):
            retriever.search("the question")
        assert internal.connections == 0, internal.received


def test_a_redirect_is_not_followed_for_an_administrator_either(admin_user, settings):
    with ScriptedOpenAIServer() as allowed, Listener() as internal:
        allowed.enqueue("/v1/chat/completions", ScriptedError(307, "", headers={
            "location": f"{internal.url}/v1/chat/completions"}))
        llm = build(chat_llm(allowed.base_url), kind="llm", infra={"outbound": outbound_policy_for(admin_user)})
        with pytest.raises(LLMError, match="answered HTTP 307"):
            llm.generate([{"role": "user", "content": "the prompt"}])
    assert internal.connections == 0


@pytest.fixture
def rebinds_after(monkeypatch):
    """``rebinds_after(n)``: ``rebind.test`` resolves to a public address the first ``n`` times it
    is looked up (the checks), then to loopback (a DNS server of the attacker's, answering with a
    zero TTL). Returns the list of lookups."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def arm(checks: int) -> list[str]:
        def getaddrinfo(host, port, *args, **kwargs):
            if host != "rebind.test":
                return real(host, port, *args, **kwargs)
            lookups.append(host)
            address = PUBLIC if len(lookups) <= checks else "127.0.0.1"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        return lookups

    return arm


@pytest.fixture
def rebinding(rebinds_after):
    return rebinds_after(1)


def test_a_name_that_turns_private_after_the_check_is_refused_when_the_connection_opens(rebinding, settings):
    settings.TRELLIS_OUTBOUND_ALLOW = []
    policy = OutboundPolicy([])
    with Listener() as internal:
        base_url = f"http://rebind.test:{internal.port}/v1"
        assert policy.problem(base_url) is None  # saved: the name pointed at a public address then
        client = make_client(base_url=base_url, api_key="k", timeout=2, max_retries=0, outbound=policy)
        with pytest.raises(LLMError) as refused, readable_errors(base_url, api_key="k", timeout=2, error=LLMError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "the prompt"}])
        assert internal.connections == 0, internal.received
    assert str(refused.value) == f"{base_url} {REFUSED}"
    assert len(rebinding) == 2, "resolved once at the check and once when connecting, never again"


def test_a_searxng_search_whose_name_turns_private_is_refused_when_the_connection_opens(owner, settings,
                                                                                        rebinds_after):
    settings.TRELLIS_OUTBOUND_ALLOW = []
    lookups = rebinds_after(1)  # the check when the pipeline is saved (and again when it is built)
    with Listener() as internal:
        base_url = f"http://rebind.test:{internal.port}"
        assert outbound_policy_for(owner).problem(base_url) is None
        retriever = build({"component": "SearxngWebRetriever", "params": {"base_url": base_url, "timeout": 0.5}},
                          kind="web_retriever", infra={"outbound": outbound_policy_for(owner)})
        with pytest.raises(TrellisError) as refused:
            retriever.search("what is on this port?")
        assert internal.connections == 0, internal.received
    assert str(refused.value) == f"SearXNG at {base_url} {REFUSED}"
    assert len(lookups) == 2


def test_a_web_search_apis_credential_whose_name_turns_private_gets_nothing(owner, settings, rebinds_after):
    """The credential's address passes when it is saved and when it is checked before the key is
    sent; by the time the request's connection opens, the name points at the listener."""
    settings.TRELLIS_OUTBOUND_ALLOW = []
    lookups = rebinds_after(2)
    with Listener() as internal:
        base_url = f"http://rebind.test:{internal.port}"
        credentials.credential_create(owner=owner, name="search", kind="WebSearchAPIKey",
                                      values={"api_key": KEY, "provider": "tavily", "base_url": base_url})
        retriever = build({"component": "WebSearchAPIRetriever", "params": {
            "provider": "tavily", "credential": "search", "timeout": 0.5}}, kind="web_retriever",
            credentials=credentials.credential_resolver_for(owner), infra={"outbound": outbound_policy_for(owner)})
        with pytest.raises(TrellisError) as refused:
            retriever.search("the question")
        assert internal.connections == 0, internal.received
    assert str(refused.value) == f"Tavily at {base_url} {REFUSED}"
    assert len(lookups) == 3 and KEY not in str(refused.value)


def test_the_connection_goes_to_the_address_that_was_checked(monkeypatch):
    """Resolved once, checked, connected to: a name allowed only by what it resolves to is never
    looked up a second time by the socket layer (where it could answer something else)."""
    real = socket.getaddrinfo
    looked_up = []

    def getaddrinfo(host, port, *args, **kwargs):
        looked_up.append(host)
        if host == "allowed.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with ScriptedOpenAIServer() as server:
        with guarded_client(OutboundPolicy([f"127.0.0.1:{server.port}"]), timeout=2) as client:
            response = client.get(f"http://allowed.test:{server.port}/v1/models")
        assert server.requests[0].headers["host"] == f"allowed.test:{server.port}"
    assert response.status_code == 200
    assert looked_up.count("allowed.test") == 1


def test_a_name_that_resolves_nowhere_is_refused_like_a_private_address():
    policy = OutboundPolicy([])
    assert policy.problem("http://no-such-host.invalid/v1") == REFUSED
    assert policy.problem("http://10.0.0.5/v1") == REFUSED
    with guarded_client(policy, timeout=2) as client, pytest.raises(Exception) as refused:
        client.get("http://no-such-host.invalid/v1/models")
    assert str(refused.value) == REFUSED
    # An administrator may allow a name; it is then connected to by name, whatever it resolves to.
    assert OutboundPolicy(["no-such-host.invalid"]).problem("http://no-such-host.invalid/v1") is None
