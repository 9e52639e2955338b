"""The int8 default and the PyTorch all-MiniLM-L6-v2 share one vector index per knowledge base;
any other model gets an index of its own, so vectors of different models never mix."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

import jobs
from knowledge.models import VectorIndex
from knowledge.runtime import retriever_infra
from knowledge.services import documents_upload, knowledge_base_create
from pipelines.selectors import pipeline_readiness
from pipelines.services import pipeline_create
from rag.components import load_components
from rag.core import build

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DOCUMENTS = {
    "festival.txt": "The Zorblax lantern festival is held in Quillon every March, on the first full moon of spring.",
    "vault.txt": "The bank of Quillon keeps its money in a vault under the market square.",
}


def dense(embedding: dict) -> dict:
    return {"component": "NaiveRAG", "params": {"retriever": {"component": "DenseEmbeddingRetriever", "params": {
        "top_k": 2, "embedding_model": embedding}}}}


def test_a_pytorch_retriever_searches_the_int8_index_and_another_model_builds_its_own(owner):
    knowledge_base = knowledge_base_create(owner=owner, name="Quillon")
    assert knowledge_base.embedding_model["component"] == "AllMiniLML6V2OnnxEmbedding"
    documents_upload(knowledge_base=knowledge_base, files=[SimpleUploadedFile(name, text.encode())
                                                           for name, text in DOCUMENTS.items()])
    assert jobs.wait_until_idle(180)
    knowledge_base.refresh_from_db()
    (index,) = knowledge_base.vector_indexes.all()
    assert (index.model_key, index.status) == ("all-minilm-l6-v2", VectorIndex.Status.READY)

    pytorch = pipeline_create(owner=owner, name="PyTorch", knowledge_base=knowledge_base,
                              strategy=dense({"component": "AllMiniLML6V2Embedding", "params": {}}))
    assert knowledge_base.vector_indexes.count() == 1, "the PyTorch model asked for a second index"
    assert pipeline_readiness(pytorch).ready
    retriever = build(pytorch.strategy["params"]["retriever"], kind="retriever", registry=load_components(),
                      infra=retriever_infra(knowledge_base))
    chunks, _ = retriever.retrieve("When is the lantern festival?")
    names = {document.pk: document.name for document in knowledge_base.documents.all()}
    assert names[chunks[0].document_id] == "festival.txt"

    e5 = pipeline_create(owner=owner, name="E5", knowledge_base=knowledge_base,
                         strategy=dense({"component": "MultilingualE5SmallEmbedding", "params": {}}))
    assert not pipeline_readiness(e5).ready
    assert jobs.wait_until_idle(180)
    keys = sorted(knowledge_base.vector_indexes.values_list("model_key", "status"))
    assert keys == [("all-minilm-l6-v2", "ready"), ("multilingual-e5-small-q4", "ready")]
    assert pipeline_readiness(e5).ready
