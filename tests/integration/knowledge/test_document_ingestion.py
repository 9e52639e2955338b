"""Uploading documents through the API and what ingestion makes of them: the real thread pool,
the packaged embedding model, Chroma and BM25 in the test's data directory."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

import jobs
from jobs import registry
from knowledge import services
from knowledge.models import Chunk, Document, KnowledgeBase, VectorIndex
from knowledge.runtime import chroma_store, embedding_model, knowledge_base_stores
from knowledge.services.documents import INGEST_TASK, document_fail, upload_dir
from rag.retrievers.sparse import BagOfWordsConverter
from rag.stores import KnowledgeBaseStores

from .conftest import (
    PARAGRAPH,
    docx_file,
    expected_drafts,
    file_bytes,
    html_file,
    markdown_file,
    pdf_file,
    text_file,
    upload,
    wait_for_jobs,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def documents_by_name(api, knowledge_base_id: int, **headers) -> dict[str, dict]:
    response = api.get(reverse("document-list", args=[knowledge_base_id]), **headers)
    assert response.status_code == 200
    return {document["name"]: document for document in response.json()}


def chunks_of(api, knowledge_base_id: int, document_id: int, **query) -> dict:
    response = api.get(reverse("document-chunks", args=[knowledge_base_id, document_id]), query)
    assert response.status_code == 200, response.content
    return response.json()


def vector_ids(knowledge_base: KnowledgeBase) -> set[int]:
    index = VectorIndex.objects.get(knowledge_base=knowledge_base)
    return chroma_store().collection(knowledge_base.pk, index.model_key, index.metric).chunk_ids()


def test_five_formats_in_one_request_become_ready_with_the_chunks_the_chunker_makes(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    files = [pdf_file(), docx_file(), html_file(), markdown_file(), text_file()]
    response = upload(api, knowledge_base["id"], *files)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["rejected"] == []
    assert {document["name"] for document in body["documents"]} == {file.name for file in files}
    assert {document["status"] for document in body["documents"]} == {"queued"}
    wait_for_jobs()

    documents = documents_by_name(api, knowledge_base["id"])
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    all_chunk_ids: set[int] = set()
    for file in files:
        document = documents[file.name]
        assert document["status"] == "ready", f"{file.name}: {document['error']}"
        assert document["error"] is None and document["error_code"] is None
        expected = expected_drafts(row, file)
        assert len(expected) > 1, f"{file.name} should make several chunks"
        assert document["chunk_count"] == len(expected)
        assert document["progress"] == {"done": len(expected), "total": len(expected)}
        assert document["size"] == len(file_bytes(file))
        assert document["character_count"] > 0
        page = chunks_of(api, knowledge_base["id"], document["id"], limit=500)
        assert page["count"] == len(expected)
        got = [(chunk["position"], chunk["text"], chunk["metadata"]) for chunk in page["results"]]
        assert [position for position, _, _ in got] == list(range(len(expected)))
        assert got == expected, f"{file.name}: stored chunks differ from the chunker's"
        all_chunk_ids |= {chunk["id"] for chunk in page["results"]}

    pdf = documents["guide.pdf"]
    assert pdf["page_count"] == 2 and pdf["mime"] == "application/pdf"
    pdf_chunks = chunks_of(api, knowledge_base["id"], pdf["id"], limit=500)["results"]
    assert {chunk["metadata"]["page"] for chunk in pdf_chunks} == {1, 2}
    assert all(chunk["metadata"]["pages"] for chunk in pdf_chunks)
    assert any(chunk["metadata"].get("heading") for chunk in chunks_of(api, knowledge_base["id"],
                                                                        documents["plan.docx"]["id"])["results"])
    # Every chunk is in the vector index, and the knowledge base counts them.
    assert vector_ids(row) == all_chunk_ids
    listed = api.get(reverse("knowledge-base-detail", args=[knowledge_base["id"]])).json()
    assert (listed["ready_count"], listed["chunk_total"]) == (5, len(all_chunk_ids))


def test_chunks_are_paged_with_limit_and_offset(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    upload(api, knowledge_base["id"], text_file(paragraphs=6))
    wait_for_jobs()
    document = next(iter(documents_by_name(api, knowledge_base["id"]).values()))
    everything = chunks_of(api, knowledge_base["id"], document["id"])
    assert everything["count"] == document["chunk_count"] >= 4
    page = chunks_of(api, knowledge_base["id"], document["id"], limit=2, offset=1)
    assert page["count"] == everything["count"]
    assert [chunk["position"] for chunk in page["results"]] == [1, 2]
    url = reverse("document-chunks", args=[knowledge_base["id"], document["id"]])
    assert api.get(url, {"limit": 501}).status_code == 400
    assert api.get(url, {"offset": -1}).status_code == 400


def test_bad_files_fail_alone_with_readable_reasons_in_the_requests_language(api, create_knowledge_base, settings):
    settings.TRELLIS_MAX_UPLOAD_BYTES = 20_000
    knowledge_base = create_knowledge_base()
    good = text_file("good.txt")
    pdf = file_bytes(pdf_file())
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(256))
    bad = [
        SimpleUploadedFile("truncated.pdf", pdf[: len(pdf) // 2], content_type="application/pdf"),
        SimpleUploadedFile("empty.txt", b"", content_type="text/plain"),
        SimpleUploadedFile("junk.txt", bytes(range(256)) * 8, content_type="text/plain"),
        SimpleUploadedFile("photo.pdf", png, content_type="application/pdf"),
    ]
    huge = SimpleUploadedFile("huge.txt", b"compost " * 4000, content_type="text/plain")
    response = upload(api, knowledge_base["id"], good, *bad, huge, HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 201, response.content
    body = response.json()
    assert {document["name"] for document in body["documents"]} == {"good.txt"} | {file.name for file in bad}
    [rejected] = body["rejected"]
    assert (rejected["name"], rejected["code"], rejected["document_id"]) == ("huge.txt", "too_large", None)
    assert "límite" in rejected["reason"], rejected["reason"]
    wait_for_jobs()

    english = documents_by_name(api, knowledge_base["id"])
    spanish = documents_by_name(api, knowledge_base["id"], HTTP_ACCEPT_LANGUAGE="es")
    assert english["good.txt"]["status"] == "ready" and english["good.txt"]["chunk_count"] > 0
    expectations = {
        # name: (code, English words, Spanish words)
        "truncated.pdf": ("damaged", ["PDF", "damaged"], ["PDF", "dañado"]),
        "empty.txt": ("empty", ["empty"], ["vacío"]),
        "junk.txt": ("binary", ["binary"], ["binario"]),
        "photo.pdf": ("type_mismatch", [".pdf", "not a PDF document", "PNG image"], [".pdf", "imagen PNG"]),
    }
    for name, (code, english_words, spanish_words) in expectations.items():
        document = english[name]
        assert document["status"] == "failed", f"{name} is {document['status']}"
        assert document["error_code"] == code, f"{name}: {document['error_code']} ({document['error']})"
        assert document["chunk_count"] == 0
        for word in english_words:
            assert word in document["error"], f"{name}: {word!r} not in {document['error']!r}"
        for word in spanish_words:
            assert word in spanish[name]["error"], f"{name}: {word!r} not in {spanish[name]['error']!r}"
        assert "Traceback" not in document["error"]
    failed_ids = {english[name]["id"] for name in expectations}
    assert not Chunk.objects.filter(document_id__in=failed_ids).exists()
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    assert vector_ids(row) == set(Chunk.objects.filter(document_id=english["good.txt"]["id"]).values_list("id", flat=True))


def test_only_a_too_large_file_is_413_and_an_upload_without_files_is_400(api, create_knowledge_base, settings):
    settings.TRELLIS_MAX_UPLOAD_BYTES = 1_000
    knowledge_base = create_knowledge_base()
    response = upload(api, knowledge_base["id"], SimpleUploadedFile("huge.txt", b"x" * 2_000))
    assert response.status_code == 413
    assert response.json()["documents"] == [] and response.json()["rejected"][0]["code"] == "too_large"
    assert "limit" in response.json()["rejected"][0]["reason"]
    empty = api.post(reverse("document-list", args=[knowledge_base["id"]]), {})
    assert empty.status_code == 400
    assert [error["path"] for error in empty.json()["errors"]] == ["files"]
    assert not Document.objects.exists()


def test_a_duplicate_upload_is_409_naming_the_existing_document_until_forced(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    first = upload(api, knowledge_base["id"], text_file("notes.txt")).json()["documents"][0]
    again = upload(api, knowledge_base["id"], text_file("copy of notes.txt"))
    assert again.status_code == 409
    [rejected] = again.json()["rejected"]
    assert (rejected["code"], rejected["document_id"], rejected["name"]) == ("duplicate", first["id"], "copy of notes.txt")
    assert "notes.txt" in rejected["reason"]
    forced = upload(api, knowledge_base["id"], text_file("copy of notes.txt"), force="true")
    assert forced.status_code == 201
    assert forced.json()["rejected"] == [] and forced.json()["documents"][0]["name"] == "copy of notes.txt"
    wait_for_jobs()
    statuses = {document["name"]: document["status"] for document in documents_by_name(api, knowledge_base["id"]).values()}
    assert statuses == {"notes.txt": "ready", "copy of notes.txt": "ready"}


def test_retry_requeues_only_a_failed_document(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    upload(api, knowledge_base["id"], text_file("good.txt"), text_file("crashed.txt", topic="Leeks"))
    wait_for_jobs()
    documents = documents_by_name(api, knowledge_base["id"])
    refused = api.post(reverse("document-retry", args=[knowledge_base["id"], documents["good.txt"]["id"]]),
                       HTTP_ACCEPT_LANGUAGE="es")
    assert refused.status_code == 409
    assert refused.json()["code"] == "not_failed" and refused.json()["detail"]

    # A failure that may pass on a second try (the server crashed on it) is tried again, and the
    # same file then becomes ready.
    crashed = Document.objects.get(pk=documents["crashed.txt"]["id"])
    document_fail(document=crashed, template=jobs.ABORTED, code="aborted", context={"error": "SystemExit"})
    retried = api.post(reverse("document-retry", args=[knowledge_base["id"], crashed.pk]))
    assert retried.status_code == 202
    assert retried.json()["status"] == "queued" and retried.json()["error"] is None
    wait_for_jobs()
    crashed.refresh_from_db()
    assert (crashed.status, crashed.attempt) == ("ready", 1)


def test_retrying_an_unreadable_file_that_has_not_changed_says_so_instead_of_failing_again(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    corrupt = SimpleUploadedFile("report.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 8, content_type="application/pdf")
    upload(api, knowledge_base["id"], corrupt, SimpleUploadedFile("empty.txt", b""))
    wait_for_jobs()
    documents = documents_by_name(api, knowledge_base["id"])
    document = Document.objects.get(pk=documents["report.pdf"]["id"])
    assert (document.status, document.error_code) == ("failed", "damaged")

    for name, language, expected in (
        ("report.pdf", "en", "the file has not changed since it failed, so it would fail the same way: "
                             "upload a corrected file"),
        ("empty.txt", "es", "el archivo no ha cambiado desde que falló, así que fallaría de la misma manera: "
                            "suba un archivo corregido"),
        ("report.pdf", "zh-Hant", "檔案自失敗後沒有變更，重試也會以同樣的方式失敗：請上傳修正後的檔案"),
    ):
        refused = api.post(reverse("document-retry", args=[knowledge_base["id"], documents[name]["id"]]),
                           HTTP_ACCEPT_LANGUAGE=language)
        assert refused.status_code == 409, refused.content
        assert refused.json() == {"detail": expected, "code": "unchanged"}
    wait_for_jobs()
    document.refresh_from_db()
    assert (document.status, document.error_code, document.attempt) == ("failed", "damaged", 0), "not run again"

    # The stored file replaced by a readable one (its checksum differs): the retry runs.
    (settings.DATA_DIR / document.file).write_bytes(text_file("report.txt").read())
    retried = api.post(reverse("document-retry", args=[knowledge_base["id"], document.pk]))
    assert retried.status_code == 202, retried.content
    wait_for_jobs()
    document.refresh_from_db()
    assert document.attempt == 1 and document.error_code != "unchanged"


def test_reindex_and_a_new_chunker_rechunk_every_document(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    file = text_file(paragraphs=3)
    upload(api, knowledge_base["id"], file)
    wait_for_jobs()
    [before] = documents_by_name(api, knowledge_base["id"]).values()

    response = api.post(reverse("knowledge-base-reindex", args=[knowledge_base["id"]]))
    assert response.status_code == 202 and response.json() == {"queued": 1}
    wait_for_jobs()
    [after] = documents_by_name(api, knowledge_base["id"]).values()
    assert (after["status"], after["chunk_count"]) == ("ready", before["chunk_count"])

    wider = {"component": "RecursiveCharacterChunker", "params": {"chunk_size": 1000, "chunk_overlap": 0}}
    response = api.patch(reverse("knowledge-base-detail", args=[knowledge_base["id"]]), {"chunker": wider},
                         content_type="application/json")
    assert response.status_code == 200, response.content
    wait_for_jobs()
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    [rechunked] = documents_by_name(api, knowledge_base["id"]).values()
    expected = expected_drafts(row, file)
    assert rechunked["status"] == "ready"
    assert rechunked["chunk_count"] == len(expected) < before["chunk_count"]
    assert vector_ids(row) == set(Chunk.objects.filter(document_id=rechunked["id"]).values_list("id", flat=True))


def test_deleting_a_document_removes_its_chunks_vectors_file_and_bm25_entries(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    upload(api, knowledge_base["id"], text_file("zucchini.txt", topic="Zucchini"),
           text_file("artichoke.txt", topic="Artichokes"))
    wait_for_jobs()
    documents = documents_by_name(api, knowledge_base["id"])
    gone, kept = documents["zucchini.txt"], documents["artichoke.txt"]
    gone_chunks = set(Chunk.objects.filter(document_id=gone["id"]).values_list("id", flat=True))
    kept_chunks = set(Chunk.objects.filter(document_id=kept["id"]).values_list("id", flat=True))
    stored_file = settings.DATA_DIR / Document.objects.get(pk=gone["id"]).file
    converter = BagOfWordsConverter()
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    assert stored_file.is_file()
    assert vector_ids(row) == gone_chunks | kept_chunks
    assert set(knowledge_base_stores(row).bm25(converter).doc_ids.tolist()) == gone_chunks | kept_chunks

    response = api.delete(reverse("document-detail", args=[knowledge_base["id"], gone["id"]]))
    assert response.status_code == 204
    assert api.get(reverse("document-detail", args=[knowledge_base["id"], gone["id"]])).status_code == 404
    assert not Chunk.objects.filter(document_id=gone["id"]).exists()
    assert not stored_file.exists()
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    assert vector_ids(row) == kept_chunks
    index = knowledge_base_stores(row).bm25(converter)
    assert set(index.doc_ids.tolist()) == kept_chunks
    rows, _ = index.top_k(converter.analyze("zucchini"), 50)
    assert not set(index.doc_ids[rows].tolist()) & gone_chunks
    listed = api.get(reverse("knowledge-base-detail", args=[knowledge_base["id"]])).json()
    assert (listed["document_count"], listed["chunk_total"]) == (1, len(kept_chunks))


def test_deleting_a_knowledge_base_removes_its_collections_indices_and_files(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    upload(api, knowledge_base["id"], text_file())
    wait_for_jobs()
    kb_id = knowledge_base["id"]
    row = KnowledgeBase.objects.get(pk=kb_id)
    knowledge_base_stores(row).bm25(BagOfWordsConverter())
    uploads = upload_dir(kb_id)
    indices = KnowledgeBaseStores.index_dir_of(settings.DATA_DIR, kb_id)
    assert any(uploads.iterdir()) and indices.is_dir() and vector_ids(row)

    assert api.delete(reverse("knowledge-base-detail", args=[kb_id])).status_code == 204
    assert not uploads.exists() and not indices.exists()
    assert not Document.objects.filter(knowledge_base_id=kb_id).exists()
    assert not Chunk.objects.filter(knowledge_base_id=kb_id).exists()
    assert chroma_store().drop_knowledge_base(kb_id) == 0, "a Chroma collection of the deleted knowledge base was left"


@pytest.fixture
def interrupted(owner, create_knowledge_base):
    """A document a crash left in ``embedding``: its file stored, a stale chunk and a stale vector
    from the dead run, at attempt 3."""
    knowledge_base = KnowledgeBase.objects.get(pk=create_knowledge_base()["id"])
    file = text_file("interrupted.txt", topic="Melons")
    directory = upload_dir(knowledge_base.pk)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "interrupted").write_bytes(file_bytes(file))
    document = Document.objects.create(
        owner=owner, knowledge_base=knowledge_base, name=file.name, mime="text/plain", size=file.size,
        sha256="0" * 64, file=str((directory / "interrupted").relative_to(settings.DATA_DIR)),
        status=Document.Status.EMBEDDING, progress_done=1, progress_total=5, attempt=3,
    )
    stale = Chunk.objects.create(owner=owner, knowledge_base=knowledge_base, document=document, position=0,
                                 text="stale text of the dead run")
    index = VectorIndex.objects.get(knowledge_base=knowledge_base)
    chroma_store().collection(knowledge_base.pk, index.model_key, index.metric).upsert(
        [stale.pk], embedding_model(knowledge_base.embedding_model).embed_documents([stale.text]),
        [{"document_id": document.pk, "position": 0}],
    )
    return knowledge_base, document, stale, file


def test_an_ingestion_run_whose_attempt_was_superseded_writes_nothing(interrupted):
    knowledge_base, document, stale, _ = interrupted
    services.document_ingest(document_id=document.pk, attempt=2)
    wait_for_jobs()
    after = Document.objects.get(pk=document.pk)
    assert (after.status, after.attempt, after.progress_done, after.updated_at) == (
        "embedding", 3, 1, document.updated_at)
    assert list(Chunk.objects.filter(document=document).values_list("id", flat=True)) == [stale.pk]
    assert vector_ids(knowledge_base) == {stale.pk}
    assert KnowledgeBase.objects.get(pk=knowledge_base.pk).content_version == knowledge_base.content_version


def test_a_document_left_embedding_is_requeued_at_start_and_ends_ready_exactly_once(interrupted):
    knowledge_base, document, stale, file = interrupted
    version = knowledge_base.content_version
    assert services.documents_requeue_interrupted() == 1
    wait_for_jobs()
    after = Document.objects.get(pk=document.pk)
    assert (after.status, after.attempt, after.error) == ("ready", 4, "")
    chunks = list(Chunk.objects.filter(document=document).order_by("position"))
    expected = expected_drafts(knowledge_base, file)
    assert [(chunk.position, chunk.text, chunk.metadata) for chunk in chunks] == expected
    assert stale.pk not in {chunk.pk for chunk in chunks}
    assert vector_ids(knowledge_base) == {chunk.pk for chunk in chunks}
    # Turning ready moves the content version once; a second start-up finds nothing to do.
    assert KnowledgeBase.objects.get(pk=knowledge_base.pk).content_version == version + 1
    assert services.documents_requeue_interrupted() == 0
    wait_for_jobs()
    assert Document.objects.get(pk=document.pk).attempt == 4


def test_a_pages_navigation_header_footer_and_sidebar_never_become_chunks(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    article = " ".join(PARAGRAPH.format(topic=f"Peas ({index})") for index in range(3))
    page = f"""<!doctype html><html lang="en"><head><title>Peas</title></head><body>
      <header><a href="/">Home</a> | <a href="/about">About</a> | <a href="/contact">Contact</a></header>
      <nav><ul><li>Garden</li><li>Recipes</li></ul></nav>
      <div role="navigation">Previous page | Next page</div>
      <main><article>
        <header><h1>Growing peas</h1><p>By the allotment society</p></header>
        <p>{article}</p>
        <aside>Related: how to build a trellis</aside>
      </article></main>
      <footer>Copyright 2026 · Privacy · Contact us</footer>
    </body></html>"""
    upload(api, knowledge_base["id"], SimpleUploadedFile("peas.html", page.encode(), content_type="text/html"))
    wait_for_jobs()

    document = documents_by_name(api, knowledge_base["id"])["peas.html"]
    assert document["status"] == "ready", document["error"]
    text = " ".join(chunk["text"] for chunk in chunks_of(api, knowledge_base["id"], document["id"])["results"])
    # The article's own header (its title and byline) is content; the site around it is not.
    for kept in ("Growing peas", "By the allotment society", "Peas (2) grow best"):
        assert kept in text
    for boilerplate in ("Home", "About", "Garden", "Next page", "Related:", "Copyright", "Privacy"):
        assert boilerplate not in text, f"{boilerplate!r} came through: {text[:300]!r}"


def test_a_damaged_pdfs_reason_is_translated_and_the_librarys_words_stay_apart_as_detail(api, create_knowledge_base):
    knowledge_base = create_knowledge_base()
    pdf = file_bytes(pdf_file())
    upload(api, knowledge_base["id"], SimpleUploadedFile("cut.pdf", pdf[: len(pdf) // 2], content_type="application/pdf"))
    wait_for_jobs()

    english = documents_by_name(api, knowledge_base["id"])["cut.pdf"]
    spanish = documents_by_name(api, knowledge_base["id"], HTTP_ACCEPT_LANGUAGE="es")["cut.pdf"]
    chinese = documents_by_name(api, knowledge_base["id"], HTTP_ACCEPT_LANGUAGE="zh-Hant")["cut.pdf"]
    assert english["error_code"] == "damaged"
    assert english["error"] == "the PDF is damaged"
    assert spanish["error"] == "el PDF está dañado"
    assert chinese["error"] == "此 PDF 已損壞"
    # What pypdf said, in its own words, beside the reason and in no language's sentence.
    detail = english["error_detail"]
    assert detail and detail == spanish["error_detail"] == chinese["error_detail"]
    assert all(detail not in row["error"] for row in (english, spanish, chinese))
    # The stored English text keeps both, for logs and admins.
    assert Document.objects.get(pk=english["id"]).error == f"the PDF is damaged: {detail}"


ingestion_gate = threading.Event()


@jobs.task("tests.ingestion.wait_at_the_gate")
def wait_at_the_gate() -> None:
    assert ingestion_gate.wait(60), "the gate never opened"


def test_an_upload_made_while_restart_work_is_queued_is_ingested_before_it(api, create_knowledge_base, monkeypatch):
    # One worker, busy when the server re-queues three interrupted documents and a user uploads.
    backend = registry.ThreadPoolBackend(workers=1)
    monkeypatch.setattr(registry, "_backend", backend)
    ingest, started = registry._tasks[INGEST_TASK], []

    def ingest_in_turn(document_id: int, attempt: int) -> None:
        started.append(Document.objects.get(pk=document_id).name)
        ingest(document_id=document_id, attempt=attempt)

    monkeypatch.setitem(registry._tasks, INGEST_TASK, ingest_in_turn)
    knowledge_base = create_knowledge_base()
    for number in range(3):
        assert upload(api, knowledge_base["id"], text_file(f"old-{number}.txt", topic=f"Melons {number}")).status_code == 201
    wait_for_jobs()
    Document.objects.update(status=Document.Status.EMBEDDING)
    started.clear()
    ingestion_gate.clear()
    backend.submit("tests.ingestion.wait_at_the_gate", {})
    assert services.documents_requeue_interrupted() == 3
    assert upload(api, knowledge_base["id"], text_file("fresh.txt", topic="Squash")).status_code == 201
    ingestion_gate.set()
    wait_for_jobs()
    assert started == ["fresh.txt", "old-0.txt", "old-1.txt", "old-2.txt"]
    assert set(Document.objects.values_list("status", flat=True)) == {Document.Status.READY}


@pytest.mark.parametrize(("language", "homes"), [("en", 2), ("zh-Hant", 1)])
def test_ingestion_warms_the_bm25_indices_of_keyword_search_and_of_the_default_pipeline(
        api, create_knowledge_base, language, homes):
    from knowledge.runtime import retriever_infra
    from rag.components import load_components
    from rag.core import build
    from rag.presets import default_retriever

    knowledge_base = create_knowledge_base(language=language)
    upload(api, knowledge_base["id"], text_file("zucchini.txt", topic="Zucchinis"))
    wait_for_jobs()
    row = KnowledgeBase.objects.get(pk=knowledge_base["id"])
    warmed = sorted(knowledge_base_stores(row).index_dir.glob("bm25-*/v*/manifest.json"))
    assert len(warmed) == homes, warmed
    built = [manifest.stat().st_mtime_ns for manifest in warmed]

    tree = default_retriever()["params"]["children"][0]
    bm25 = build(tree, kind="retriever", registry=load_components(), infra=retriever_infra(row))
    found, _ = bm25.retrieve("zucchini")
    # The default pipeline's keyword child reads a warmed index, stemmed in English ("zucchinis"
    # meets "zucchini") and as written in Chinese.
    assert bool(found) == (language == "en")
    assert sorted(knowledge_base_stores(row).index_dir.glob("bm25-*/v*/manifest.json")) == warmed
    assert [manifest.stat().st_mtime_ns for manifest in warmed] == built
