"""Trying retrieval before chatting, in a real browser against the server as `make run` starts it:
a knowledge base's "Try retrieval", golden questions attached to a pipeline, its live quality
re-scored when BM25's k1 changes (with the change against the saved tree), and "Try this node" on
a fusion child showing why each hit ranks where it does."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

import jobs
from knowledge.services import documents_upload, knowledge_base_create
from pipelines.services import pipeline_create

from .asgi_server import asgi_server  # noqa: F401
from .conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DOCUMENTS = {
    "cells.txt": "The mitochondria produces ATP, the energy currency of the cell, through respiration. "
                 "Ribosomes translate messenger RNA into proteins.",
    "rust.txt": "Rust guarantees memory safety without a garbage collector through ownership and borrowing. "
                "Cargo is Rust's package manager and build tool; cargo builds crates.",
    "travel.txt": "Machu Picchu is an Inca citadel high in the Andes of Peru. "
                  "The Eiffel Tower in Paris was completed in 1889.",
}
HYBRID = {"component": "EnsembleRetriever", "params": {"fusion": "rrf", "top_k": 5, "children": [
    {"component": "BM25Retriever", "params": {"top_k": 5}},
    {"component": "DenseEmbeddingRetriever", "params": {"top_k": 5}},
]}}


def card(page, component: str):
    return page.locator(f'.tree-card[data-component="{component}"]')


def test_retrieval_is_tried_and_scored_live_while_the_tree_is_edited(asgi_server, page, ada, screenshot):  # noqa: F811
    knowledge_base = knowledge_base_create(owner=ada, name="Field notes")
    documents_upload(knowledge_base=knowledge_base, files=[SimpleUploadedFile(name, text.encode())
                                                           for name, text in DOCUMENTS.items()])
    assert jobs.wait_until_idle(180)
    knowledge_base.refresh_from_db()
    pipeline = pipeline_create(owner=ada, name="Hybrid notes", knowledge_base=knowledge_base,
                               strategy={"component": "NaiveRAG", "params": {"retriever": HYBRID}})
    sign_in(page, asgi_server())

    # The knowledge base's own playground: the default preset, scores on a named scale.
    page.get_by_role("link", name="Knowledge bases").click()
    page.get_by_role("link", name="Field notes").click()
    playground = page.get_by_role("region", name="Try retrieval")
    playground.get_by_role("textbox").fill("When was the Eiffel Tower completed?")
    playground.get_by_role("button", name="Try").click()
    first = playground.locator(".playground-hit").first
    expect(first).to_contain_text("travel.txt")
    expect(first.get_by_test_id("hit-score")).to_contain_text("fused score")
    first.get_by_text("Why here?").click()
    expect(first.get_by_text(re.compile(r"BM25 keyword retriever ranked it #1"))).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    screenshot("playground", docs=True)

    # Golden questions attached in the builder.
    page.goto(f"{page.url.split('/knowledge-bases')[0]}/pipelines/{pipeline.pk}")
    quality = page.get_by_role("region", name="Live quality")
    quality.get_by_role("button", name="Attach a test set").click()
    dialog = page.get_by_role("dialog", name="Test set")
    dialog.get_by_label("Question 1").fill("cargo crates build tool")
    dialog.get_by_label("Documents that should come back").select_option(label="rust.txt")
    dialog.get_by_role("button", name="Add a question").click()
    dialog.get_by_label("Question 2").fill("Inca citadel in the Andes")
    dialog.get_by_label("Documents that should come back").nth(1).select_option(label="travel.txt")
    dialog.get_by_role("button", name="Save").click()
    expect(quality.get_by_test_id("test-set-summary")).to_have_text("2 golden questions")
    expect(quality.get_by_test_id("quality-ndcg_at_10")).to_contain_text(re.compile(r"nDCG@10\s*1\.000"))
    expect(quality.get_by_test_id("change-ndcg_at_10")).to_contain_text("within noise")

    # Changing BM25's k1 re-scores the edited tree against the saved one.
    card(page, "BM25Retriever").locator(".tree-card__main").click()
    inspector = page.get_by_role("complementary", name="Selected component")
    with page.expect_request(lambda request: request.url.endswith("/api/v1/evaluations/live/")) as scored:
        inspector.get_by_label("k1 (term saturation)").fill("0.4")
    body = json.loads(scored.value.post_data)
    assert body["retriever"]["params"]["children"][0]["params"]["k1"] == 0.4
    assert body["baseline"]["params"]["children"][0]["params"]["k1"] == 1.5
    expect(quality.get_by_test_id("quality-running")).to_have_count(0)
    expect(quality.get_by_test_id("change-ndcg_at_10")).to_contain_text("vs saved")
    expect(quality.get_by_test_id("quality-recall_at_10")).to_contain_text("Recall@10")
    page.evaluate("window.scrollTo(0, 0)")
    screenshot("builder-quality", docs=True)

    # "Try this node" on the fusion's BM25 child: the terms that made its score.
    inspector.get_by_text("Try this node").click()
    inspector.get_by_role("textbox", name=re.compile("Ask a question of this node alone")).fill("cargo build tool")
    inspector.get_by_role("button", name="Try").click()
    hit = inspector.locator(".playground-hit").first
    expect(hit).to_contain_text("rust.txt")
    expect(hit.get_by_test_id("hit-score")).to_contain_text("BM25 score")
    hit.get_by_text("Why here?").click()
    expect(hit.get_by_role("row", name=re.compile(r"^cargo"))).to_be_visible()
    expect(hit.get_by_test_id("terms-total")).to_have_text(hit.get_by_test_id("hit-score").inner_text().split()[-1])
