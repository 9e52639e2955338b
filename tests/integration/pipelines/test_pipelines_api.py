import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import Document, VectorIndex
from knowledge.services import knowledge_base_create
from pipelines.models import Pipeline

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

HYBRID = {"component": "EnsembleRetriever", "params": {"children": [
    {"component": "BM25Retriever", "params": {"top_k": 5}},
    {"component": "DenseEmbeddingRetriever", "params": {"top_k": 5}},
]}}


@pytest.fixture
def knowledge_base(user):
    return knowledge_base_create(owner=user, name="Notes")


@pytest.fixture
def api(user):
    client = Client()
    client.force_login(user)
    return client


def create(api, knowledge_base, strategy, name="Hybrid", **headers):
    return api.post(reverse("pipeline-list"), {"name": name, "knowledge_base": knowledge_base.pk, "strategy": strategy},
                    content_type="application/json", **headers)


def naive(retriever):
    return {"component": "NaiveRAG", "params": {"retriever": retriever}}


def test_a_valid_pipeline_is_saved_normalised_and_waits_for_documents(api, knowledge_base):
    response = create(api, knowledge_base, naive(HYBRID))
    assert response.status_code == 201, response.content
    body = response.json()
    synthesizer = body["strategy"]["params"]["response_synthesizer"]
    assert synthesizer == {"component": "ResponseSynthesizer", "params": {
        "llm": {"component": "LocalLLM", "params": body["strategy"]["params"]["response_synthesizer"]["params"]["llm"]["params"]},
        "max_input_tokens": 3000, "language": "auto", "instructions": None, "history_turns": 0,
        "max_passages": None, "max_answer_tokens": 200, "relevance_floor": None, "ask_left_out_parts": True}}
    assert body["ready"] is False
    assert body["waiting_for"] == ["the knowledge base 'Notes' has no ready document yet"]
    assert body["representation"] == "Naive RAG · Fusion → Local model"
    spanish = api.get(reverse("pipeline-detail", args=[body["id"]]), HTTP_ACCEPT_LANGUAGE="es").json()
    assert spanish["representation"] == "RAG simple · Fusión → Modelo local"
    assert spanish["waiting_for"] == ["la base de conocimiento 'Notes' aún no tiene ningún documento listo"]


def test_a_ready_pipeline_says_how_many_documents_are_still_being_read(api, knowledge_base, user):
    body = create(api, knowledge_base, naive({"component": "BM25Retriever"})).json()
    assert body["documents_reading"] == 0
    for number, status in enumerate([Document.Status.READY, Document.Status.EMBEDDING, Document.Status.QUEUED,
                                     Document.Status.FAILED]):
        Document.objects.create(owner=user, knowledge_base=knowledge_base, name=f"{number}.txt", size=1,
                                sha256=str(number) * 64, file="uploads/none", status=status)
    listed = next(item for item in api.get(reverse("pipeline-list")).json() if item["id"] == body["id"])
    detail = api.get(reverse("pipeline-detail", args=[body["id"]])).json()
    assert (listed["ready"], listed["documents_reading"]) == (True, 2)
    assert (detail["ready"], detail["documents_reading"]) == (True, 2)


