"""The Credentials page in Chromium, on Trellis served as make run serves it: a user adds an API
key, sees which pipeline uses it, rotates it (the pipeline's next run sends the new key), reads
the page in three languages, and removes the key after being told what uses it. An
administrator's shared credential is listed beside theirs, read-only."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from credentials import services as credentials
from credentials.models import Credential
from knowledge.services import knowledge_base_create
from pipelines.services import pipeline_create

from .asgi_server import asgi_server  # noqa: F401
from .conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PAGE_TIMEOUT_MS = 30_000  # the first page while the server warms the local LLM on a busy machine
SECRET = "sk-live-Q7vX2pL9mZ4rT8wK3nB6yH1a1b2"
NEW_SECRET = "sk-live-J5cD8fG2hK6mN9pR3tV7xZ1c3d4"
GATEWAY = "https://gateway.example/v1"  # allowed by name in the tests' TRELLIS_OUTBOUND_ALLOW


def answering_through(credential: str) -> dict:
    llm = {"component": "OpenAICompatibleLLM", "params": {"base_url": GATEWAY, "model": "m", "credential": credential}}
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm}}}}


def test_a_user_adds_rotates_and_removes_a_credential_and_sees_where_it_is_used(
        asgi_server, page, ada, django_user_model, screenshot):  # noqa: F811
    root = django_user_model.objects.create_superuser(username="root", password=None)
    team = credentials.credential_create(owner=root, name="team-search", kind="WebSearchAPIKey",
                                         values={"provider": "tavily", "api_key": "tvly-team-0000000000009f0e"},
                                         shared=True)
    credentials.credential_grant(credential=team, users=[ada])
    knowledge_base = knowledge_base_create(owner=ada, name="Field notes")
    url = asgi_server()
    sign_in(page, url)
    expect(page.get_by_role("heading", name="Knowledge bases", level=1)).to_be_visible(timeout=PAGE_TIMEOUT_MS)

    page.get_by_role("navigation").get_by_role("link", name="Credentials").click()
    expect(page.get_by_role("heading", name="Credentials", level=1)).to_be_visible()
    shared = page.locator('li[data-credential-name="team-search"]')
    expect(shared.get_by_text("Shared by the administrator")).to_be_visible()
    expect(shared.get_by_role("button")).to_have_count(0)

    # Add: the value goes into a password field and is never shown again.
    page.get_by_role("button", name="Add credential").click()
    dialog = page.get_by_role("dialog", name="Add a credential")
    expect(dialog.get_by_label("Kind")).to_have_value("OpenAIAPIKey")
    dialog.get_by_label("Name", exact=True).fill("openai-main")
    key = dialog.get_by_label("API key")
    expect(key).to_have_attribute("type", "password")
    key.fill(SECRET)
    dialog.get_by_label("Base URL").fill(GATEWAY)
    dialog.get_by_role("button", name="Save credential").click()
    expect(dialog).to_be_hidden()
    mine = page.locator('li[data-credential-name="openai-main"]')
    expect(mine.get_by_text("sk-…a1b2")).to_be_visible()
    expect(mine.get_by_text(GATEWAY)).to_be_visible()
    expect(mine.get_by_text("Not used by any of your pipelines or knowledge bases.")).to_be_visible()
    assert SECRET not in page.content()

    # A pipeline that names it is listed under it, as a link to the pipeline.
    pipeline = pipeline_create(owner=ada, name="Hosted answers", knowledge_base=knowledge_base,
                               strategy=answering_through("openai-main"))
    page.reload()
    link = mine.get_by_role("link", name="Hosted answers")
    expect(link).to_have_attribute("href", f"/pipelines/{pipeline.pk}")

    # Rotate: same name, so the pipeline keeps it; its next run sends the new key.
    mine.get_by_role("button", name="Rotate “openai-main”").click()
    dialog = page.get_by_role("dialog", name="Rotate “openai-main”")
    new_value = dialog.get_by_label("API key (new value)")
    expect(new_value).to_have_attribute("type", "password")
    new_value.fill(NEW_SECRET)
    dialog.get_by_role("button", name="Rotate").click()
    expect(dialog).to_be_hidden()
    expect(mine.get_by_text("sk-…c3d4")).to_be_visible()
    expect(mine.get_by_text("rotated", exact=False)).to_be_visible()
    assert NEW_SECRET not in page.content()
    assert credentials.credential_resolve(user=ada, name="openai-main").secret_values() == {"api_key": NEW_SECRET}
    page.reload()  # the page as it reads afterwards: the use just recorded, no toast over it
    expect(mine.get_by_text("last used", exact=False)).to_be_visible()
    screenshot("credentials", docs=True)

    # The page in Spanish and in Chinese, then back.
    page.get_by_role("combobox", name="Language").select_option("es")
    expect(page.get_by_role("heading", name="Credenciales", level=1)).to_be_visible()
    expect(page.get_by_role("navigation").get_by_role("link", name="Credenciales")).to_be_visible()
    expect(shared.get_by_text("Compartida por el administrador")).to_be_visible()
    expect(mine.get_by_text("Usada por")).to_be_visible()
    expect(mine.get_by_role("button", name="Rotar «openai-main»")).to_be_visible()
    page.get_by_role("combobox", name="Idioma").select_option("zh-Hant")
    expect(page.get_by_role("heading", name="憑證", level=1)).to_be_visible()
    expect(shared.get_by_text("由管理員共用")).to_be_visible()
    expect(mine.get_by_role("button", name="移除「openai-main」")).to_be_visible()
    page.get_by_role("combobox", name="語言").select_option("en")
    expect(page.get_by_role("heading", name="Credentials", level=1)).to_be_visible()

    # Remove: the dialog says what uses it before removing it anyway.
    mine.get_by_role("button", name="Remove “openai-main”").click()
    dialog = page.get_by_role("dialog", name="Remove “openai-main”?")
    expect(dialog.get_by_text("It is used by 1 of your pipelines")).to_be_visible()
    expect(dialog.get_by_role("link", name="Hosted answers")).to_be_visible()
    dialog.get_by_role("button", name="Remove anyway").click()
    expect(mine).to_have_count(0)
    expect(page.get_by_text("Removed “openai-main”.")).to_be_visible()
    assert list(Credential.objects.values_list("name", flat=True)) == ["team-search"]
