"""Live quality in the builder, through the API over a real knowledge base: a pipeline's test set
(golden questions or an evaluation dataset over the same knowledge base), the scores of an edited
tree with intervals, its change against the saved tree, and no language model without consent."""

import pytest
from django.urls import reverse

from evaluation.models import EvaluationDataset
from knowledge.models import Document
from knowledge.services import knowledge_base_create
from pipelines.services import pipeline_create
from tests.support.knowledge import ingested_knowledge_base

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DOCUMENTS = {
    "cells.txt": "The mitochondria produces ATP, the energy currency of the cell, through respiration.",
    "rust.txt": "Rust guarantees memory safety without a garbage collector through ownership and borrowing.",
    "travel.txt": "Machu Picchu is an Inca citadel high in the Andes of Peru. The Eiffel Tower is in Paris.",
}
BM25 = {"component": "BM25Retriever", "params": {"top_k": 3}}
DENSE = {"component": "DenseEmbeddingRetriever", "params": {"top_k": 3}}
LIVE = reverse("evaluation-live")


@pytest.fixture
def knowledge_base(owner):
    return ingested_knowledge_base(owner, DOCUMENTS)


@pytest.fixture
def document(knowledge_base):
    return {row.name: row.pk for row in Document.objects.filter(knowledge_base=knowledge_base)}


@pytest.fixture
def pipeline(owner, knowledge_base):
    return pipeline_create(owner=owner, name="Keyword", knowledge_base=knowledge_base,
                           strategy={"component": "NaiveRAG", "params": {"retriever": BM25}})


def score(api, knowledge_base, **body):
    return api.post(LIVE, {"knowledge_base": knowledge_base.pk, **body}, content_type="application/json")


def test_a_pipelines_golden_questions_are_kept_and_refused_with_each_problem_at_its_path(
        api, stranger_api, pipeline, document):
    url = reverse("pipeline-test-set", args=[pipeline.pk])
    assert api.get(url).json() == {"test_set": None}
    golden = {"questions": [{"question": "What makes ATP?", "documents": [document["cells.txt"]]}]}
    assert api.put(url, {"test_set": golden}, content_type="application/json").status_code == 200
    assert api.get(url).json() == {"test_set": golden}

    refused = api.put(url, {"test_set": {"questions": [
        {"question": "", "documents": [document["rust.txt"]]},
        {"question": "Where is Machu Picchu?", "documents": [999999]},
    ]}}, content_type="application/json")
    assert refused.status_code == 400
    assert {error["path"] for error in refused.json()["errors"]} == {
        "test_set.questions[0].question", "test_set.questions[1].documents"}
    assert api.get(url).json() == {"test_set": golden}  # the refused one changed nothing

    assert stranger_api.get(url).status_code == 404
    assert api.delete(url).status_code == 204 and api.get(url).json() == {"test_set": None}


def test_the_edited_tree_is_scored_with_intervals_and_its_change_against_the_saved_one(api, knowledge_base, document):
    # Golden questions whose documents share no word with them: BM25 cannot find them; dense,
    # returning all three documents, always does.
    golden = {"questions": [
        {"question": "Which organelle powers living bodies?", "documents": [document["cells.txt"]]},
        {"question": "famous landmarks tourists visit abroad", "documents": [document["travel.txt"]]},
    ]}
    answer = score(api, knowledge_base, retriever=DENSE, baseline=BM25, test_set=golden)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["questions"] == 2 and body["llm_calls"] == 0
    assert body["metrics"]["recall_at_10"]["value"] == 1.0
    assert body["baseline"]["recall_at_10"]["value"] == 0.0
    change = body["change"]["recall_at_10"]
    assert change["difference"] == 1.0 and change["ci"] == [1.0, 1.0] and not change["within_noise"]
    low, high = body["metrics"]["ndcg_at_10"]["ci"]
    assert low <= body["metrics"]["ndcg_at_10"]["value"] <= high

    same = score(api, knowledge_base, retriever=BM25, baseline=BM25, test_set=golden).json()
    assert same["change"]["ndcg_at_10"]["difference"] == 0.0 and same["change"]["ndcg_at_10"]["within_noise"]


def test_an_evaluation_dataset_over_the_same_knowledge_base_is_a_test_set_and_one_over_another_is_refused(
        api, owner, knowledge_base, document):
    corpus = {str(document[name]): f"c-{name}" for name in DOCUMENTS}
    dataset = EvaluationDataset.objects.create(
        owner=owner, name="tiny", source="upload:tiny.zip", knowledge_base=knowledge_base,
        queries=[{"id": "q1", "text": "memory safety without garbage collection", "answers": []},
                 {"id": "q2", "text": "unjudged", "answers": []}],
        qrels={"q1": {"c-rust.txt": 1}}, corpus_ids=corpus, query_count=1)
    body = score(api, knowledge_base, retriever=BM25, test_set={"dataset": dataset.pk}).json()
    assert body["questions"] == 1 and body["metrics"]["ndcg_at_10"]["value"] == 1.0 and body["change"] is None

    elsewhere = knowledge_base_create(owner=owner, name="Elsewhere")
    refused = score(api, elsewhere, retriever=BM25, test_set={"dataset": dataset.pk})
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["path"] == "test_set.dataset"
    assert refused.json()["errors"][0]["code"] == "dataset_elsewhere"


def test_a_tree_with_a_language_model_is_scored_only_with_consent(api, knowledge_base, document):
    golden = {"questions": [{"question": "ATP", "documents": [document["cells.txt"]]}]}
    tree = {"component": "LLMRerankRetriever", "params": {"children": [BM25]}}
    refused = score(api, knowledge_base, retriever=tree, test_set=golden)
    assert refused.status_code == 409
    assert [model["path"] for model in refused.json()["language_models"]] == ["retriever.params.llm_model"]


def test_another_users_knowledge_base_cannot_be_scored(stranger_api, knowledge_base, document):
    golden = {"questions": [{"question": "ATP", "documents": [document["cells.txt"]]}]}
    refused = score(stranger_api, knowledge_base, retriever=BM25, test_set=golden)
    assert refused.status_code == 400 and refused.json()["errors"][0]["path"] == "knowledge_base"
