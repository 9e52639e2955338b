"""The credentials admin: masked list, password inputs that never show the stored secret,
saving through the services (validated and encrypted like the API)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from credentials import services
from credentials.models import Credential

from .conftest import OTHER_SECRET, SECRET, logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CHANGELIST = reverse("admin:credentials_credential_changelist")
ADD = reverse("admin:credentials_credential_add")


def change_url(credential: Credential) -> str:
    return reverse("admin:credentials_credential_change", args=[credential.pk])


@pytest.fixture
def admin_client_(staff):
    return logged_in(staff)


@pytest.fixture
def credential(owner):
    return services.credential_create(owner=owner, name="openai-main", kind="OpenAIAPIKey",
                                      values={"api_key": SECRET, "base_url": "https://gateway.example/v1"})


def page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    html = response.content.decode()
    assert SECRET not in html and OTHER_SECRET not in html, f"{url} shows a secret"
    return html


def password_inputs(html: str) -> list[str]:
    return re.findall(r"<input[^>]*type=\"password\"[^>]*>", html)


def test_the_changelist_shows_name_owner_kind_and_mask_but_never_the_secret(admin_client_, credential):
    html = page(admin_client_, CHANGELIST)
    for shown in ("openai-main", "ada", "OpenAIAPIKey", "sk-…a1b2"):
        assert shown in html


def test_the_change_page_has_empty_password_inputs_and_the_mask(admin_client_, credential):
    html = page(admin_client_, change_url(credential))
    inputs = password_inputs(html)
    assert len(inputs) == 1 and 'name="OpenAIAPIKey__api_key"' in inputs[0]
    assert "value=" not in inputs[0]
    assert "sk-…a1b2" in html and "https://gateway.example/v1" in html


def test_the_add_page_offers_a_password_input_for_every_kinds_secret(admin_client_):
    html = page(admin_client_, ADD)
    names = {re.search(r'name="([^"]+)"', tag).group(1) for tag in password_inputs(html)}
    assert names == {"OpenAIAPIKey__api_key", "BearerToken__token", "WebSearchAPIKey__api_key"}


def test_adding_through_the_admin_encrypts_through_the_services(admin_client_, owner):
    response = admin_client_.post(ADD, {
        "name": "search", "owner": owner.pk, "kind": "WebSearchAPIKey",
        "WebSearchAPIKey__api_key": SECRET, "WebSearchAPIKey__provider": "serper",
        "OpenAIAPIKey__api_key": OTHER_SECRET,  # another kind's section is ignored
        "_save": "Save",
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    credential = Credential.objects.get()
    assert (credential.owner, credential.kind, credential.mask) == (owner, "WebSearchAPIKey", "sk-…a1b2")
    assert credential.public_params == {"provider": "serper", "base_url": None}
    assert SECRET.encode() not in bytes(credential.secret)
    assert services.credential_resolver_for(owner)("search").secret_values() == {"api_key": SECRET}
    page(admin_client_, CHANGELIST)
    page(admin_client_, reverse("admin:credentials_credential_history", args=[credential.pk]))


def test_an_invalid_add_shows_the_error_at_the_field_and_stores_nothing(admin_client_, owner):
    response = admin_client_.post(ADD, {"name": "search", "owner": owner.pk, "kind": "WebSearchAPIKey",
                                        "WebSearchAPIKey__provider": "brave", "_save": "Save"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["WebSearchAPIKey__api_key"] == ["is required"]
    assert not Credential.objects.exists()


def test_a_shared_credential_needs_a_staff_owner(admin_client_, owner):
    response = admin_client_.post(ADD, {"name": "team", "owner": owner.pk, "kind": "OpenAIAPIKey", "shared": "on",
                                        "OpenAIAPIKey__api_key": SECRET, "_save": "Save"})
    assert response.status_code == 200
    assert "shared" in response.context["adminform"].form.errors
    assert SECRET not in response.content.decode()  # a refused form does not echo the password back
    assert not Credential.objects.exists()


def test_saving_the_change_form_with_an_empty_password_keeps_the_secret(admin_client_, owner, credential):
    response = admin_client_.post(change_url(credential), {
        "name": "openai-main", "OpenAIAPIKey__api_key": "", "OpenAIAPIKey__base_url": "http://localhost:8080/v1",
        "OpenAIAPIKey__organization": "", "_save": "Save",
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    resolved = services.credential_resolver_for(owner)("openai-main")
    assert resolved.secret_values() == {"api_key": SECRET}
    assert resolved.params.base_url == "http://localhost:8080/v1"


def test_a_new_password_in_the_change_form_replaces_the_secret(admin_client_, owner, credential):
    response = admin_client_.post(change_url(credential), {
        "name": "openai-main", "OpenAIAPIKey__api_key": OTHER_SECRET, "OpenAIAPIKey__base_url": "", "_save": "Save",
    })
    assert response.status_code == 302
    assert services.credential_resolver_for(owner)("openai-main").secret_values() == {"api_key": OTHER_SECRET}
    assert Credential.objects.get().mask == "sk-…c3d4"
    page(admin_client_, change_url(credential))


def test_deleting_from_the_admin_removes_the_credential(admin_client_, credential):
    response = admin_client_.post(reverse("admin:credentials_credential_delete", args=[credential.pk]),
                                  {"post": "yes"})
    assert response.status_code == 302
    assert not Credential.objects.exists()


def test_an_administrator_shares_a_credential_with_a_group_and_binds_it_to_another_server(
    admin_client_, staff, owner
):
    from django.contrib.auth.models import Group

    from credentials import selectors

    team = Group.objects.create(name="research")
    owner.groups.add(team)
    response = admin_client_.post(ADD, {
        "name": "team", "owner": staff.pk, "kind": "OpenAIAPIKey", "shared": "on", "OpenAIAPIKey__api_key": SECRET,
        "granted_groups": [team.pk], "destinations": "https://gateway.example.org/v1\n", "_save": "Save"})
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    credential = Credential.objects.get(name="team")
    assert list(credential.granted_groups.all()) == [team]
    assert credential.destinations == ["https://gateway.example.org/v1"]
    assert selectors.credential_destinations(user=owner, name="team") == [
        "https://api.openai.com:443", "https://gateway.example.org:443"]

    refused = admin_client_.post(change_url(credential), {
        "name": "team", "OpenAIAPIKey__api_key": "", "OpenAIAPIKey__base_url": "", "OpenAIAPIKey__organization": "",
        "granted_groups": [team.pk], "destinations": "ftp://files.example.org", "_save": "Save"})
    assert refused.status_code == 200
    assert "Not an http:// or https:// server address: ftp://files.example.org" in refused.content.decode()
