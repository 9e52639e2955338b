"""Credentials at rest and at run time: encrypted, resolved only for whom they belong to, never
logged, readable after a key rotation."""

from __future__ import annotations

import io
import json
import logging

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError
from django.test import override_settings

from credentials import crypto, selectors, services
from credentials.apps import check_credentials_key
from credentials.models import Credential
from rag.core import ConfigValidationError, CredentialError, build
from rag.credentials import OpenAIAPIKey, WebSearchAPIKey
from tests.support.fixtures import scripted_openai  # noqa: F401  (a fixture)

from .conftest import OTHER_SECRET, SECRET

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def store(owner, name="openai-main", secret=SECRET, **options):
    values = {"api_key": secret, "base_url": "https://gateway.example/v1"}
    return services.credential_create(owner=owner, name=name, kind="OpenAIAPIKey", values=values, **options)


def raw_secret_column(credential: Credential) -> bytes:
    return bytes(Credential.objects.values_list("secret", flat=True).get(pk=credential.pk))


# -- at rest ---------------------------------------------------------------------------------


def test_the_stored_secret_is_a_fernet_token_that_does_not_contain_the_secret(owner):
    credential = store(owner)
    stored = raw_secret_column(credential)
    assert stored != SECRET.encode()
    assert SECRET.encode() not in stored and SECRET[-12:].encode() not in stored
    opened = Fernet(crypto.current_key().encode()).decrypt(stored)
    assert json.loads(opened) == {"api_key": SECRET}


def test_the_row_keeps_public_params_and_the_mask_in_clear_and_the_secret_nowhere_else(owner):
    credential = Credential.objects.get(pk=store(owner).pk)
    assert credential.kind == "OpenAIAPIKey" and credential.mask == "sk-…a1b2"
    assert credential.public_params == {"base_url": "https://gateway.example/v1", "organization": None}
    row = Credential.objects.filter(pk=credential.pk).values().get()
    row.pop("secret")
    assert SECRET not in json.dumps(row, default=str)


def test_invalid_values_are_refused_at_their_paths_and_nothing_is_stored(owner):
    with pytest.raises(ConfigValidationError) as caught:
        services.credential_create(owner=owner, name="search", kind="WebSearchAPIKey",
                                   values={"provider": "bing", "colour": "red"})
    assert {error.path for error in caught.value.errors} == {"values.api_key", "values.provider", "values.colour"}
    with pytest.raises(ConfigValidationError) as caught:
        services.credential_create(owner=owner, name="x", kind="BM25Retriever", values={})
    assert [error.path for error in caught.value.errors] == ["kind"]
    assert not Credential.objects.exists()


def test_a_name_is_unique_per_owner_and_a_shared_name_among_shared_credentials(owner, stranger, staff):
    store(owner)
    store(stranger)  # another owner may use the same name
    with pytest.raises(IntegrityError):
        store(owner)
    store(staff, name="team", shared=True)
    other_staff = type(staff).objects.create_superuser(username="grace", password=None)
    with pytest.raises(IntegrityError):
        store(other_staff, name="team", shared=True)


def test_only_staff_may_create_a_shared_credential(owner):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        store(owner, shared=True)
    assert not Credential.objects.exists()


def test_logs_of_creating_updating_and_resolving_never_contain_the_secret(owner, caplog):
    caplog.set_level(logging.DEBUG)
    credential = store(owner)
    services.credential_update(credential=credential, values={"api_key": OTHER_SECRET})
    services.credential_resolver_for(owner)("openai-main")
    with pytest.raises(ConfigValidationError):
        services.credential_create(owner=owner, name="bad", kind="WebSearchAPIKey",
                                   values={"api_key": SECRET, "provider": "bing"})
    assert "openai-main" in caplog.text  # the log is there, and it names the credential
    assert SECRET not in caplog.text and OTHER_SECRET not in caplog.text


# -- resolution ------------------------------------------------------------------------------


def test_the_owner_resolves_the_built_component_with_its_secret_and_the_use_is_recorded(owner):
    credential = store(owner)
    assert credential.last_used_at is None
    resolved = services.credential_resolver_for(owner)("openai-main")
    assert isinstance(resolved, OpenAIAPIKey)
    assert resolved.params.api_key.get_secret_value() == SECRET
    assert resolved.params.base_url == "https://gateway.example/v1"
    credential.refresh_from_db()
    assert credential.last_used_at is not None


