"""The credentials REST API: values go in, masks come out; another user's credential is a 404."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.urls import reverse

from credentials import services
from credentials.models import Credential
from knowledge.services import knowledge_base_create
from pipelines.services import pipeline_create
from rag.core import build
from tests.support.scripted_openai import ScriptedOpenAIServer, chat_response

from .conftest import OTHER_SECRET, SECRET

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LIST = reverse("credential-list")
FIELDS = {"id", "name", "kind", "mask", "shared", "owned", "public_params", "created_at", "updated_at",
          "rotated_at", "last_used_at", "used_by"}
OPENAI = {"name": "openai-main", "kind": "OpenAIAPIKey",
          "values": {"api_key": SECRET, "base_url": "https://gateway.example/v1"}}


def detail(credential_id: int) -> str:
    return reverse("credential-detail", args=[credential_id])


def rotate(client, credential_id: int, values: dict, language: str = "en"):
    response = client.post(reverse("credential-rotate", args=[credential_id]), {"values": values},
                           content_type="application/json", HTTP_ACCEPT_LANGUAGE=language)
    assert_no_secret(response)
    return response


def assert_no_secret(response) -> None:
    body = response.content.decode()
    for secret in (SECRET, OTHER_SECRET):
        assert secret not in body, f"{response.request['REQUEST_METHOD']} {response.request['PATH_INFO']} " \
                                   f"returned the secret: {body}"


def create(client, payload=OPENAI, language="en"):
    response = client.post(LIST, payload, content_type="application/json", HTTP_ACCEPT_LANGUAGE=language)
    assert_no_secret(response)
    return response


def errors_by_path(response) -> dict[str, dict]:
    return {error["path"]: error for error in response.json()["errors"]}


def test_creating_returns_the_masked_credential_without_any_value(api):
    response = create(api)
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    assert (body["name"], body["kind"], body["mask"], body["shared"], body["owned"]) == (
        "openai-main", "OpenAIAPIKey", "sk-…a1b2", False, True)
    assert body["public_params"] == {"base_url": "https://gateway.example/v1", "organization": None}
    assert body["last_used_at"] is None and body["rotated_at"] is None
    assert body["used_by"] == []


def test_list_detail_update_and_delete_never_return_the_secret(api, owner):
    credential_id = create(api).json()["id"]
    services.credential_resolver_for(owner)("openai-main")
    listed = api.get(LIST)
    assert_no_secret(listed)
    assert [item["name"] for item in listed.json()] == ["openai-main"]
    assert listed.json()[0]["last_used_at"] is not None
    shown = api.get(detail(credential_id))
    assert_no_secret(shown)
    assert shown.json()["mask"] == "sk-…a1b2"
    changed = api.patch(detail(credential_id), {"values": {"api_key": OTHER_SECRET}}, content_type="application/json")
    assert_no_secret(changed)
    assert changed.status_code == 200 and changed.json()["mask"] == "sk-…c3d4"
    assert api.delete(detail(credential_id)).status_code == 204
    assert not Credential.objects.exists()


def test_patching_without_the_secret_keeps_it(api, owner):
    credential_id = create(api).json()["id"]
    response = api.patch(detail(credential_id), {"name": "gateway", "values": {"organization": "org-7"}},
                         content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["public_params"] == {"base_url": None, "organization": "org-7"}
    assert services.credential_resolver_for(owner)("gateway").secret_values() == {"api_key": SECRET}


def test_invalid_values_are_refused_with_every_path(api):
    response = create(api, {"name": "search", "kind": "WebSearchAPIKey",
                            "values": {"provider": "bing", "api_kee": SECRET}})
    assert response.status_code == 400
    errors = errors_by_path(response)
    assert set(errors) == {"values.api_key", "values.provider", "values.api_kee"}
    assert "api_key" in errors["values.api_kee"]["message"]  # the suggestion for the typo
    assert errors["values.provider"]["code"] == "literal_error"
    spanish = create(api, {"name": "search", "kind": "WebSearchAPIKey", "values": {}}, language="es")
    assert errors_by_path(spanish)["values.api_key"]["code"] == "missing"
    assert errors_by_path(spanish)["values.api_key"]["message"] != errors["values.api_key"]["message"]
    assert not Credential.objects.exists()


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"name": "x", "kind": "OpenAIApiKey", "values": {"api_key": SECRET}}, "kind"),
        ({"name": "x", "kind": "BM25Retriever", "values": {}}, "kind"),
        ({"name": "x", "kind": "OpenAIAPIKey", "values": [SECRET]}, "values"),
        ({"name": "no spaces", "kind": "OpenAIAPIKey", "values": {"api_key": SECRET}}, "name"),
        ({"kind": "OpenAIAPIKey", "values": {"api_key": SECRET}}, "name"),
    ],
    ids=["misspelt-kind", "not-a-credential", "values-not-an-object", "bad-name", "no-name"],
)
def test_a_malformed_request_is_a_400_at_its_path(api, payload, path):
    response = create(api, payload)
    assert response.status_code == 400
    assert path in errors_by_path(response)


def test_a_duplicate_name_is_a_400_on_name(api):
    create(api)
    response = create(api)
    assert response.status_code == 400
    assert errors_by_path(response)["name"]["code"] == "duplicate_name"


def test_another_users_credential_is_a_404_for_every_operation(api, stranger_api):
    credential_id = create(api).json()["id"]
    assert stranger_api.get(LIST).json() == []
    assert stranger_api.get(detail(credential_id)).status_code == 404
    assert stranger_api.patch(detail(credential_id), {"values": {"api_key": "sk-stolen-000000000000"}},
                              content_type="application/json").status_code == 404
    assert stranger_api.delete(detail(credential_id)).status_code == 404
    assert Credential.objects.get().mask == "sk-…a1b2"


def test_only_staff_create_shared_credentials_which_granted_users_see_and_only_the_owner_changes(
    api, stranger, stranger_api, staff_api
):
    from credentials import services

    refused = create(api, {**OPENAI, "shared": True})
    assert refused.status_code == 403
    shared = create(staff_api, {**OPENAI, "name": "team", "shared": True})
    assert shared.status_code == 201 and shared.json()["shared"] is True
    # Shared is not public: until an administrator grants it, nobody else sees it.
    assert stranger_api.get(LIST).json() == []
    assert stranger_api.get(detail(shared.json()["id"])).status_code == 404
    services.credential_grant(credential=Credential.objects.get(name="team"), users=[stranger])
    seen = stranger_api.get(LIST)
    assert_no_secret(seen)
    assert [(item["name"], item["owned"]) for item in seen.json()] == [("team", False)]
    shared_id = shared.json()["id"]
    assert stranger_api.get(detail(shared_id)).status_code == 200
    assert stranger_api.patch(detail(shared_id), {"values": {"api_key": "sk-hijack-0000000000000"}},
                              content_type="application/json").status_code == 403
    assert stranger_api.delete(detail(shared_id)).status_code == 403


def test_anonymous_requests_are_refused(client):
    assert client.get(LIST).status_code in (401, 403)
    assert client.post(LIST, OPENAI, content_type="application/json").status_code in (401, 403)
    assert not Credential.objects.exists()


def test_listing_takes_a_fixed_number_of_queries(api, owner, staff, django_assert_max_num_queries):
    from credentials import services

    for index in range(5):
        services.credential_create(owner=owner, name=f"key-{index}", kind="OpenAIAPIKey", values={"api_key": SECRET})
    team = services.credential_create(owner=staff, name="team", kind="OpenAIAPIKey", values={"api_key": SECRET},
                                      shared=True)
    services.credential_grant(credential=team, users=[owner])
    with django_assert_max_num_queries(6):  # session, user, credentials; for used_by: credentials, pipelines, KBs
        assert len(api.get(LIST).json()) == 6


def test_the_openapi_schema_marks_values_write_only_and_responses_carry_no_values(api):
    schema = api.get(reverse("api-schema"), {"format": "json"}).json()
    components = schema["components"]["schemas"]
    for request in ("CredentialCreateRequest", "PatchedCredentialUpdateRequest"):
        assert components[request]["properties"]["values"]["writeOnly"] is True
    assert "values" not in components["Credential"]["properties"]
    assert {"/api/v1/credentials/", "/api/v1/credentials/{credential_id}/"} <= set(schema["paths"])


# -- rotation, use and removal, as the Credentials page does them ---------------------------


CHAT = "/v1/chat/completions"


def answering_through(base_url: str, credential: str) -> dict:
    llm = {"component": "OpenAICompatibleLLM", "params": {"base_url": base_url, "model": "m", "credential": credential}}
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm}}}}


def ask_once(pipeline, owner, server: ScriptedOpenAIServer) -> str:
    """The bearer token the pipeline's model sends, built as a run builds it."""
    server.enqueue(CHAT, chat_response("ok"))
    llm = build(pipeline.strategy["params"]["response_synthesizer"]["params"]["llm"],
                credentials=services.credential_resolver_for(owner))
    assert llm.generate([{"role": "user", "content": "hi"}]) == "ok"
    return server.requests[-1].headers["authorization"]


