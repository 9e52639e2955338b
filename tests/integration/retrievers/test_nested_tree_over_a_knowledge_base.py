"""A cross-encoder over RRF of dense and BM25: validated by the catalog API, built by the
factory over a real knowledge base (Chroma, saved BM25 index), answering a real query."""

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.runtime import retriever_infra
from rag.components import load_components
from rag.core import build
from tests.support.knowledge import ingested_knowledge_base
from tests.support.tiny_models import build_tiny_cross_encoder

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

def tree(model_path):
    return {"component": "SentenceTransformerCrossEncoderRetriever", "params": {
        "model_name": model_path, "top_k": 2,
        "children": [{"component": "EnsembleRetriever", "params": {"fusion": "rrf", "top_k": 4, "children": [
            {"component": "DenseEmbeddingRetriever", "params": {"top_k": 4}},
            {"component": "BM25Retriever", "params": {"top_k": 4}},
        ]}}],
    }}


def test_the_nested_tree_validates_builds_and_retrieves_from_the_right_document(user, tmp_path):
    knowledge_base = ingested_knowledge_base(user, chunker={
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 120, "chunk_overlap": 0}})
    model = build_tiny_cross_encoder(tmp_path / "cross-encoder")

    client = Client()
    client.force_login(user)
    validated = client.post(reverse("component-validate"), {"tree": tree(model), "kind": "retriever"},
                            content_type="application/json")
    assert validated.status_code == 200, validated.content
    assert [node["component"] for node in validated.json()["nodes"]] == [
        "SentenceTransformerCrossEncoderRetriever", "EnsembleRetriever", "DenseEmbeddingRetriever", "BM25Retriever",
        "BagOfWordsConverter"]

    retriever = build(validated.json()["config"], kind="retriever", registry=load_components(),
                      infra=retriever_infra(knowledge_base))
    chunks, node = retriever.retrieve("Which organelle makes the cell's energy (ATP)?")

    fusion = node["children"][0]
    dense, bm25 = fusion["children"]
    documents = {document.pk: document.name for document in knowledge_base.documents.all()}
    assert documents[fusion["results"][0]["document_id"]] == "cells.txt"
    assert documents[dense["results"][0]["document_id"]] == "cells.txt"
    assert documents[bm25["results"][0]["document_id"]] == "cells.txt"
    assert len(chunks) == 2 and {chunk.id for chunk in chunks} <= {row["chunk_id"] for row in fusion["results"]}
    assert all(0 < row["score"] < 1 for row in node["results"])
    assert {row["chunk_id"] for row in dense["results"]} <= set(retriever_infra(knowledge_base)["persistence"]
                                                             .vectors(knowledge_base.vector_indexes.get().model_key)
                                                             .chunk_ids())