def test_another_user_can_never_resolve_a_private_credential(owner, stranger):
    store(owner)
    with pytest.raises(CredentialError, match="no credential named 'openai-main' is available to you"):
        services.credential_resolver_for(stranger)("openai-main")
    with pytest.raises(CredentialError):
        services.credential_resolver_for(None)("openai-main")
    assert list(selectors.credential_list(user=stranger)) == []


def test_a_shared_credential_resolves_for_the_users_and_groups_granted_it_and_an_own_one_of_the_same_name_wins(
    owner, stranger, staff, django_user_model
):
    from django.contrib.auth.models import Group

    shared = services.credential_create(owner=staff, name="search", kind="WebSearchAPIKey",
                                        values={"api_key": SECRET, "provider": "tavily"}, shared=True)
    outsider = django_user_model.objects.create_user(username="eve")
    team = Group.objects.create(name="research")
    stranger.groups.add(team)
    services.credential_grant(credential=shared, users=[owner], groups=[team])
    with pytest.raises(CredentialError, match="no credential named 'search' is available to you"):
        services.credential_resolver_for(outsider)("search")
    assert list(selectors.credential_list(user=outsider)) == []
    for user in (owner, stranger, staff):
        resolved = services.credential_resolver_for(user)("search")
        assert isinstance(resolved, WebSearchAPIKey) and resolved.params.api_key.get_secret_value() == SECRET
    services.credential_create(owner=owner, name="search", kind="WebSearchAPIKey", values={"api_key": OTHER_SECRET})
    assert services.credential_resolver_for(owner)("search").params.api_key.get_secret_value() == OTHER_SECRET
    assert services.credential_resolver_for(stranger)("search").params.api_key.get_secret_value() == SECRET
    assert [c.name for c in selectors.credential_list(user=stranger)] == ["search"]


def test_an_update_without_the_secret_keeps_it_and_with_one_replaces_it(owner):
    credential = store(owner)
    services.credential_update(credential=credential, values={"base_url": "http://localhost:8080/v1"})
    resolved = services.credential_resolver_for(owner)("openai-main")
    assert resolved.params.api_key.get_secret_value() == SECRET
    assert resolved.params.base_url == "http://localhost:8080/v1"
    services.credential_update(credential=credential, values={"api_key": OTHER_SECRET})
    resolved = services.credential_resolver_for(owner)("openai-main")
    assert resolved.params.api_key.get_secret_value() == OTHER_SECRET
    assert resolved.params.base_url is None  # values replace: what is left out takes its default
    assert Credential.objects.get(pk=credential.pk).mask == "sk-…c3d4"


def test_a_pipeline_component_gets_the_stored_key_as_its_bearer_token(owner, scripted_openai):
    services.credential_create(owner=owner, name="openai-main", kind="OpenAIAPIKey",
                               values={"api_key": SECRET, "base_url": scripted_openai.base_url})
    embedding = build(
        {"component": "OpenAICompatibleEmbedding",
         "params": {"base_url": scripted_openai.base_url, "model": "scripted-model", "credential": "openai-main"}},
        credentials=services.credential_resolver_for(owner),
    )
    embedding.embed_documents(["hello"])
    assert scripted_openai.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(embedding.get_schema_summary()) + json.dumps(embedding.trace_params)


def test_a_wrong_key_gives_a_readable_error_naming_the_credential(owner):
    store(owner)
    with override_settings(TRELLIS_CREDENTIALS_KEY=crypto.generate_key(), TRELLIS_CREDENTIALS_OLD_KEYS=[]), \
            pytest.raises(CredentialError) as caught:
        services.credential_resolver_for(owner)("openai-main")
    assert str(caught.value) == ("the credentials key cannot decrypt credential 'openai-main'; was "
                                 "TRELLIS_CREDENTIALS_KEY rotated without TRELLIS_CREDENTIALS_OLD_KEYS?")


