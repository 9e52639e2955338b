"""The credential components: masks, and secrets that never leave the component."""

import json

import pytest
from pydantic import SecretStr

from rag.components import load_components
from rag.core import ConfigValidationError, build, localize_schema, ml, param, validate_or_raise
from rag.core import Params as BaseParams
from rag.credentials import (
    MASK,
    BearerToken,
    CredentialComponent,
    OpenAIAPIKey,
    Secret,
    WebSearchAPIKey,
    mask_secret,
)

pytestmark = pytest.mark.unit

SECRET = "sk-proj-Zq81LmN0pQ4rS7tU2vWxa1b2"
CREDENTIALS = [
    (OpenAIAPIKey, {"api_key": SECRET, "base_url": "https://gateway.example/v1", "organization": "org-7"}),
    (BearerToken, {"token": SECRET, "header": "X-Api-Token"}),
    (WebSearchAPIKey, {"api_key": SECRET, "provider": "tavily"}),
]
IDS = [component.NAME for component, _ in CREDENTIALS]


def test_every_credential_component_is_registered_as_a_credential():
    registry = load_components()
    for component, _ in CREDENTIALS:
        assert registry.get(component.NAME) is component
        assert (component.KIND, component.CATEGORY) == ("credential", "credentials")
    assert {component.NAME for component in registry.of_kind("credential")} >= set(IDS)


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        ("sk-proj-0123456789abcdefa1b2", "sk-…a1b2"),
        ("tvly-0123456789ABCDEF", "tvl…CDEF"),
        ("0123456789abcdef", "012…cdef"),
        ("0123456789abcde", MASK),
        ("hunter2", MASK),
        ("x", MASK),
    ],
)
def test_a_mask_shows_three_leading_and_four_trailing_characters_of_long_secrets_only(secret, expected):
    assert mask_secret(secret) == expected


@pytest.mark.parametrize(("component", "values"), CREDENTIALS, ids=IDS)
def test_the_mask_of_a_credential_is_its_secret_masked(component, values):
    assert component(**values).mask() == "sk-…a1b2"


@pytest.mark.parametrize(("component", "values"), CREDENTIALS, ids=IDS)
def test_the_secret_never_appears_in_config_summary_trace_params_or_repr(component, values):
    credential = component(**values)
    credential.set_trace_params(values)
    for rendered in (credential.to_config(), credential.get_schema_summary(), credential.trace_params,
                     repr(credential), str(credential), credential.public_values(),
                     credential.render_representation("en"), repr(credential.params)):
        assert SECRET not in json.dumps(rendered, default=str), f"{component.NAME} leaked its secret in {rendered!r}"


@pytest.mark.parametrize(("component", "values"), CREDENTIALS, ids=IDS)
def test_a_built_credential_keeps_its_public_params_and_hands_out_its_secret_only_on_request(component, values):
    credential = build({"component": component.NAME, "params": values}, kind="credential")
    public = {name: value for name, value in values.items() if name not in component.SECRET_PARAMS}
    assert public.items() <= credential.public_values().items()
    assert credential.secret_values() == {component.SECRET_PARAMS[0]: SECRET}
    assert isinstance(getattr(credential.params, component.SECRET_PARAMS[0]), SecretStr)


@pytest.mark.parametrize("component", [OpenAIAPIKey, BearerToken, WebSearchAPIKey], ids=IDS)
def test_the_schema_marks_secrets_write_only_passwords_and_requires_them(component):
    schema = localize_schema(component.get_schema(), "es")
    for name, prop in schema["properties"].items():
        is_secret = name in component.SECRET_PARAMS
        assert (prop.get("writeOnly") is True and prop.get("format") == "password") is is_secret, name
    assert set(component.SECRET_PARAMS) <= set(schema["required"])


@pytest.mark.parametrize("component", [OpenAIAPIKey, BearerToken, WebSearchAPIKey], ids=IDS)
def test_the_example_params_build_and_hold_only_dummy_secrets(component):
    credential = component(**component.EXAMPLE_PARAMS)
    assert "example" in credential.secret_values()[component.SECRET_PARAMS[0]]


@pytest.mark.parametrize("component", [OpenAIAPIKey, BearerToken, WebSearchAPIKey], ids=IDS)
def test_a_missing_or_blank_secret_is_refused_at_its_path(component):
    secret = component.SECRET_PARAMS[0]
    for params in ({}, {secret: "   "}):
        with pytest.raises(ConfigValidationError) as caught:
            validate_or_raise({"component": component.NAME, "params": params}, registry=load_components())
        assert [error.path for error in caught.value.errors] == [f"params.{secret}"]


def test_surrounding_blanks_of_a_pasted_secret_are_removed():
    assert OpenAIAPIKey(api_key=f"  {SECRET}\n").secret_values() == {"api_key": SECRET}


def test_web_search_providers_are_a_closed_list_defaulting_to_brave():
    assert WebSearchAPIKey(api_key=SECRET).params.provider == "brave"
    with pytest.raises(ConfigValidationError) as caught:
        WebSearchAPIKey(api_key=SECRET, provider="bing")
    assert caught.value.errors[0].path == "params.provider"


def test_a_bearer_token_goes_in_the_authorization_header_with_its_scheme_or_bare_elsewhere():
    assert BearerToken(token=SECRET).header_value() == ("Authorization", f"Bearer {SECRET}")
    assert BearerToken(token=SECRET, header="X-Api-Key").header_value() == ("X-Api-Key", SECRET)
    with pytest.raises(ConfigValidationError):
        BearerToken(token=SECRET, header="Bad Header: x")


def test_a_credential_type_must_declare_exactly_its_secret_params():
    with pytest.raises(TypeError, match="SECRET_PARAMS must list exactly its SecretStr parameters"):
        class Leaky(CredentialComponent):  # noqa: F841
            class Params(BaseParams):
                password: Secret = param(title=ml("Password"))
