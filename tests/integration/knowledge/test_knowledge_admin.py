"""The admin pages of the knowledge app."""

from __future__ import annotations

import pytest
from django.urls import reverse

from knowledge import services
from knowledge.models import Document, VectorIndex

from .test_knowledge_base_api import make_document

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def garden(owner):
    knowledge_base = services.knowledge_base_create(owner=owner, name="Garden")
    make_document(knowledge_base, "sunflowers.txt", status="ready", chunk_count=3)
    make_document(knowledge_base, "broken.pdf", status="failed")
    return knowledge_base


def test_the_admin_lists_knowledge_bases_documents_and_vector_indexes(admin_client, garden):
    page = admin_client.get(reverse("admin:knowledge_knowledgebase_changelist")).content.decode()
    assert "Garden" in page and "ada" in page
    documents = admin_client.get(reverse("admin:knowledge_document_changelist"), {"status__exact": "failed"})
    assert "broken.pdf" in documents.content.decode() and "sunflowers.txt" not in documents.content.decode()
    found = admin_client.get(reverse("admin:knowledge_document_changelist"), {"q": "sunflow"}).content.decode()
    assert "sunflowers.txt" in found and "broken.pdf" not in found
    index = VectorIndex.objects.get(knowledge_base=garden)
    assert admin_client.get(reverse("admin:knowledge_vectorindex_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:knowledge_vectorindex_change", args=[index.pk])).status_code == 200


def test_documents_and_vector_indexes_are_read_only_in_the_admin(admin_client, garden):
    document = Document.objects.get(name="broken.pdf")
    response = admin_client.post(reverse("admin:knowledge_document_change", args=[document.pk]), {"name": "renamed"})
    assert response.status_code == 403
    assert Document.objects.get(pk=document.pk).name == "broken.pdf"
    assert admin_client.get(reverse("admin:knowledge_document_add")).status_code == 403
    assert admin_client.get(reverse("admin:knowledge_vectorindex_add")).status_code == 403


def test_the_retry_ingestion_action_requeues_the_chosen_documents(admin_client, garden):
    document = Document.objects.get(name="broken.pdf")
    response = admin_client.post(
        reverse("admin:knowledge_document_changelist"),
        {"action": "retry_ingestion", "_selected_action": [document.pk]},
        follow=True,
    )
    assert response.status_code == 200
    document.refresh_from_db()
    # The job itself starts only once this test's transaction commits, which it never does.
    assert (document.status, document.attempt, document.error) == ("queued", 1, "")
    assert "1 document" in response.content.decode()