def test_an_invalid_tree_is_refused_with_every_error_at_its_path(api, knowledge_base):
    broken = naive({"component": "SentenceTransformerCrossEncoderRetriever", "params": {
        "top_k": 0, "children": [{"component": "EnsembleRetriever", "params": {"children": [
            {"component": "BM25Retriever", "params": {"top_k": 0}}, {"component": "DenseEmbeddingRetriever"}]}}]}})
    response = create(api, knowledge_base, broken, HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 400
    errors = {(error["path"], error["message"]) for error in response.json()["errors"]}
    assert errors == {
        ("strategy.params.retriever.params.top_k", "debe ser ≥ 1"),
        ("strategy.params.retriever.params.children[0].params.children[0].params.top_k", "debe ser ≥ 1"),
    }
    assert not Pipeline.objects.exists()


def test_a_component_that_cannot_run_here_is_refused_with_how_to_install_it(api, knowledge_base):
    response = create(api, knowledge_base, naive({"component": "SentenceTransformerCrossEncoderRetriever",
                                                  "params": {"children": [HYBRID]}}))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "strategy.params.retriever.component" and error["code"] == "unavailable"
    assert "is installed" in error["message"] and "Models page" in error["message"]
    # No shell command for a web user: the action lets the page link to the install form, filled in.
    assert "manage.py" not in error["message"]
    assert error["action"] == {"code": "install_model",
                               "params": {"kind": "cross-encoder", "model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}}


def test_a_credential_the_owner_does_not_have_is_refused(api, knowledge_base):
    strategy = {"component": "NaiveRAG", "params": {"retriever": HYBRID, "response_synthesizer": {
        "component": "ResponseSynthesizer", "params": {"llm": {"component": "OpenAICompatibleLLM",
                                                               "params": {"credential": "openai-main"}}}}}}
    response = create(api, knowledge_base, strategy)
    assert response.status_code == 400
    assert response.json()["errors"] == [{
        "path": "strategy.params.response_synthesizer.params.llm.params.credential",
        "message": "no credential named 'openai-main' is available to you; add it under Credentials",
        "code": "unknown_credential"}]


def test_a_dense_retriever_on_another_model_queues_that_vector_index(api, knowledge_base):
    other = naive({"component": "DenseEmbeddingRetriever", "params": {
        "similarity_metric": "ip", "embedding_model": {"component": "MultilingualE5SmallEmbedding"}}})
    body = create(api, knowledge_base, other).json()
    index = VectorIndex.objects.get(knowledge_base=knowledge_base, metric="ip")
    assert index.model_key != knowledge_base.vector_indexes.get(metric="cosine").model_key
    assert any(f"vector index {index.model_key} (ip)" in reason for reason in body["waiting_for"])


def test_duplicate_export_and_import_round_trip(api, knowledge_base):
    original = create(api, knowledge_base, naive(HYBRID)).json()
    copy = api.post(reverse("pipeline-duplicate", args=[original["id"]])).json()
    assert copy["name"] == "Hybrid (copy)" and copy["strategy"] == original["strategy"]
    exported = api.get(reverse("pipeline-export", args=[original["id"]]))
    assert exported["Content-Disposition"] == 'attachment; filename="Hybrid.json"'
    document = exported.json()
    assert document == {"name": "Hybrid", "version": 1, "description": "", "strategy": original["strategy"],
                        "knowledge_base": {"id": knowledge_base.pk, "name": "Notes"}}
    imported = api.post(reverse("pipeline-import"), {"knowledge_base": knowledge_base.pk, "document": document},
                        content_type="application/json")
    assert imported.status_code == 201 and imported.json()["name"] == "Hybrid (2)"
    assert imported.json()["strategy"] == original["strategy"]


def test_an_import_keeps_the_exported_knowledge_base_when_the_user_has_it_and_asks_otherwise(
        api, knowledge_base, user, django_user_model):
    other = knowledge_base_create(owner=user, name="Other notes")
    exported = api.get(reverse("pipeline-export", args=[create(api, knowledge_base, naive(HYBRID)).json()["id"]])).json()

    def imported(document, **body):
        return api.post(reverse("pipeline-import"), {"document": document, **body}, content_type="application/json")

    same = imported(exported)
    assert same.status_code == 201, same.content
    assert same.json()["knowledge_base"] == knowledge_base.pk
    # From another installation: the id means nothing here, the name finds the user's own.
    elsewhere = imported({**exported, "knowledge_base": {"id": 99_999, "name": "Other notes"}})
    assert elsewhere.json()["knowledge_base"] == other.pk
    chosen = imported(exported, knowledge_base=other.pk)
    assert chosen.json()["knowledge_base"] == other.pk

    stranger = django_user_model.objects.create_user(username="stranger", password="x")
    foreign = knowledge_base_create(owner=stranger, name="Foreign")
    for document in ({**exported, "knowledge_base": {"id": foreign.pk, "name": "Foreign"}},
                     {key: value for key, value in exported.items() if key != "knowledge_base"}):
        refused = imported(document)
        assert refused.status_code == 400
        assert [(error["path"], error["code"]) for error in refused.json()["errors"]] == [("knowledge_base", "required")]
    assert Pipeline.objects.filter(knowledge_base=foreign).count() == 0


def test_an_invalid_document_is_refused_with_document_paths(api, knowledge_base):
    document = {"version": 2, "strategy": naive({"component": "BM25Retriever", "params": {"k1": -1}}), "extra": 1}
    response = api.post(reverse("pipeline-import"), {"knowledge_base": knowledge_base.pk, "document": document},
                        content_type="application/json")
    assert response.status_code == 400
    assert {error["path"] for error in response.json()["errors"]} == {
        "document.name", "document.version", "document.extra", "document.strategy.params.retriever.params.k1"}


def test_templates_are_whole_pipeline_documents_and_the_default_saves(api, knowledge_base):
    templates = api.get(reverse("pipeline-templates")).json()
    default = next(template for template in templates if template["default"])
    assert default["name"] == "hybrid" and default["document"]["version"] == 1
    synthesizer = default["document"]["strategy"]["params"]["response_synthesizer"]
    assert synthesizer["params"]["max_input_tokens"] == 3000  # normalised: every default filled
    assert create(api, knowledge_base, default["document"]["strategy"], name="From template").status_code == 201


def test_other_users_pipelines_and_knowledge_bases_are_invisible(api, knowledge_base, django_user_model):
    pipeline = create(api, knowledge_base, naive(HYBRID)).json()
    stranger = Client()
    stranger.force_login(django_user_model.objects.create_user(username="mallory", password="x"))
    for name in ("pipeline-detail", "pipeline-export", "pipeline-duplicate"):
        method = stranger.post if name == "pipeline-duplicate" else stranger.get
        assert method(reverse(name, args=[pipeline["id"]])).status_code == 404
    assert stranger.get(reverse("pipeline-list")).json() == []
    response = create(stranger, knowledge_base, naive(HYBRID))
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "knowledge_base"


def test_the_list_costs_the_same_queries_whatever_the_number_of_pipelines(api, knowledge_base):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for total in (2, 6):
        while Pipeline.objects.count() < total:
            create(api, knowledge_base, naive(HYBRID), name=f"P{Pipeline.objects.count()}")
        with CaptureQueriesContext(connection) as queries:
            assert len(api.get(reverse("pipeline-list")).json()) == total
        counts.append(len(queries))
    # Two of them read the catalog's words for the representations, once per list.
    assert counts[0] == counts[1] <= 8
