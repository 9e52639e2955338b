"""Retrieve-then-expand exactly as DESIGN §4 defines it."""

import pytest

from .fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit


def expanded(window: int, *positions: tuple[int, int], sizes=(10,)):
    retriever = FixedRetriever(enable_retrieve_then_expand=True, expand_window=window)
    retriever.inject_infra(chunks=make_documents(*sizes))
    chunks, node = retriever.plan(*positions).retrieve("q")
    return [(chunk.document_id, *chunk.metadata.get("window", [chunk.position, chunk.position])) for chunk in chunks], chunks, node


@pytest.mark.parametrize(
    ("window", "position", "span"),
    [
        # first chunk (0), middle chunk (5), last chunk (9) of a 10-chunk document
        (1, 0, (0, 0)), (1, 5, (5, 5)), (1, 9, (9, 9)),
        (2, 0, (0, 1)), (2, 5, (5, 6)), (2, 9, (9, 9)),
        (3, 0, (0, 1)), (3, 5, (4, 6)), (3, 9, (8, 9)),
        (4, 0, (0, 2)), (4, 5, (4, 7)), (4, 9, (8, 9)),
        (5, 0, (0, 2)), (5, 5, (3, 7)), (5, 9, (7, 9)),
    ],
)
def test_window_sizes_centre_odd_put_the_extra_after_for_even_and_clip_at_the_ends(window, position, span):
    spans, chunks, _ = expanded(window, (1, position))
    assert spans == [(1, *span)]
    first, last = span
    assert chunks[0].text == "\n".join(f"d1p{p}" for p in range(first, last + 1))


@pytest.mark.parametrize(
    ("window", "hits", "spans"),
    [
        # overlapping neighbours merge, ranked at the best rank they absorbed
        (3, [(1, 5), (1, 6)], [(1, 4, 7)]),
        (3, [(1, 6), (1, 2), (1, 5)], [(1, 4, 7), (1, 1, 3)]),
        (4, [(1, 2), (1, 5)], [(1, 1, 7)]),
        # touching windows stay apart: 3..5 and 6..8 do not overlap
        (3, [(1, 4), (1, 7)], [(1, 3, 5), (1, 6, 8)]),
        # plain chunks (w=1) are never widened, even when adjacent
        (1, [(1, 4), (1, 5)], [(1, 4, 4), (1, 5, 5)]),
        # the same positions in two documents never merge
        (3, [(1, 5), (2, 5), (1, 6)], [(1, 4, 7), (2, 4, 6)]),
        (5, [(2, 9), (1, 0)], [(2, 7, 9), (1, 0, 2)]),
    ],
)
def test_overlapping_windows_of_one_document_merge_at_the_best_rank(window, hits, spans):
    got, _, _ = expanded(window, *hits, sizes=(10, 10))
    assert got == spans


def test_a_merged_chunk_concatenates_covered_chunks_in_order_under_the_best_hits_id():
    _, chunks, node = expanded(3, (1, 6), (1, 5))
    merged = chunks[0]
    assert merged.text == "d1p4\nd1p5\nd1p6\nd1p7"
    assert merged.id == 106 and merged.position == 4
    assert merged.metadata["window_chunk_ids"] == [104, 105, 106, 107]
    assert merged.metadata["retrieved_positions"] == [5, 6]
    assert node["results"] == [
        {"chunk_id": 106, "document_id": 1, "position": 4, "score": 1.0, "rank": 1, "window": [4, 7],
         "preview": "d1p4 d1p5 d1p6 d1p7"}
    ]


def test_without_expansion_chunks_come_back_as_retrieved():
    retriever = FixedRetriever()
    retriever.inject_infra(chunks=make_documents(10))
    chunks, node = retriever.plan((1, 5), (1, 6)).retrieve("q")
    assert [chunk.id for chunk in chunks] == [105, 106]
    assert [row["rank"] for row in node["results"]] == [1, 2]
    assert "window" not in node["results"][0]


def test_a_short_document_clips_on_both_sides():
    assert expanded(5, (1, 1), sizes=(3,))[0] == [(1, 0, 2)]
    assert expanded(2, (1, 0), sizes=(1,))[0] == [(1, 0, 0)]


def test_a_trace_row_names_its_document_and_starts_its_text_so_a_live_trace_reads_without_lookups():
    from rag.documents.models import Chunk, SourceDocument
    from rag.retrievers.base import PREVIEW_CHARACTERS

    long_text = "aurora  borealis\n" * 40
    retriever = FixedRetriever()
    retriever.inject_infra(
        chunks={1: {0: Chunk(id=7, document_id=1, position=0, text=long_text)},
                2: {0: Chunk(id=8, document_id=2, position=0, text="ash cloud")}},
        documents={1: SourceDocument(1, "aurora.md")},
    )
    _, node = retriever.plan((1, 0), (2, 0)).retrieve("q")
    aurora, unnamed = node["results"]
    assert aurora["document_name"] == "aurora.md"
    assert aurora["preview"].startswith("aurora borealis aurora borealis") and aurora["preview"].endswith("…")
    assert len(aurora["preview"]) <= PREVIEW_CHARACTERS
    assert "document_name" not in unnamed and unnamed["preview"] == "ash cloud"
