"""Building a nested agentic tree from nothing in a real browser, as a first-time user does: every
card reads well at every step (no empty separators, no class names, nothing missing), each
unfinished slot says what to do, the agentic node shows the prompt and model that apply, and the
console stays clean of errors throughout: the live validation answers 200 with the problems."""

import re

import pytest
from playwright.sync_api import expect

from knowledge.services import knowledge_base_create
from rag.components import load_components

from .asgi_server import asgi_server  # noqa: F401
from .conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# What must never show on a card: an unfilled placeholder, a separator with nothing between, or
# a registry name where a person's word belongs.
CLASS_NAMES = [component.NAME for component in load_components()
               if component.get_short_name().get("en") != component.NAME]
BROKEN = re.compile(r"⟨|\?⟩|[·→]\s*[·→]|^\s*[·→]|[·→]\s*$|" + "|".join(rf"\b{name}\b" for name in CLASS_NAMES))


def card(page, component: str):
    return page.locator(f'.tree-card[data-component="{component}"]')


def cards_read_well(page) -> None:
    texts = page.locator(".tree-card__representation").all_inner_texts()
    assert texts, "no card is drawn"
    broken = [text for text in texts if BROKEN.search(text)]
    assert not broken, f"cards that read badly: {broken}"


def add(page, slot: str, component: str) -> None:
    page.get_by_role("button", name=f"Add to {slot}").click()
    page.get_by_role("dialog", name=f"Add to {slot}").get_by_role("button", name=component).click()


def test_a_nested_agentic_tree_built_from_scratch_reads_well_at_every_step_with_a_clean_console(
    asgi_server, page, ada, screenshot  # noqa: F811
):
    knowledge_base_create(owner=ada, name="Field notes")
    sign_in(page, asgi_server())
    page.get_by_role("link", name="Pipelines").click()
    page.get_by_role("button", name="New pipeline").click()
    dialog = page.get_by_role("dialog", name="New pipeline")
    dialog.get_by_label("Name", exact=True).fill("Agentic from scratch")
    dialog.locator("label.template-card", has_text="Empty").click()
    dialog.get_by_role("button", name="Open in the builder").click()
    status = page.locator(".editor__status")

    # The strategy alone: what it has, and what to do next.
    expect(card(page, "NaiveRAG")).to_contain_text("Naive RAG · Local model")
    expect(page.get_by_role("group", name="Retriever").get_by_text("Add a retriever here")).to_be_visible()
    expect(status.get_by_text("1 problem")).to_be_visible()
    cards_read_well(page)

    page.get_by_role("button", name="Choose: Retriever").click()
    page.get_by_role("dialog").get_by_role("button", name="Agentic ensemble").click()
    expect(card(page, "AgenticEnsembleRetriever")).to_contain_text("Agentic · rounds ≤ 3 · pool 10")
    expect(card(page, "NaiveRAG")).to_contain_text("Naive RAG · Agentic → Local model")
    consult = page.get_by_role("group", name="Retrievers the LLM may consult")
    expect(consult.get_by_text("Agentic needs at least 1 retriever")).to_be_visible()
    cards_read_well(page)
    screenshot("builder-agentic-fresh")

    # The prompt and the model that apply are shown, and can be changed.
    inspector = page.get_by_role("complementary", name="Selected component")
    expect(inspector.get_by_role("heading", name="Agentic ensemble")).to_be_visible()
    expect(inspector.get_by_label("Prompt")).to_have_value("AgenticEnsemblePrompt")
    expect(inspector.get_by_label("Language model")).to_have_value("LocalLLM")
    expect(inspector.get_by_label("Language model").locator("option:checked")).to_have_text("Local model (llama.cpp)")

    add(page, "Retrievers the LLM may consult", "Fusion (ensemble)")
    expect(card(page, "EnsembleRetriever")).to_contain_text("Fusion · RRF · top 10")
    expect(card(page, "AgenticEnsembleRetriever")).to_contain_text("Agentic · Fusion · rounds ≤ 3 · pool 10")
    fuse = page.get_by_role("group", name="Retrievers to fuse")
    expect(fuse.get_by_text("Fusion needs at least 2 retrievers")).to_be_visible()
    cards_read_well(page)

    add(page, "Retrievers to fuse", "BM25 keyword retriever")
    expect(card(page, "EnsembleRetriever")).to_contain_text("Fusion · RRF · BM25 · top 10")
    expect(fuse.get_by_text("Fusion needs at least 2 retrievers")).to_be_visible()
    cards_read_well(page)

    add(page, "Retrievers to fuse", "Dense semantic retriever")
    add(page, "Retrievers the LLM may consult", "BM25 keyword retriever")
    expect(card(page, "EnsembleRetriever")).to_contain_text("Fusion · RRF · BM25, Dense · top 10")
    expect(card(page, "AgenticEnsembleRetriever")).to_contain_text("Agentic · Fusion, BM25 · rounds ≤ 3 · pool 10")
    expect(card(page, "DenseEmbeddingRetriever")).to_contain_text("Dense · knowledge base model · cosine · top 10")
    expect(status.get_by_text("Valid", exact=True)).to_be_visible()
    expect(page.locator(".tree-slot__errors")).to_have_count(0)
    cards_read_well(page)

    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("“Agentic from scratch” saved.")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/pipelines/\d+$"))
    card(page, "AgenticEnsembleRetriever").locator(".tree-card__main").click()
    screenshot("builder-agentic")

    # The pipelines list says the same in the server's words.
    page.get_by_role("link", name="Pipelines", exact=True).first.click()
    expect(page.get_by_text("Naive RAG · Agentic → Local model")).to_be_visible()
