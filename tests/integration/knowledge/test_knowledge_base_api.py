"""Knowledge bases over the REST API: creating, validating, changing, listing, owning."""

from __future__ import annotations

import pytest
from django.urls import reverse

from knowledge import services
from knowledge.models import Document, KnowledgeBase, VectorIndex

from .conftest import SMALL_CHUNKER

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LIST = reverse("knowledge-base-list")


def detail(knowledge_base_id: int) -> str:
    return reverse("knowledge-base-detail", args=[knowledge_base_id])


def errors_by_path(response) -> dict[str, dict]:
    return {error["path"]: error for error in response.json()["errors"]}


def test_creating_a_knowledge_base_fills_the_default_components_and_its_vector_index(api):
    response = api.post(LIST, {"name": "Garden", "description": "Notes"}, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "Garden" and body["description"] == "Notes" and body["language"] == "en"
    assert body["chunker"] == {"component": "RecursiveCharacterChunker",
                               "params": {"chunk_size": 1000, "chunk_overlap": 100, "wide_character_weight": 3,
                                          "separators": body["chunker"]["params"]["separators"]}}
    assert body["embedding_model"]["component"] == "AllMiniLML6V2OnnxEmbedding"
    assert (body["document_count"], body["ready_count"], body["chunk_total"]) == (0, 0, 0)
    indexes = api.get(reverse("knowledge-base-indexes", args=[body["id"]])).json()
    assert [(index["metric"], index["status"]) for index in indexes] == [("cosine", "ready")]


def test_a_non_english_knowledge_base_gets_the_multilingual_model_and_keeps_a_given_chunker(api):
    response = api.post(LIST, {"name": "Huerto", "language": "es", "chunker": SMALL_CHUNKER},
                        content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["embedding_model"]["component"] == "MultilingualE5SmallEmbedding"
    assert body["chunker"]["params"]["chunk_size"] == 200


def test_an_invalid_chunker_is_refused_with_its_path_in_the_requests_language(api):
    payload = {"name": "Garden", "chunker": {"component": "RecursiveCharacterChunker", "params": {"chunk_size": 10}}}
    english = api.post(LIST, payload, content_type="application/json")
    spanish = api.post(LIST, payload, content_type="application/json", HTTP_ACCEPT_LANGUAGE="es")
    assert english.status_code == spanish.status_code == 400
    error = errors_by_path(english)["chunker.params.chunk_size"]
    assert error["code"] and "50" in error["message"]
    assert errors_by_path(spanish)["chunker.params.chunk_size"]["message"] != error["message"]
    assert not KnowledgeBase.objects.exists()


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"language": "fr"}, "language"),
        ({"name": ""}, "name"),
        ({"embedding_model": {"component": "NoSuchModel", "params": {}}}, "embedding_model.component"),
        ({"chunker": {"component": "AllMiniLML6V2Embedding", "params": {}}}, "chunker.component"),
    ],
)
def test_create_refuses_bad_fields_with_an_error_per_path(api, payload, path):
    response = api.post(LIST, {"name": "Garden", **payload}, content_type="application/json")
    assert response.status_code == 400
    errors = errors_by_path(response)
    assert path in errors, errors
    assert set(errors[path]) == {"path", "message", "code"}


def test_a_duplicate_name_for_the_same_owner_is_refused_clearly_but_another_owner_may_use_it(
    api, stranger_api, create_knowledge_base
):
    create_knowledge_base("Garden")
    response = api.post(LIST, {"name": "Garden"}, content_type="application/json")
    assert response.status_code == 400
    error = errors_by_path(response)["name"]
    assert error["code"] == "duplicate_name" and "Garden" in error["message"]
    assert stranger_api.post(LIST, {"name": "Garden"}, content_type="application/json").status_code == 201


def test_patch_renames_and_redescribes_and_refuses_a_taken_name(api, create_knowledge_base):
    first = create_knowledge_base("Garden")
    create_knowledge_base("Orchard")
    response = api.patch(detail(first["id"]), {"name": "Allotment", "description": "Plot 7"},
                         content_type="application/json")
    assert response.status_code == 200, response.content
    assert (response.json()["name"], response.json()["description"]) == ("Allotment", "Plot 7")
    taken = api.patch(detail(first["id"]), {"name": "Orchard"}, content_type="application/json")
    assert taken.status_code == 400 and "name" in errors_by_path(taken)
    assert api.get(detail(first["id"])).json()["name"] == "Allotment"


