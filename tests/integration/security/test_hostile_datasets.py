"""Hostile evaluation datasets through the API: a zip holding a record of tens of megabytes,
an archive of too many files, a corpus nothing of which can be indexed. Each is refused with
the limit it broke, or imported without the records it had to leave out, named by line; an
import never ends failed without saying why."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

import jobs

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

MEGABYTE = 1024 * 1024
QUERIES = '{"_id": "q1", "text": "pruning pears"}\n{"_id": "q2", "text": "thinning apples"}\n'
QRELS = "query-id\tcorpus-id\tscore\nq1\t1\t1\nq2\t3\t2\n"


@pytest.fixture(autouse=True)
def no_job_outlives_its_test():
    yield
    assert jobs.wait_until_idle(120)


def record(identifier: str, text: str) -> bytes:
    return (json.dumps({"_id": identifier, "title": "", "text": text}) + "\n").encode()


def beir_zip(*corpus: bytes | tuple[bytes, int], extra_files: int = 0) -> SimpleUploadedFile:
    """A BEIR zip; ``(piece, times)`` writes a piece many times, so a huge line is streamed."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        with bundle.open("orchard/corpus.jsonl", "w", force_zip64=True) as stream:
            for line in corpus:
                piece, times = line if isinstance(line, tuple) else (line, 1)
                for _ in range(times):
                    stream.write(piece)
        bundle.writestr("orchard/queries.jsonl", QUERIES)
        bundle.writestr("orchard/qrels/test.tsv", QRELS)
        for index in range(extra_files):
            bundle.writestr(f"orchard/notes/{index}.txt", "")
    return SimpleUploadedFile("orchard.zip", buffer.getvalue(), content_type="application/zip")


def upload(api, archive: SimpleUploadedFile, **extra):
    return api.post(reverse("evaluation-dataset-upload"), {"name": "Orchard", "file": archive}, **extra)


def dataset(api, dataset_id: int, **extra) -> dict:
    return api.get(reverse("evaluation-dataset-detail", args=[dataset_id]), **extra).json()


def test_a_zip_holding_one_huge_record_imports_the_others_and_names_the_line_it_left_out(api):
    huge = (b'{"_id": "2", "title": "", "text": "', (b"x" * MEGABYTE, 64), b'"}\n')
    archive = beir_zip(record("1", "Pear trees are pruned in winter."), *huge,
                       record("3", "Apple fruitlets are thinned in June."))
    assert archive.size < MEGABYTE
    response = upload(api, archive)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["document_count"] == 2
    assert created["dropped"] == [{
        "file": "orchard/corpus.jsonl", "line": 2, "code": "too_long",
        "reason": "a record of 64.0 MB is longer than the limit of 1.0 MB; it was left out"}]
    assert jobs.wait_until_idle(120)
    imported = dataset(api, created["id"])
    assert (imported["status"], imported["error"]) == ("ready", ""), imported
    assert imported["documents"]["ready"] == 2 and imported["dropped"] == created["dropped"]
    spanish = dataset(api, created["id"], HTTP_ACCEPT_LANGUAGE="es")["dropped"][0]["reason"]
    assert "límite" in spanish, spanish


def test_a_zip_of_nothing_but_one_huge_record_is_refused_saying_which_line(api):
    response = upload(api, beir_zip(b'{"_id": "1", "text": "', (b"x" * MEGABYTE, 8), b'"}\n'))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "file" and error["code"] == "invalid_dataset"
    assert "the corpus is empty" in error["message"] and "orchard/corpus.jsonl, line 1" in error["message"], error


def test_an_archive_of_too_many_files_is_refused_naming_the_limit(api, settings):
    settings.TRELLIS_DATASET_MAX_FILES = 10
    response = upload(api, beir_zip(record("1", "Pears."), record("3", "Apples."), extra_files=10))
    assert response.status_code == 400
    assert "holds 13 files, more than the limit of 10" in response.json()["errors"][0]["message"]


def test_a_corpus_rejected_at_upload_fails_the_import_with_the_reason_and_the_lines(api, settings):
    settings.TRELLIS_MAX_UPLOAD_BYTES = 1000
    response = upload(api, beir_zip(record("1", "pears " * 500), record("3", "apples " * 500)))
    assert response.status_code == 201, response.content
    assert jobs.wait_until_idle(120)
    imported = dataset(api, response.json()["id"])
    assert imported["status"] == "failed"
    assert imported["error"] == "no corpus record could be imported: of 2, 2 were left out and the others have no text"
    assert [(row["line"], row["code"]) for row in imported["dropped"]] == [(1, "too_large"), (2, "too_large")]
    assert "larger than the limit of 1000 bytes" in imported["dropped"][0]["reason"], imported["dropped"]


def test_a_corpus_whose_every_document_fails_ingestion_says_so(api, settings):
    settings.TRELLIS_MAX_CHARACTERS = 10
    response = upload(api, beir_zip(record("1", "Pear trees are pruned in winter."),
                                    record("3", "Apple fruitlets are thinned in June.")))
    assert response.status_code == 201, response.content
    assert jobs.wait_until_idle(120)
    imported = dataset(api, response.json()["id"])
    assert imported["status"] == "failed" and imported["documents"]["failed"] == 2
    assert imported["error"] == ("none of the 2 corpus documents could be indexed (2 failed; the knowledge base's "
                                 "documents say why)"), imported