def test_rotating_replaces_the_key_a_pipeline_sends_and_keeps_the_name_and_base_url(api, owner):
    with ScriptedOpenAIServer() as server:
        made = create(api, {"name": "openai-main", "kind": "OpenAIAPIKey",
                            "values": {"api_key": SECRET, "base_url": server.base_url}}).json()
        knowledge_base = knowledge_base_create(owner=owner, name="Notes")
        pipeline = pipeline_create(owner=owner, name="Hosted", knowledge_base=knowledge_base,
                                   strategy=answering_through(server.base_url, "openai-main"))
        assert ask_once(pipeline, owner, server) == f"Bearer {SECRET}"

        rotated = rotate(api, made["id"], {"api_key": OTHER_SECRET})
        assert rotated.status_code == 200, rotated.content
        body = rotated.json()
        assert (body["id"], body["name"], body["mask"]) == (made["id"], "openai-main", "sk-…c3d4")
        assert body["public_params"] == made["public_params"]
        assert body["rotated_at"] is not None
        assert body["used_by"] == [{"type": "pipeline", "id": pipeline.pk, "name": "Hosted"}]
        assert ask_once(pipeline, owner, server) == f"Bearer {OTHER_SECRET}"


def test_a_rotation_asks_for_the_secret_only_and_refuses_an_empty_one(api):
    credential_id = create(api).json()["id"]
    other_param = rotate(api, credential_id, {"api_key": OTHER_SECRET, "base_url": "https://elsewhere.example/v1"})
    assert other_param.status_code == 400
    assert errors_by_path(other_param)["values.base_url"]["code"] == "not_secret"
    spanish = rotate(api, credential_id, {"api_key": "   "}, language="es")
    assert spanish.status_code == 400 and "values.api_key" in errors_by_path(spanish)
    empty = rotate(api, credential_id, {})
    assert empty.status_code == 400 and errors_by_path(empty)["values.api_key"]["code"] == "missing"
    stored = Credential.objects.get()
    assert (stored.mask, stored.rotated_at) == ("sk-…a1b2", None)


