"""The retrieval playground over a real knowledge base (SQLite, Chroma, saved BM25 index): what
each retriever kind returns, why (scores that add up), who may ask, and no language model without
consent."""

import pytest
from django.urls import reverse

from pipelines.services import pipeline_create
from rag.presets import default_retriever
from tests.support.knowledge import ingested_knowledge_base

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BM25 = {"component": "BM25Retriever", "params": {"top_k": 3}}
DENSE = {"component": "DenseEmbeddingRetriever", "params": {"top_k": 3}}


@pytest.fixture
def knowledge_base(owner):
    return ingested_knowledge_base(owner, chunker={
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 120, "chunk_overlap": 0}})


def try_retriever(api, knowledge_base, **body):
    return api.post(reverse("knowledge-base-playground", args=[knowledge_base.pk]), body,
                    content_type="application/json")


def test_bm25_shows_each_terms_part_and_the_parts_add_up_to_the_score(api, knowledge_base):
    answer = try_retriever(api, knowledge_base, question="Rust memory safety and the Rust package manager",
                           retriever=BM25)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["score_scale"] == "bm25" and body["trace"]["score_scale"] == "bm25"
    first = body["results"][0]
    assert first["document_name"] == "rust.txt" and first["rank"] == 1 and "Rust" in first["text"]
    terms = first["explanation"]["terms"]
    assert sum(term["contribution"] for term in terms) == pytest.approx(first["score"], rel=1e-9)
    assert {term["term"] for term in terms if term["term_frequency"]} >= {"rust"}
    assert next(term for term in terms if term["term"] == "rust")["query_count"] == 2


def test_dense_scores_are_cosine_similarities(api, knowledge_base):
    body = try_retriever(api, knowledge_base, question="Which organelle makes the cell's energy?",
                         retriever=DENSE).json()
    assert body["score_scale"] == "cosine"
    assert body["results"][0]["document_name"] == "cells.txt"
    assert all(-1.0 <= row["score"] <= 1.0 for row in body["results"])
    assert [row["score"] for row in body["results"]] == sorted((row["score"] for row in body["results"]), reverse=True)


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_fusion_shows_each_childs_rank_and_part_of_the_fused_score(api, knowledge_base, fusion):
    tree = {"component": "EnsembleRetriever", "params": {"fusion": fusion, "top_k": 4, "children": [BM25, DENSE]}}
    body = try_retriever(api, knowledge_base, question="When was the Eiffel Tower completed?", retriever=tree).json()
    assert body["score_scale"] == fusion
    assert body["results"][0]["document_name"] == "travel.txt"
    for row in body["results"]:
        sources = row["explanation"]["sources"]
        assert sum(source["contribution"] for source in sources) == pytest.approx(row["score"])
        assert {source["component"] for source in sources} <= {"BM25Retriever", "DenseEmbeddingRetriever"}
        assert all(source["score_scale"] in {"bm25", "cosine"} and source["rank"] >= 1 for source in sources)


def test_without_a_tree_the_knowledge_base_is_tried_with_the_default_preset(api, knowledge_base):
    body = try_retriever(api, knowledge_base, question="Inca citadel in Peru", top_k=2).json()
    assert body["trace"]["class"] == default_retriever()["component"]
    assert len(body["results"]) == 2 and body["results"][0]["document_name"] == "travel.txt"


def test_a_pipeline_is_tried_with_its_saved_retriever_or_the_node_being_edited(api, owner, knowledge_base):
    pipeline = pipeline_create(owner=owner, name="Keyword", knowledge_base=knowledge_base, strategy={
        "component": "NaiveRAG", "params": {"retriever": BM25}})
    url = reverse("pipeline-playground", args=[pipeline.pk])
    saved = api.post(url, {"question": "Cargo build tool"}, content_type="application/json").json()
    assert saved["trace"]["class"] == "BM25Retriever"
    edited = api.post(url, {"question": "Cargo build tool", "retriever": DENSE}, content_type="application/json")
    assert edited.json()["trace"]["class"] == "DenseEmbeddingRetriever"


def test_another_users_knowledge_base_or_pipeline_is_not_found(api, stranger_api, owner, knowledge_base):
    pipeline = pipeline_create(owner=owner, name="Keyword", knowledge_base=knowledge_base, strategy={
        "component": "NaiveRAG", "params": {"retriever": BM25}})
    assert try_retriever(stranger_api, knowledge_base, question="Rust").status_code == 404
    assert stranger_api.post(reverse("pipeline-playground", args=[pipeline.pk]), {"question": "Rust"},
                             content_type="application/json").status_code == 404


def test_a_tree_that_calls_a_language_model_does_not_run_without_consent(api, knowledge_base):
    tree = {"component": "LLMRerankRetriever", "params": {"children": [BM25]}}
    refused = try_retriever(api, knowledge_base, question="Rust", retriever=tree)
    assert refused.status_code == 409
    body = refused.json()
    assert body["errors"][0]["code"] == "llm_consent" and body["errors"][0]["path"] == "allow_llm"
    assert [node["path"] for node in body["language_models"]] == ["retriever.params.llm_model"]


def test_an_invalid_tree_is_refused_with_every_error_at_its_path(api, knowledge_base):
    tree = {"component": "EnsembleRetriever", "params": {"top_k": 0, "children": [
        {"component": "BM25Retriever", "params": {"k1": -1}}, {"component": "Nope"}]}}
    refused = try_retriever(api, knowledge_base, question="Rust", retriever=tree)
    assert refused.status_code == 400
    paths = {error["path"] for error in refused.json()["errors"]}
    assert {"retriever.params.top_k", "retriever.params.children[0].params.k1",
            "retriever.params.children[1].component"} <= paths


def test_spanish_users_read_the_consent_question_in_spanish(api, knowledge_base):
    tree = {"component": "LLMRerankRetriever", "params": {"children": [BM25]}}
    refused = api.post(reverse("knowledge-base-playground", args=[knowledge_base.pk]) + "?lang=es",
                       {"question": "Rust", "retriever": tree}, content_type="application/json")
    assert "modelo de lenguaje" in refused.json()["errors"][0]["message"]


def test_a_cross_encoder_re_ranks_its_candidates_on_its_relevance_scale(api, knowledge_base, model_store,
                                                                        tiny_model_folders):
    from pathlib import Path

    model_store.install_folder(Path(tiny_model_folders["cross-encoder"]), kind="cross-encoder", name="tiny-ce")
    tree = {"component": "SentenceTransformerCrossEncoderRetriever", "params": {
        "model_name": "tiny-ce", "top_k": 2, "children": [{**BM25, "params": {"top_k": 3}}]}}
    answer = try_retriever(api, knowledge_base, question="Rust memory safety and the package manager", retriever=tree)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["score_scale"] == "relevance" and len(body["results"]) == 2
    assert all(0.0 <= row["score"] <= 1.0 for row in body["results"])
    # The candidates it re-ranked are BM25's, on their own scale.
    assert body["trace"]["children"][0]["score_scale"] == "bm25"
