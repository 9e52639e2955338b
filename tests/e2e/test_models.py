"""The Models page in Chromium, on Trellis served as make run serves it: a cross-encoder
installed from a hub (the loopback one of tests/support/fake_hub.py, HF_ENDPOINT pointed at it)
with its progress live, after which the cross-encoder preset is offered in the builder."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from knowledge.services import knowledge_base_create

from .asgi_server import asgi_server  # noqa: F401
from .conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

INSTALL_TIMEOUT_MS = 120_000
PAGE_TIMEOUT_MS = 30_000  # the first page while the server warms the local LLM on a busy machine


def preset_card(page):
    page.get_by_role("navigation").get_by_role("link", name="Pipelines").click()
    page.get_by_role("button", name="New pipeline").click()
    dialog = page.get_by_role("dialog", name="New pipeline")
    card = dialog.locator("label.template-card", has_text="Hybrid + cross-encoder")
    expect(card).to_be_visible(timeout=30_000)  # the templates are validated against the installed models
    return dialog, card


def test_a_cross_encoder_installed_from_the_models_page_makes_its_preset_appear(
        asgi_server, page, ada, fake_hub, tiny_model_folders, tmp_path, screenshot):  # noqa: F811
    fake_hub.add_repo("acme/tiny-ce", Path(tiny_model_folders["cross-encoder"]), license="apache-2.0")
    fake_hub.delay_s = 0.4  # slow enough to watch the bytes arrive
    knowledge_base_create(owner=ada, name="Field notes")
    url = asgi_server(HF_ENDPOINT=fake_hub.url, TRELLIS_MODELS_DIR=str(tmp_path / "models"))
    sign_in(page, url)
    expect(page.get_by_role("heading", name="Knowledge bases", level=1)).to_be_visible(timeout=PAGE_TIMEOUT_MS)

    # Before: the preset says what it lacks.
    dialog, card = preset_card(page)
    expect(card.locator(".template-card__warning")).to_contain_text("Models page")
    dialog.get_by_role("button", name="Cancel").click()

    page.get_by_role("navigation").get_by_role("link", name="Models").click()
    expect(page.get_by_role("heading", name="Models", level=1)).to_be_visible()
    cross_encoders = page.locator('section[data-kind="cross-encoder"]')
    expect(cross_encoders.get_by_text("No cross-encoder installed")).to_be_visible()
    expect(page.locator('section[data-kind="embedding"] li[data-model-name="all-minilm-l6-v2-int8"]')).to_be_visible()

    page.get_by_role("button", name="Install a model").click()
    dialog = page.get_by_role("dialog", name="Install a model")
    dialog.get_by_label("Model id on the hub").fill("acme/tiny-ce")
    expect(dialog.get_by_label("Name (optional)")).to_have_attribute("placeholder", "tiny-ce")
    dialog.get_by_label("Kind").select_option("cross-encoder")
    dialog.get_by_role("button", name="Install", exact=True).click()

    install = page.locator('.install-list li[data-install-name="tiny-ce"]')
    expect(install.get_by_role("progressbar", name="Installing tiny-ce")).to_be_visible(timeout=INSTALL_TIMEOUT_MS)
    expect(install.locator('.badge[data-status="downloading"]')).to_be_visible(timeout=INSTALL_TIMEOUT_MS)
    expect(page.get_by_text("Live", exact=True)).to_be_visible()
    screenshot("models-installing")
    expect(install.locator('.badge[data-status="ready"]')).to_be_visible(timeout=INSTALL_TIMEOUT_MS)
    model = cross_encoders.locator('li[data-model-name="tiny-ce"]')
    expect(model).to_be_visible()
    expect(model.get_by_text("From the hub")).to_be_visible()
    expect(model.locator('[data-preset="hybrid-cross-encoder"].chip--accent')).to_have_text("preset Hybrid + cross-encoder")
    screenshot("models", docs=True)

    # After: the preset is offered, without a warning, and opens valid in the builder.
    dialog, card = preset_card(page)
    expect(card.locator(".template-card__warning")).to_have_count(0)
    card.click()
    dialog.get_by_role("button", name="Open in the builder").click()
    expect(page.locator(".editor__status").get_by_text("Valid", exact=True)).to_be_visible()
    expect(page.locator('.tree-card[data-component="SentenceTransformerCrossEncoderRetriever"]')).to_contain_text("tiny-ce")
