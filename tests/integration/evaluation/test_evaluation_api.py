"""The evaluation API end to end: a BEIR zip imported as a knowledge base, an evaluation of a
saved pipeline and two presets run as a background job, its progress, results, report and
comparison, and owner-only access."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from chat.models import Conversation
from evaluation.models import Evaluation, EvaluationDataset
from knowledge.models import Chunk, KnowledgeBase
from pipelines.services import pipeline_create
from rag.evaluation import PipelineSpec, RunOptions, evaluate, strategy_config
from tests.support.scripted_openai import chat_stream

from ..chat.conftest import naive_pipeline
from .conftest import beir_zip, cranfield_head, wait_for_jobs

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

METRICS = {"ndcg@10", "recall@1", "recall@5", "recall@10", "recall@100", "mrr@10", "map"}
SAVED_STRATEGY = {"component": "NaiveRAG", "params": {
    "retriever": {"component": "BM25Retriever", "params": {"top_k": 5, "k1": 1.2}}}}


def upload(client, folder, dataset, name):
    archive = SimpleUploadedFile(f"{dataset.name}.zip", beir_zip(dataset, folder), "application/zip")
    return client.post(reverse("evaluation-dataset-upload"), {"name": name, "file": archive})


def create(client, **fields):
    return client.post(reverse("evaluation-list"), fields, content_type="application/json")


def test_a_beir_zip_is_imported_evaluated_in_the_background_compared_and_shown_to_its_owner_only(
        api, stranger_api, owner, tmp_path):
    head = cranfield_head(50)
    imported = upload(api, tmp_path, head, "Cranfield head")
    assert imported.status_code == 201, imported.content
    assert imported.json()["status"] in ("importing", "indexing")
    dataset_id = imported.json()["id"]
    wait_for_jobs()
    dataset = api.get(reverse("evaluation-dataset-detail", args=[dataset_id])).json()
    assert dataset["status"] == "ready", dataset
    assert dataset["documents"] == {"uploaded": 50, "ready": 50, "failed": 0, "in_progress": 0}
    assert (dataset["document_count"], dataset["query_count"], dataset["language"]) == (50, 50, "en")
    record = EvaluationDataset.objects.select_related("knowledge_base").get(pk=dataset_id)
    assert sorted(record.corpus_ids.values(), key=int) == [str(number) for number in range(1, 51)]
    assert record.qrels == head.qrels and record.qrels["1"]["29"] == 3

    saved = pipeline_create(owner=owner, name="BM25 k1 1.2", knowledge_base=record.knowledge_base,
                            strategy=SAVED_STRATEGY)
    response = create(api, dataset=dataset_id, pipelines=[saved.pk], presets=["keyword", "semantic"])
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] in ("queued", "running", "done")
    assert created["progress"]["total"] == 3 * 50
    assert [entry["name"] for entry in created["pipelines"]] == ["BM25 k1 1.2", "keyword", "semantic"]
    assert [entry["display_name"] for entry in created["pipelines"]] == ["BM25 k1 1.2", "Keyword", "Semantic"]
    wait_for_jobs()

    body = api.get(reverse("evaluation-detail", args=[created["id"]])).json()
    assert body["status"] == "done", body["error"]
    assert body["progress"] == {"done": 150, "total": 150, "queries": 50, "answers": 0}
    pipelines = body["results"]["pipelines"]
    assert [pipeline["name"] for pipeline in pipelines] == ["BM25 k1 1.2", "keyword", "semantic"]
    for pipeline in pipelines:
        assert set(pipeline["metrics"]) == METRICS and pipeline["failures"] == 0
        assert len(pipeline["per_query"]) == 50 and pipeline["metrics"]["ndcg@10"] > 0.2
        low, high = pipeline["ci"]["ndcg@10"]
        assert low <= pipeline["metrics"]["ndcg@10"] <= high
    assert [entry["name"] for entry in body["summary"]] == ["BM25 k1 1.2", "keyword", "semantic"]

    # Retrieval over the stored knowledge base scores exactly as the in-memory engine does.
    in_memory = evaluate(head, [PipelineSpec("keyword", strategy_config("keyword"))], options=RunOptions(depth=100))
    assert pipelines[1]["metrics"] == pytest.approx(in_memory["pipelines"][0]["metrics"], abs=1e-9)

    plot = api.get(body["report"]["metrics"])
    assert plot.status_code == 200 and plot["Content-Type"] == "image/png"
    assert b"".join(plot.streaming_content)[:4] == b"\x89PNG"
    markdown = b"".join(api.get(body["report"]["markdown"]).streaming_content).decode()
    # The report shows presets by their display names; its rows' names stay what the API calls them.
    assert "| Keyword | 50 |" in markdown and "| keyword |" not in markdown and "![recall@k](recall.png)" in markdown

    comparison = api.get(reverse("evaluation-comparison", args=[created["id"]])).json()
    assert [(entry["a"], entry["b"]) for entry in comparison["comparisons"]] == [
        ("BM25 k1 1.2", "keyword"), ("BM25 k1 1.2", "semantic"), ("keyword", "semantic")]
    ndcg = comparison["comparisons"][2]["metrics"]["ndcg@10"]
    assert ndcg["difference"] == pytest.approx(pipelines[1]["metrics"]["ndcg@10"] - pipelines[2]["metrics"]["ndcg@10"])
    assert 0 < ndcg["p_randomization"] <= 1 and 0 < ndcg["p_bootstrap"] <= 1

    listed = api.get(reverse("evaluation-list")).json()
    assert [entry["id"] for entry in listed] == [created["id"]] and "results" not in listed[0]

    for url in (reverse("evaluation-detail", args=[created["id"]]),
                reverse("evaluation-comparison", args=[created["id"]]),
                reverse("evaluation-report-file", args=[created["id"], "recall.png"]),
                reverse("evaluation-dataset-detail", args=[dataset_id])):
        assert stranger_api.get(url).status_code == 404, url
    assert stranger_api.delete(reverse("evaluation-detail", args=[created["id"]])).status_code == 404
    assert stranger_api.get(reverse("evaluation-list")).json() == []
    refused = create(stranger_api, dataset=dataset_id, presets=["keyword"])
    assert refused.status_code == 400 and refused.json()["errors"][0]["code"] == "not_found"
    assert Evaluation.objects.get(pk=created["id"]).status == Evaluation.Status.DONE


def test_evaluations_are_refused_without_a_ready_dataset_a_known_preset_or_a_second_pipeline(api, tmp_path):
    tiny = cranfield_head(5)
    dataset_id = upload(api, tmp_path, tiny, "Tiny").json()["id"]
    wait_for_jobs()
    unknown = create(api, dataset=dataset_id, presets=["keyword", "nope"])
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [{"path": "presets[1]", "message": "no preset named 'nope'",
                                         "code": "unknown_preset"}]
    single = create(api, dataset=dataset_id, presets=["keyword"]).json()
    wait_for_jobs()
    response = api.get(reverse("evaluation-comparison", args=[single["id"]]))
    assert response.status_code == 400 and response.json()["errors"][0]["code"] == "single_pipeline"
    EvaluationDataset.objects.filter(pk=dataset_id).update(error="the import was interrupted")
    refused = create(api, dataset=dataset_id, presets=["keyword"])
    assert refused.status_code == 400 and refused.json()["errors"][0]["code"] == "dataset_not_ready"
    assert Evaluation.objects.count() == 1

    again = upload(api, tmp_path / "again", tiny, "Tiny")
    assert again.status_code == 400 and again.json()["errors"][0]["code"] == "duplicate"
    broken = api.post(reverse("evaluation-dataset-upload"),
                      {"name": "Broken", "file": SimpleUploadedFile("x.zip", b"not a zip", "application/zip")})
    assert broken.status_code == 400 and broken.json()["errors"][0]["code"] == "invalid_dataset"


def test_shared_datasets_are_listed_and_other_names_refused(api):
    names = [entry["name"] for entry in api.get(reverse("evaluation-dataset-available")).json()]
    assert {"scifact", "cranfield", "xquad-zh"} <= set(names)
    refused = api.post(reverse("evaluation-dataset-list"), {"dataset": "../etc"}, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["code"] == "unknown_dataset"


def test_an_upload_with_a_chunker_sent_as_a_form_field_cuts_documents_and_a_bad_one_is_refused_by_path(api, tmp_path):
    """The browser sends the chunker as a JSON string inside the multipart form."""
    tiny = cranfield_head(5)

    def send(name, chunker):
        archive = SimpleUploadedFile("tiny.zip", beir_zip(tiny, tmp_path / name), "application/zip")
        return api.post(reverse("evaluation-dataset-upload"), {"name": name, "file": archive,
                                                               "chunker": json.dumps(chunker)})

    refused = send("Bad", {"component": "RecursiveCharacterChunker", "params": {"chunk_size": 0}})
    assert refused.status_code == 400, refused.content
    assert [error["path"] for error in refused.json()["errors"]] == ["chunker.params.chunk_size"]
    assert not EvaluationDataset.objects.filter(name="Bad").exists()

    accepted = send("Chunked", {"component": "RecursiveCharacterChunker",
                                "params": {"chunk_size": 200, "chunk_overlap": 20}})
    assert accepted.status_code == 201, accepted.content
    wait_for_jobs()
    record = EvaluationDataset.objects.select_related("knowledge_base").get(pk=accepted.json()["id"])
    assert record.knowledge_base.chunker["params"]["chunk_size"] == 200
    chunks = Chunk.objects.filter(document__knowledge_base=record.knowledge_base).count()
    assert chunks > len(tiny.corpus), f"{chunks} chunks for {len(tiny.corpus)} documents"


def test_an_imported_corpus_stays_under_evaluation_until_promoted_and_pipelines_on_it_keep_working(
        api, stranger_api, owner, tmp_path, scripted_openai):
    dataset_id = upload(api, tmp_path, cranfield_head(5), "cranfield-small").json()["id"]
    wait_for_jobs()
    corpus = EvaluationDataset.objects.get(pk=dataset_id).knowledge_base
    assert corpus.name == "Evaluation · cranfield-small"

    def everyday() -> list[str]:  # the knowledge base page's list and the pipeline editor's choice
        return [base["name"] for base in api.get(reverse("knowledge-base-list")).json()]

    assert everyday() == []
    assert api.get(reverse("evaluation-dataset-detail", args=[dataset_id])).json()["promoted"] is False
    opened = api.get(reverse("knowledge-base-detail", args=[corpus.pk])).json()  # the Evaluation page links to it
    assert opened["name"] == "Evaluation · cranfield-small" and opened["evaluation_only"] is True

    # A pipeline built on it before it was hidden is saved, edited and asked as before.
    saved = naive_pipeline(owner, corpus, scripted_openai, name="On the corpus")
    scripted_openai.enqueue("/v1/chat/completions", chat_stream(["The boundary layer thickens downstream [1]."]))
    edited = api.patch(reverse("pipeline-detail", args=[saved.pk]), {"name": "Still on it", "knowledge_base": corpus.pk},
                       content_type="application/json")
    assert edited.status_code == 200, edited.content
    conversation = api.post(reverse("conversation-list"), {"pipeline": saved.pk}, content_type="application/json").json()
    asked = api.post(reverse("conversation-ask", args=[conversation["id"]]),
                     {"question": "What is the boundary layer of a slender body?"}, content_type="application/json")
    assert asked.status_code == 200 and asked.json()["message_id"], asked.content
    answer = api.get(reverse("conversation-messages", args=[conversation["id"]])).json()[-1]
    assert answer["status"] == "done" and answer["chunks"], answer  # it searched the corpus and read from it
    assert {chunk["document_id"] for chunk in answer["chunks"]} <= set(corpus.documents.values_list("pk", flat=True))

    assert stranger_api.post(reverse("evaluation-dataset-promote", args=[dataset_id])).status_code == 404
    assert everyday() == []
    promoted = api.post(reverse("evaluation-dataset-promote", args=[dataset_id]))
    assert promoted.status_code == 200 and promoted.json()["promoted"] is True
    assert everyday() == ["Evaluation · cranfield-small"]
    assert stranger_api.get(reverse("knowledge-base-list")).json() == []

    # Deleting the dataset now leaves the knowledge base the user adopted (and what was built on it).
    assert api.delete(reverse("evaluation-dataset-detail", args=[dataset_id])).status_code == 204
    assert not EvaluationDataset.objects.filter(pk=dataset_id).exists()
    assert everyday() == ["Evaluation · cranfield-small"] and Conversation.objects.filter(owner=owner).exists()
    assert KnowledgeBase.objects.get(pk=corpus.pk).documents.count() == 5


def test_an_unpromoted_datasets_deletion_takes_its_corpus_with_it(api, tmp_path):
    dataset_id = upload(api, tmp_path, cranfield_head(5), "Gone").json()["id"]
    wait_for_jobs()
    corpus_id = EvaluationDataset.objects.get(pk=dataset_id).knowledge_base_id
    assert api.delete(reverse("evaluation-dataset-detail", args=[dataset_id])).status_code == 204
    assert not KnowledgeBase.objects.filter(pk=corpus_id).exists()


def test_an_empty_depth_runs_each_retriever_at_its_own_top_k_and_presets_read_in_the_request_language(api, tmp_path):
    dataset_id = upload(api, tmp_path, cranfield_head(20), "Depth").json()["id"]
    wait_for_jobs()
    response = create(api, dataset=dataset_id, presets=["keyword", "keyword"], depth=None, query_limit=4,
                      answer_queries=0)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["depth"] is None
    assert created["progress"] == {"done": 0, "total": 8, "queries": 4, "answers": 0} or created["status"] != "queued"
    wait_for_jobs()
    body = api.get(reverse("evaluation-detail", args=[created["id"]]) + "?lang=es").json()
    assert body["status"] == "done", body["error"]
    assert body["progress"] == {"done": 8, "total": 8, "queries": 4, "answers": 0}
    assert [(entry["name"], entry["display_name"]) for entry in body["pipelines"]] == [
        ("keyword", "Palabras clave"), ("keyword (2)", "Palabras clave (2)")]
    own_top_k = strategy_config("keyword")["params"]["retriever"]["params"]["top_k"]
    assert own_top_k < 100
    for pipeline in body["results"]["pipelines"]:
        assert pipeline["depth"]["asked"] == own_top_k and pipeline["depth"]["returned_max"] <= own_top_k
    assert body["results"]["settings"]["depth"] is None
    # Omitting it keeps the benchmark's depth of 100, as the API documents.
    assert create(api, dataset=dataset_id, presets=["keyword"], query_limit=1).json()["depth"] == 100
