"""A chunk of a PDF that runs across a page break is cited with its first and last page."""

from __future__ import annotations

import pytest
from fpdf import FPDF

from rag.documents import Chunk, parse_document
from rag.documents.chunkers import RecursiveCharacterChunker
from rag.documents.models import page_span
from rag.llms import OpenAICompatibleLLM
from rag.retrievers import Hit
from rag.strategies import ResponseSynthesizer

pytestmark = pytest.mark.unit

PAGE_ONE = "Trellis keeps the pages of a PDF. The warranty covers the hinge for two years."
PAGE_TWO = "It does not cover the glass. Claims go through the shop that sold the door."
PAGE_THREE = "Returns are accepted within thirty days of purchase, with the receipt, at any shop of the chain."


def two_page_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in (PAGE_ONE, PAGE_TWO, PAGE_THREE):
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    return bytes(pdf.output())


def chunks_of(data: bytes) -> list[Chunk]:
    parsed = parse_document(data, "warranty.pdf")
    # Pages one and two fit in one chunk; the third does not fit with them.
    chunker = RecursiveCharacterChunker(chunk_size=len(PAGE_ONE) + len(PAGE_TWO) + 10, chunk_overlap=0)
    return [Chunk(10 + draft.position, 1, draft.position, draft.text, draft.metadata)
            for draft in chunker.split(parsed.sections)]


def test_a_chunk_across_a_page_break_records_and_is_cited_with_its_first_and_last_page(scripted_openai):
    chunks = chunks_of(two_page_pdf())
    assert [chunk.metadata["pages"] for chunk in chunks] == [[1, 2], [3]], [c.text for c in chunks]
    assert [page_span(chunk.metadata) for chunk in chunks] == [(1, 2), (3, 3)]

    synthesizer = ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m"))
    prepared = synthesizer.prepare("What does the warranty cover?", [Hit(chunk, 1.0) for chunk in chunks])
    assert len(prepared.sent) == 2
    citations = synthesizer.citations("The hinge, not the glass [1]. Returns within thirty days [2].", prepared)
    assert [(c["n"], c["page"], c["last_page"]) for c in citations] == [(1, 1, 2), (2, 3, 3)]


def test_a_chunk_stored_with_only_its_first_page_reads_as_that_one_page():
    assert page_span({"page": 4}) == (4, 4)
    assert page_span({"heading": "Install"}) is None