def test_used_by_lists_the_users_own_pipelines_and_knowledge_bases_that_name_it(api, owner, stranger):
    with ScriptedOpenAIServer() as server:
        values = {"api_key": SECRET, "base_url": server.base_url}
        mine = create(api, {"name": "openai-main", "kind": "OpenAIAPIKey", "values": values}).json()
        unused = create(api, {"name": "spare", "kind": "OpenAIAPIKey", "values": values}).json()
        notes = knowledge_base_create(owner=owner, name="Hosted embeddings", embedding_model={
            "component": "OpenAICompatibleEmbedding",
            "params": {"base_url": server.base_url, "model": "scripted-model", "credential": "openai-main"}})
        pipeline = pipeline_create(owner=owner, name="Hosted", knowledge_base=notes,
                                   strategy=answering_through(server.base_url, "openai-main"))
        # Another user's pipeline naming a credential of the same name is theirs to know about.
        services.credential_create(owner=stranger, name="openai-main", kind="OpenAIAPIKey", values=values)
        theirs = knowledge_base_create(owner=stranger, name="Theirs")
        pipeline_create(owner=stranger, name="Not yours", knowledge_base=theirs,
                        strategy=answering_through(server.base_url, "openai-main"))
    listed = {item["name"]: item["used_by"] for item in api.get(LIST).json()}
    assert listed == {
        "openai-main": [{"type": "pipeline", "id": pipeline.pk, "name": "Hosted"},
                        {"type": "knowledge_base", "id": notes.pk, "name": "Hosted embeddings"}],
        "spare": [],
    }
    assert api.get(detail(mine["id"])).json()["used_by"] == listed["openai-main"]
    assert api.get(detail(unused["id"])).json()["used_by"] == []