def test_a_malformed_key_is_refused_naming_the_setting_and_reported_by_the_system_check(owner):
    with override_settings(TRELLIS_CREDENTIALS_KEY="not-a-key"):
        with pytest.raises(ImproperlyConfigured, match="TRELLIS_CREDENTIALS_KEY is not a valid Fernet key"):
            store(owner)
        assert [message.id for message in check_credentials_key()] == ["credentials.E001"]
    with override_settings(TRELLIS_CREDENTIALS_OLD_KEYS=["short"]):
        assert "TRELLIS_CREDENTIALS_OLD_KEYS" in check_credentials_key()[0].msg
    assert check_credentials_key() == []


# -- key rotation ----------------------------------------------------------------------------


def test_after_rotation_every_credential_resolves_with_the_new_key_alone(owner, stranger, staff):
    store(owner)
    store(stranger, secret=OTHER_SECRET)
    services.credential_grant(credential=store(staff, name="team", shared=True), users=[stranger])
    old_key, new_key = crypto.current_key(), crypto.generate_key()
    old_token = raw_secret_column(Credential.objects.get(owner=owner))

    assert services.credentials_rotate_key(new_key=new_key) == 3

    with override_settings(TRELLIS_CREDENTIALS_KEY=new_key, TRELLIS_CREDENTIALS_OLD_KEYS=[]):
        assert services.credential_resolver_for(owner)("openai-main").secret_values() == {"api_key": SECRET}
        assert services.credential_resolver_for(stranger)("openai-main").secret_values() == {"api_key": OTHER_SECRET}
        assert services.credential_resolver_for(stranger)("team").secret_values() == {"api_key": SECRET}
        with pytest.raises(CredentialError, match="cannot decrypt credential 'old'"):
            crypto.decrypt_secrets(old_token, name="old")
    with override_settings(TRELLIS_CREDENTIALS_KEY=new_key, TRELLIS_CREDENTIALS_OLD_KEYS=[old_key]):
        assert crypto.decrypt_secrets(old_token, name="old") == {"api_key": SECRET}
    with pytest.raises(CredentialError):  # the old key alone no longer opens the rotated rows
        services.credential_resolver_for(owner)("openai-main")


def test_a_rotation_that_meets_an_unreadable_credential_changes_nothing(owner, stranger):
    readable = store(owner)
    with override_settings(TRELLIS_CREDENTIALS_KEY=crypto.generate_key()):
        store(stranger, name="lost")
    before = {credential.pk: raw_secret_column(credential) for credential in Credential.objects.all()}
    with pytest.raises(CredentialError, match="'lost'"):
        services.credentials_rotate_key(new_key=crypto.generate_key())
    assert {credential.pk: raw_secret_column(credential) for credential in Credential.objects.all()} == before
    assert services.credential_resolver_for(owner)(readable.name).secret_values() == {"api_key": SECRET}


def test_the_rotate_command_re_encrypts_writes_the_key_file_and_says_what_to_do_next(owner, tmp_path):
    store(owner)
    new_key = crypto.generate_key()
    key_file = tmp_path / "credentials.key"
    output = io.StringIO()
    with override_settings(TRELLIS_CREDENTIALS_KEY_FILE=key_file):
        call_command("rotate_credentials_key", f"--new-key={new_key}", stdout=output)
    text = output.getvalue()
    assert "Re-encrypted 1 credential(s)" in text and str(key_file) in text
    assert "TRELLIS_CREDENTIALS_OLD_KEYS" in text and new_key not in text
    assert key_file.read_text().strip() == new_key and key_file.stat().st_mode & 0o777 == 0o600
    with override_settings(TRELLIS_CREDENTIALS_KEY=new_key):
        assert services.credential_resolver_for(owner)("openai-main").secret_values() == {"api_key": SECRET}


def test_the_rotate_command_without_a_key_file_tells_which_variable_to_set(owner):
    store(owner)
    output = io.StringIO()
    with override_settings(TRELLIS_CREDENTIALS_KEY_FILE=None):
        call_command("rotate_credentials_key", f"--new-key={crypto.generate_key()}", stdout=output)
    assert "Set TRELLIS_CREDENTIALS_KEY to the new key" in output.getvalue()


def test_the_rotate_command_refuses_a_malformed_key_and_changes_nothing(owner):
    before = raw_secret_column(store(owner))
    with pytest.raises(CommandError, match="--new-key is not a valid Fernet key"):
        call_command("rotate_credentials_key", "--new-key=not-a-key", stdout=io.StringIO())
    assert raw_secret_column(Credential.objects.get()) == before
