"""Numbers past what the database holds are a 400 naming the field, not a 500 (issue 38): 10^30
in the evaluation API's counts, ids and seed, and in a chunk page's offset."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

import jobs
from knowledge.services import documents_upload, knowledge_base_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

HUGE = 10**30


def test_huge_numbers_in_evaluation_fields_and_a_chunk_offset_are_400s(api, owner):
    base = knowledge_base_create(owner=owner, name="Offsets")
    documents_upload(knowledge_base=base, files=[SimpleUploadedFile("a.txt", b"Pears are pruned in winter.")])
    assert jobs.wait_until_idle(120)
    document = base.documents.get()
    chunks = api.get(reverse("document-chunks", args=[base.pk, document.pk]), {"offset": HUGE})
    assert chunks.status_code == 400 and chunks.json()["errors"][0]["path"] == "offset"
    assert api.get(reverse("document-chunks", args=[base.pk, document.pk]), {"offset": 5}).json()["results"] == []

    evaluations = reverse("evaluation-list")
    for field, value in (("dataset", HUGE), ("query_limit", HUGE), ("answer_queries", HUGE), ("seed", HUGE),
                         ("seed", -HUGE), ("pipelines", [HUGE])):
        body = {"dataset": 1, field: value}
        response = api.post(evaluations, body, content_type="application/json")
        assert response.status_code == 400, (field, response.status_code, response.content[:300])
        assert response.json()["errors"][0]["path"].startswith(field), (field, response.json())
    for field in ("max_queries", "max_documents"):
        response = api.post(reverse("evaluation-dataset-list"), {"dataset": "scifact", field: HUGE},
                            content_type="application/json")
        assert response.status_code == 400 and response.json()["errors"][0]["path"] == field, response.content[:300]