def test_patch_refuses_an_invalid_chunker_and_keeps_the_old_one(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    bad = {"component": "RecursiveCharacterChunker", "params": {"chunk_size": 100, "chunk_overlap": 500}}
    response = api.patch(detail(knowledge_base["id"]), {"chunker": bad}, content_type="application/json")
    assert response.status_code == 400
    assert any(path.startswith("chunker") for path in errors_by_path(response))
    assert api.get(detail(knowledge_base["id"])).json()["chunker"] == knowledge_base["chunker"]


def test_delete_answers_204_and_the_knowledge_base_is_gone(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    assert api.delete(detail(knowledge_base["id"])).status_code == 204
    assert api.get(detail(knowledge_base["id"])).status_code == 404
    assert not VectorIndex.objects.exists()


def test_the_list_shows_only_my_knowledge_bases_with_counts_by_status(api, owner, stranger, create_knowledge_base):
    mine = create_knowledge_base("Garden")
    services.knowledge_base_create(owner=stranger, name="Secret")
    knowledge_base = KnowledgeBase.objects.get(pk=mine["id"])
    for index, (status, chunks) in enumerate([("ready", 3), ("ready", 4), ("failed", 0), ("embedding", 5)]):
        make_document(knowledge_base, f"doc{index}.txt", status=status, chunk_count=chunks)
    rows = api.get(LIST).json()
    assert [row["name"] for row in rows] == ["Garden"]
    row = rows[0]
    assert (row["document_count"], row["ready_count"], row["failed_count"], row["in_progress_count"]) == (4, 2, 1, 1)
    assert row["chunk_total"] == 7


def test_the_list_costs_the_same_number_of_queries_whatever_the_number_of_knowledge_bases(
    api, owner, django_assert_max_num_queries
):
    for index in range(6):
        knowledge_base = services.knowledge_base_create(owner=owner, name=f"Base {index}")
        for number in range(3):
            make_document(knowledge_base, f"doc{number}.txt", status="ready", chunk_count=2)
    # session, user, knowledge bases with their counts
    with django_assert_max_num_queries(3):
        response = api.get(LIST)
    assert len(response.json()) == 6


def test_the_document_list_costs_the_same_number_of_queries_whatever_the_number_of_documents(
    api, owner, django_assert_max_num_queries
):
    knowledge_base = services.knowledge_base_create(owner=owner, name="Garden")
    for number in range(25):
        make_document(knowledge_base, f"doc{number}.txt", status="failed" if number % 2 else "ready", chunk_count=1)
    # session, user, knowledge base, documents
    with django_assert_max_num_queries(5):
        response = api.get(reverse("document-list", args=[knowledge_base.pk]))
    assert len(response.json()) == 25
    failed = api.get(reverse("document-list", args=[knowledge_base.pk]), {"status": "failed"}).json()
    assert len(failed) == 12 and {row["status"] for row in failed} == {"failed"}
    assert api.get(reverse("document-list", args=[knowledge_base.pk]), {"status": "lost"}).status_code == 400


def test_every_endpoint_answers_404_for_another_users_knowledge_base_and_documents(
    api, stranger_api, create_knowledge_base, owner
):
    knowledge_base = create_knowledge_base()
    document = make_document(KnowledgeBase.objects.get(pk=knowledge_base["id"]), "private.txt", status="failed")
    kb, doc = knowledge_base["id"], document.pk
    requests = [
        ("get", reverse("knowledge-base-detail", args=[kb])),
        ("patch", reverse("knowledge-base-detail", args=[kb])),
        ("delete", reverse("knowledge-base-detail", args=[kb])),
        ("post", reverse("knowledge-base-reindex", args=[kb])),
        ("get", reverse("knowledge-base-indexes", args=[kb])),
        ("get", reverse("document-list", args=[kb])),
        ("post", reverse("document-list", args=[kb])),
        ("get", reverse("document-detail", args=[kb, doc])),
        ("delete", reverse("document-detail", args=[kb, doc])),
        ("post", reverse("document-retry", args=[kb, doc])),
        ("get", reverse("document-chunks", args=[kb, doc])),
    ]
    for method, url in requests:
        response = getattr(stranger_api, method)(url, {"name": "Stolen"} if method == "patch" else None,
                                                 content_type="application/json")
        assert response.status_code == 404, f"{method.upper()} {url} answered {response.status_code}"
    assert KnowledgeBase.objects.get(pk=kb).name == "Garden notes"
    assert Document.objects.get(pk=doc).status == "failed"
    # A document id of my own, under another knowledge base of mine, is not found either.
    other = create_knowledge_base("Orchard")
    assert api.get(reverse("document-detail", args=[other["id"], doc])).status_code == 404
    assert api.get(reverse("document-detail", args=[kb, doc])).status_code == 200


def test_anonymous_requests_are_refused(client, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    assert client.get(LIST).status_code in (401, 403)
    assert client.get(detail(knowledge_base["id"])).status_code in (401, 403)


def test_the_openapi_schema_documents_every_operation_with_the_multipart_upload(client):
    import yaml

    schema = yaml.safe_load(client.get(reverse("api-schema")).content)
    operations = {
        operation["operationId"]: operation
        for path, methods in schema["paths"].items() if path.startswith("/api/v1/knowledge-bases/")
        for method, operation in methods.items() if method != "parameters"
    }
    assert set(operations) == {
        "knowledge_bases_list", "knowledge_bases_create", "knowledge_bases_retrieve",
        "knowledge_bases_partial_update", "knowledge_bases_destroy", "knowledge_bases_reindex",
        "knowledge_bases_indexes_list", "knowledge_bases_documents_list", "knowledge_bases_documents_upload",
        "knowledge_bases_documents_retrieve", "knowledge_bases_documents_destroy", "knowledge_bases_documents_retry",
        "knowledge_bases_documents_chunks_list", "knowledge_bases_playground",
    }
    upload = operations["knowledge_bases_documents_upload"]
    body = upload["requestBody"]["content"]["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[-1]
    files = schema["components"]["schemas"][body]["properties"]["files"]
    assert files == {"type": "array", "items": {"type": "string", "format": "binary"}, "description": files["description"]}
    assert {"201", "409", "413", "400"} <= set(upload["responses"])
    assert {"Document", "KnowledgeBase", "VectorIndex", "Chunk", "DocumentRejection"} <= set(schema["components"]["schemas"])
    assert all(operation.get("description") for operation in operations.values())


def make_document(knowledge_base: KnowledgeBase, name: str, *, status: str, chunk_count: int = 0) -> Document:
    """A document row in a given state, without ingestion (for counts and query budgets)."""
    return Document.objects.create(
        owner=knowledge_base.owner, knowledge_base=knowledge_base, name=name, mime="text/plain", size=10,
        sha256=f"{name:0>64}"[:64], file=f"uploads/kb{knowledge_base.pk}/{name}", status=status,
        chunk_count=chunk_count,
        error="the file is empty" if status == "failed" else "",
        error_code="empty" if status == "failed" else "",
        error_template="the file is empty" if status == "failed" else "",
    )
