"""Fixtures of the knowledge API tests: users, logged-in clients, knowledge bases and files
built with the real libraries (fpdf2, python-docx)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

import jobs
from knowledge.models import KnowledgeBase
from knowledge.runtime import embedding_model
from rag.components import load_components
from rag.core import build
from rag.documents import parse_document

SMALL_CHUNKER = {"component": "RecursiveCharacterChunker", "params": {"chunk_size": 200, "chunk_overlap": 20}}
IDLE_TIMEOUT = 120


@pytest.fixture(autouse=True)
def background_jobs_finish():
    """No job may outlive its test: the next test's database would be written by it."""
    yield
    assert jobs.wait_until_idle(IDLE_TIMEOUT), f"background jobs still running after {IDLE_TIMEOUT} s"


@pytest.fixture
def create_knowledge_base(api) -> Callable[..., dict[str, Any]]:
    def create(name: str = "Garden notes", **fields: Any) -> dict[str, Any]:
        fields.setdefault("chunker", SMALL_CHUNKER)
        response = api.post(reverse("knowledge-base-list"), {"name": name, **fields}, content_type="application/json")
        assert response.status_code == 201, response.content
        return response.json()

    return create


def upload(client: Client, knowledge_base_id: int, *files: SimpleUploadedFile, **extra: Any):
    data: dict[str, Any] = {"files": list(files)}
    if "force" in extra:
        data["force"] = extra.pop("force")
    return client.post(reverse("document-list", args=[knowledge_base_id]), data, **extra)


def wait_for_jobs() -> None:
    assert jobs.wait_until_idle(IDLE_TIMEOUT), f"ingestion did not finish within {IDLE_TIMEOUT} s"


def expected_drafts(knowledge_base: KnowledgeBase, file: SimpleUploadedFile) -> list[tuple[int, str, dict]]:
    """What the knowledge base's chunker makes of the file's parsed text, computed apart from
    the ingestion pipeline."""
    parsed = parse_document(file_bytes(file), file.name, file.content_type)
    chunker = build(knowledge_base.chunker, kind="chunker", registry=load_components(),
                    infra={"tokenizer": embedding_model(knowledge_base.embedding_model).tokenizer()})
    return [(draft.position, draft.text, draft.metadata) for draft in chunker.split(parsed.sections)]


def file_bytes(file: SimpleUploadedFile) -> bytes:
    file.seek(0)
    data = file.read()
    file.seek(0)
    return data


# -- files ------------------------------------------------------------------------------------

PARAGRAPH = (
    "{topic} grow best along a trellis facing the morning sun. Water them deeply twice a week, "
    "mulch the soil against summer heat, and tie new shoots loosely so the stems can thicken."
)


def text_file(name: str = "notes.txt", topic: str = "Cucumbers", paragraphs: int = 4) -> SimpleUploadedFile:
    body = "\n\n".join(PARAGRAPH.format(topic=f"{topic} ({index})") for index in range(paragraphs))
    return SimpleUploadedFile(name, body.encode(), content_type="text/plain")


def pdf_file(name: str = "guide.pdf") -> SimpleUploadedFile:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for page, topic in enumerate(("Tomatoes", "Beans"), start=1):
        pdf.add_page()
        for index in range(3):
            pdf.multi_cell(w=180, h=7, text=f"Page {page}. " + PARAGRAPH.format(topic=f"{topic} {index}"),
                           new_x="LMARGIN", new_y="NEXT")
    return SimpleUploadedFile(name, bytes(pdf.output()), content_type="application/pdf")


def docx_file(name: str = "plan.docx") -> SimpleUploadedFile:
    import docx

    document = docx.Document()
    document.add_heading("Spring planting", level=1)
    document.add_paragraph(PARAGRAPH.format(topic="Peas"))
    document.add_paragraph(PARAGRAPH.format(topic="Sweet peas"))
    document.add_heading("Autumn pruning", level=2)
    document.add_paragraph(PARAGRAPH.format(topic="Grapes"))
    buffer = io.BytesIO()
    document.save(buffer)
    return SimpleUploadedFile(
        name, buffer.getvalue(),
        content_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    )


def html_file(name: str = "page.html") -> SimpleUploadedFile:
    body = (
        "<!doctype html><html><head><title>Climbing roses</title></head><body>"
        "<h1>Climbing roses</h1>"
        f"<p>{PARAGRAPH.format(topic='Roses')}</p><p>{PARAGRAPH.format(topic='Clematis')}</p>"
        "<h2>Support</h2>"
        f"<p>{PARAGRAPH.format(topic='Jasmine')}</p>"
        "</body></html>"
    )
    return SimpleUploadedFile(name, body.encode(), content_type="text/html")


def markdown_file(name: str = "readme.md") -> SimpleUploadedFile:
    body = (
        "# Hops\n\n" + PARAGRAPH.format(topic="Hops") + "\n\n"
        "## Harvest\n\n" + PARAGRAPH.format(topic="Kiwis") + "\n\n- cut\n- dry\n- store\n"
    )
    return SimpleUploadedFile(name, body.encode(), content_type="text/markdown")
