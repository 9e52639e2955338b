"""API tokens: made, listed and revoked by their owner through /api/v1/api-tokens/ and by staff
in the admin; the secret is shown once and only its hash is stored."""

from __future__ import annotations

import hashlib

import pytest
from django.urls import reverse

from accounts.models import ApiToken
from accounts.services import api_token_authenticate, api_token_create
from tests.integration.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_a_token_is_shown_once_stored_as_its_hash_and_listed_by_its_prefix(api):
    made = api.post(reverse("api-token-list"), {"name": "  laptop "}, content_type="application/json")
    assert made.status_code == 201
    body = made.json()
    secret = body["token"]
    assert secret.startswith("trl_") and len(secret) >= 40 and body["prefix"] == secret[:12]
    assert (body["name"], body["active"], body["last_used_at"], body["revoked_at"]) == ("laptop", True, None, None)
    stored = ApiToken.objects.get()
    assert stored.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(list(ApiToken.objects.values()))
    listed = api.get(reverse("api-token-list")).json()
    assert [row["prefix"] for row in listed] == [body["prefix"]] and "token" not in listed[0]
    assert api_token_authenticate(secret=secret).owner.username == "ada"
    assert api.get(reverse("api-token-list")).json()[0]["last_used_at"] is not None


def test_revoking_stops_the_token_and_keeps_it_listed(api, owner):
    issued = api_token_create(owner=owner, name="ci")
    revoked = api.post(reverse("api-token-revoke", args=[issued.token.pk]))
    assert revoked.status_code == 200 and revoked.json()["active"] is False and revoked.json()["revoked_at"]
    assert api_token_authenticate(secret=issued.secret) is None
    assert api.get(reverse("api-token-list")).json()[0]["active"] is False


def test_another_users_tokens_are_neither_listed_nor_revocable(api, stranger_api, stranger):
    theirs = api_token_create(owner=stranger, name="theirs")
    assert api.get(reverse("api-token-list")).json() == []
    assert api.post(reverse("api-token-revoke", args=[theirs.token.pk])).status_code == 404
    assert api_token_authenticate(secret=theirs.secret) is not None
    assert stranger_api.get(reverse("api-token-list")).json()[0]["name"] == "theirs"


def test_a_name_is_required_and_a_visitor_gets_no_token(api, client):
    refused = api.post(reverse("api-token-list"), {"name": ""}, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["path"] == "name"
    assert client.post(reverse("api-token-list"), {"name": "x"}, content_type="application/json").status_code == 403


def test_a_token_does_not_sign_in_to_the_session_api(owner, client):
    issued = api_token_create(owner=owner, name="laptop")
    response = client.get(reverse("api-token-list"), HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
    assert response.status_code == 403


def test_staff_make_and_revoke_tokens_in_the_admin_and_never_see_a_stored_secret(admin_user, owner):
    staff = logged_in(admin_user)
    added = staff.post(reverse("admin:accounts_apitoken_add"), {"owner": owner.pk, "name": "for ada", "_save": "Save"},
                       follow=True)
    assert added.status_code == 200
    token = ApiToken.objects.get()
    shown = [str(message) for message in added.context["messages"]]
    secret = next(word for message in shown for word in message.split() if word.startswith("trl_"))
    assert api_token_authenticate(secret=secret).pk == token.pk
    for url in (reverse("admin:accounts_apitoken_changelist"),
                reverse("admin:accounts_apitoken_change", args=[token.pk])):
        html = staff.get(url).content.decode()
        assert token.prefix in html and secret not in html and token.digest not in html
    staff.post(reverse("admin:accounts_apitoken_changelist"),
               {"action": "revoke", "_selected_action": [token.pk]}, follow=True)
    assert api_token_authenticate(secret=secret) is None


def test_the_admin_index_has_one_token_section_the_tokens_the_gateway_checks(admin_user):
    page = logged_in(admin_user).get(reverse("admin:index"))
    assert page.status_code == 200
    token_models = [(app["app_label"], model["object_name"]) for app in page.context["app_list"]
                    for model in app["models"] if "token" in model["object_name"].lower()]
    assert token_models == [("accounts", "ApiToken")], f"token sections in the admin: {token_models}"
    html = page.content.decode()
    assert html.count(">API tokens<") == 1 and ">Tokens<" not in html and "authtoken" not in html