def test_deleting_a_credential_in_use_is_refused_naming_its_users_unless_forced(api, owner):
    with ScriptedOpenAIServer() as server:
        credential_id = create(api, {"name": "openai-main", "kind": "OpenAIAPIKey",
                                     "values": {"api_key": SECRET, "base_url": server.base_url}}).json()["id"]
        knowledge_base = knowledge_base_create(owner=owner, name="Notes")
        pipeline_create(owner=owner, name="Hosted", knowledge_base=knowledge_base,
                        strategy=answering_through(server.base_url, "openai-main"))
    refused = api.delete(detail(credential_id), HTTP_ACCEPT_LANGUAGE="es")
    assert refused.status_code == 409
    [error] = refused.json()["errors"]
    assert error["code"] == "in_use"
    assert error["message"] == ("'openai-main' la usan 'Hosted', que dejarían de funcionar; quítala de ellos "
                                "primero, o elimínala de todos modos con force=true")
    assert Credential.objects.filter(pk=credential_id).exists()
    assert api.delete(detail(credential_id) + "?force=true").status_code == 204
    assert not Credential.objects.filter(pk=credential_id).exists()


def test_another_users_credential_cannot_be_rotated(api, stranger_api):
    credential_id = create(api).json()["id"]
    assert rotate(stranger_api, credential_id, {"api_key": OTHER_SECRET}).status_code == 404
    assert Credential.objects.get().mask == "sk-…a1b2"


def test_a_shared_credential_is_listed_read_only_and_cannot_be_rotated_by_a_granted_user(
    api, owner, staff_api
):
    shared = create(staff_api, {**OPENAI, "name": "team", "shared": True}).json()
    services.credential_grant(credential=Credential.objects.get(pk=shared["id"]), users=[owner])
    [listed] = api.get(LIST).json()
    assert (listed["name"], listed["shared"], listed["owned"]) == ("team", True, False)
    assert rotate(api, shared["id"], {"api_key": OTHER_SECRET}).status_code == 403
    assert api.patch(detail(shared["id"]), {"name": "mine"}, content_type="application/json").status_code == 403
    assert api.delete(detail(shared["id"]) + "?force=true").status_code == 403
    assert Credential.objects.get(pk=shared["id"]).mask == "sk-…a1b2"


@override_settings(TRELLIS_OUTBOUND_ALLOW=[])
@pytest.mark.parametrize("base_url", ["http://127.0.0.1:11434/v1", "http://localhost:8000/v1", "http://10.0.0.5/v1"])
def test_a_private_or_loopback_base_url_is_refused_at_its_field_in_the_users_language(api, base_url):
    payload = {"name": "local", "kind": "OpenAIAPIKey", "values": {"api_key": SECRET, "base_url": base_url}}
    english, spanish = create(api, payload), create(api, payload, language="es")
    assert english.status_code == spanish.status_code == 400
    english_error, spanish_error = errors_by_path(english)["values.base_url"], errors_by_path(spanish)["values.base_url"]
    assert english_error["code"] == spanish_error["code"] == "outbound_address"
    assert english_error["message"] != spanish_error["message"]
    assert not Credential.objects.exists()
