import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25L, BM25Okapi, BM25Plus

from rag.retrievers.sparse import (
    DELTA_VARIANT,
    BagOfWordsConverter,
    BM25Index,
    BM25Parameters,
    Vocabulary,
    top_k_indices,
    variant_for_delta,
)

from .corpora import CHINESE, CHINESE_QUERIES, SCIENCE, SCIENCE_QUERIES, SPANISH

pytestmark = pytest.mark.unit

RELATIVE = 1e-9


def reference(tokens, params):
    """rank-bm25's scorer for ``params``."""
    if params.variant == "okapi":
        return BM25Okapi(tokens, k1=params.k1, b=params.b, epsilon=params.epsilon)
    if params.variant == "bm25l":
        return BM25L(tokens, k1=params.k1, b=params.b, delta=params.delta)
    return BM25Plus(tokens, k1=params.k1, b=params.b, delta=params.delta)


def assert_same_scores(actual, expected, context=""):
    np.testing.assert_allclose(actual, expected, rtol=RELATIVE, atol=1e-12,
                               err_msg=f"BM25Index and rank-bm25 disagree {context}")


VARIANT_PARAMS = [
    BM25Parameters(),
    BM25Parameters(k1=0.9, b=0.4),
    BM25Parameters(variant="bm25l", delta=0.5),
    BM25Parameters(variant="bm25l", k1=2.0, b=0.9, delta=0.0),
    BM25Parameters(variant="bm25plus", delta=1.0),
    BM25Parameters(variant="bm25plus", k1=1.2, b=0.0, delta=0.25),
]


@pytest.mark.parametrize("params", VARIANT_PARAMS, ids=str)
def test_scores_equal_rank_bm25_on_a_real_corpus(params):
    converter = BagOfWordsConverter()
    tokens = [converter.analyze(text) for text in SCIENCE]
    index = BM25Index.from_tokens(tokens, params=params)
    ranker = reference(tokens, params)
    for query in SCIENCE_QUERIES:
        query_tokens = converter.analyze(query)
        assert_same_scores(index.scores(query_tokens), ranker.get_scores(query_tokens), f"for {query!r}")


def test_the_real_corpus_exercises_okapis_negative_idf_floor():
    tokens = [BagOfWordsConverter().analyze(text) for text in SCIENCE]
    ranker = BM25Okapi(tokens)
    floored = [term for term, idf in ranker.idf.items() if idf == ranker.epsilon * ranker.average_idf]
    assert "the" in floored
    index = BM25Index.from_tokens(tokens)
    assert index.idf[index.vocabulary.column("the")] == pytest.approx(ranker.idf["the"], rel=RELATIVE)


def test_a_repeated_query_term_counts_once_per_occurrence():
    tokens = [BagOfWordsConverter().analyze(text) for text in SCIENCE]
    for params in VARIANT_PARAMS:
        index = BM25Index.from_tokens(tokens, params=params)
        once = index.scores(["heart", "risk"])
        twice = index.scores(["heart", "risk", "heart"])
        assert not np.allclose(once, twice)
        assert_same_scores(twice, reference(tokens, params).get_scores(["heart", "risk", "heart"]))


def test_query_terms_absent_from_the_corpus_add_nothing():
    tokens = [["red", "apple"], ["green", "apple"], ["red", "wine"]]
    for params in VARIANT_PARAMS:
        index = BM25Index.from_tokens(tokens, params=params)
        assert_same_scores(index.scores(["red", "unicorn"]), index.scores(["red"]))
        assert_same_scores(index.scores(["unicorn"]), np.zeros(3))
        assert_same_scores(index.scores(["red", "unicorn"]), reference(tokens, params).get_scores(["red", "unicorn"]))


def test_bm25plus_gives_every_document_idf_times_delta_per_query_term_as_rank_bm25_does():
    tokens = [["red", "apple"], ["green", "apple"], ["red", "wine"]]
    params = BM25Parameters(variant="bm25plus", delta=1.0)
    scores = BM25Index.from_tokens(tokens, params=params).scores(["wine"])
    assert scores[0] == pytest.approx(np.log(4 / 1)) and scores[0] == scores[1]
    assert_same_scores(scores, BM25Plus(tokens, delta=1.0).get_scores(["wine"]))


def test_empty_documents_score_like_rank_bm25_when_b_is_below_one():
    tokens = [["a1", "b2"], [], ["a1", "a1", "c3"], []]
    for params in (BM25Parameters(), BM25Parameters(variant="bm25l", delta=0.5),
                   BM25Parameters(variant="bm25plus", delta=1.0)):
        index = BM25Index.from_tokens(tokens, params=params)
        assert_same_scores(index.scores(["a1", "c3"]), reference(tokens, params).get_scores(["a1", "c3"]))


def test_where_rank_bm25_divides_zero_by_zero_a_missing_term_contributes_its_limit():
    tokens = [["a1", "b2"], [], ["a1", "c3"]]
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = BM25Okapi(tokens, b=1.0).get_scores(["a1"])
    assert np.isnan(expected[1])
    scores = BM25Index.from_tokens(tokens, params=BM25Parameters(b=1.0)).scores(["a1"])
    assert scores[1] == 0.0
    assert_same_scores(scores[[0, 2]], expected[[0, 2]])


def test_from_texts_scores_documents_as_their_in_vocabulary_tokens():
    converter = BagOfWordsConverter(max_df=0.3, min_df=1)
    index = BM25Index.from_texts(SCIENCE, converter, doc_ids=range(100, 100 + len(SCIENCE)))
    kept = [[token for token in converter.analyze(text) if token in index.vocabulary] for text in SCIENCE]
    assert "the" not in index.vocabulary
    ranker = BM25Okapi(kept)
    for query in SCIENCE_QUERIES:
        query_tokens = converter.analyze(query)
        assert_same_scores(index.scores(query_tokens), ranker.get_scores(query_tokens), f"for {query!r}")
    assert index.metadata["converter"] == converter.to_config()


def test_a_count_matrix_and_its_vocabulary_build_the_same_index_as_tokens():
    tokens = [["x1", "y2", "x1"], ["y2"], ["z3", "x1"]]
    counts = sp.csr_matrix(np.array([[2, 1, 0], [0, 1, 0], [1, 0, 1]]))
    from_counts = BM25Index(counts, Vocabulary(["x1", "y2", "z3"]))
    assert_same_scores(from_counts.scores(["x1", "z3"]), BM25Index.from_tokens(tokens).scores(["x1", "z3"]))


def test_a_string_query_is_refused_because_it_would_be_read_character_by_character():
    index = BM25Index.from_tokens([["hello"]])
    with pytest.raises(TypeError, match="analyze the query"):
        index.scores("hello")


# -- hypothesis: any corpus, any query, any constants -------------------------------------------

TERMS = ["ab", "cd", "ef", "gh", "ij", "水", "茶", "canción"]
documents = st.lists(st.sampled_from(TERMS), min_size=1, max_size=12)
corpora = st.lists(documents, min_size=1, max_size=25)
queries = st.lists(st.sampled_from(TERMS + ["absent", "山"]), max_size=8)
unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def bm25_parameters(draw):
    variant = draw(st.sampled_from(["okapi", "bm25l", "bm25plus"]))
    return BM25Parameters(
        variant=variant,
        k1=draw(st.floats(0.01, 3.0)),
        b=draw(unit),
        delta=0.0 if variant == "okapi" else draw(st.floats(0.0, 2.0)),
        epsilon=draw(unit),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=corpora, query=queries, params=bm25_parameters())
def test_scores_equal_rank_bm25_for_any_corpus_query_and_parameters(corpus, query, params):
    index = BM25Index.from_tokens(corpus, params=params)
    assert_same_scores(index.scores(query), reference(corpus, params).get_scores(query),
                       f"for {params} on {corpus} with {query}")


@settings(max_examples=200, deadline=None)
@given(corpus=corpora, query=queries, k=st.integers(0, 30))
def test_top_k_is_the_best_k_in_score_order_with_ties_to_the_lower_row(corpus, query, k):
    index = BM25Index.from_tokens(corpus)
    scores = index.scores(query)
    rows, top_scores = index.top_k(query, k)
    expected = np.lexsort((np.arange(len(scores)), -scores))[:k]
    assert rows.tolist() == expected.tolist()
    assert top_scores.tolist() == scores[expected].tolist()


# -- top k ------------------------------------------------------------------------------------


def test_top_k_breaks_ties_by_lower_index_and_handles_k_beyond_the_corpus():
    scores = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, 0.0])
    assert top_k_indices(scores, 3).tolist() == [1, 3, 2]
    assert top_k_indices(scores, 4).tolist() == [1, 3, 2, 4]
    assert top_k_indices(scores, 100).tolist() == [1, 3, 2, 4, 5, 0, 6]
    assert top_k_indices(scores, 0).tolist() == []
    with pytest.raises(ValueError, match="k must be an integer"):
        top_k_indices(scores, -1)


def test_top_k_rows_map_to_document_ids():
    tokens = [["red", "cat"], ["blue", "dog"], ["red", "red", "fox"], ["green", "owl"], ["pink", "ant"]]
    index = BM25Index.from_tokens(tokens, doc_ids=[70, 8, 1234, 9, 10])
    rows, scores = index.top_k(["red"], 2)
    assert index.doc_ids[rows].tolist() == [1234, 70]
    assert scores[0] > scores[1] > 0
    assert index.rows_of([8, 1234, 5]).tolist() == [1, 2, -1]


def test_doc_ids_must_be_unique_and_one_per_document():
    with pytest.raises(ValueError, match="unique"):
        BM25Index.from_tokens([["a1"], ["b2"]], doc_ids=[3, 3])
    with pytest.raises(ValueError, match="2 doc_ids for 3 documents"):
        BM25Index.from_tokens([["a1"], ["b2"], ["c3"]], doc_ids=[1, 2])


def test_an_empty_corpus_scores_nothing():
    index = BM25Index.from_tokens([])
    assert index.scores(["anything"]).shape == (0,)
    rows, scores = index.top_k(["anything"], 5)
    assert rows.size == 0 and scores.size == 0


# -- parameters -------------------------------------------------------------------------------


def test_delta_zero_selects_okapi_and_positive_delta_selects_bm25plus():
    assert variant_for_delta(0.0) == "okapi"
    assert variant_for_delta(0.5) == DELTA_VARIANT == "bm25plus"
    assert BM25Parameters.for_delta(k1=1.2, b=0.5, delta=1.0) == BM25Parameters("bm25plus", 1.2, 0.5, 1.0)


@pytest.mark.parametrize(
    ("values", "message"),
    [({"variant": "bm25x"}, "variant must be one of"), ({"k1": -1}, "k1 must be ≥ 0"), ({"b": 1.5}, "b must be"),
     ({"variant": "bm25plus", "delta": -1}, "delta must be ≥ 0"), ({"delta": 0.5}, "no meaning for okapi"),
     ({"k1": float("nan")}, "finite"), ({"epsilon": -0.1}, "epsilon")],
)
def test_invalid_parameters_are_refused(values, message):
    with pytest.raises(ValueError, match=message):
        BM25Parameters(**values)


def test_with_params_rescored_without_retokenising_equals_a_fresh_build():
    tokens = [BagOfWordsConverter().analyze(text) for text in SCIENCE]
    okapi = BM25Index.from_tokens(tokens, doc_ids=range(len(tokens)))
    plus = BM25Parameters(variant="bm25plus", delta=0.7)
    assert_same_scores(okapi.with_params(plus).scores(["insulin", "risk"]),
                       BM25Index.from_tokens(tokens, params=plus).scores(["insulin", "risk"]))


# -- languages --------------------------------------------------------------------------------


@pytest.mark.parametrize("segmentation", ["jieba", "characters"])
def test_a_chinese_query_retrieves_its_passage_first(segmentation):
    converter = BagOfWordsConverter(chinese_segmentation=segmentation)
    index = BM25Index.from_texts(CHINESE, converter)
    for query, expected in CHINESE_QUERIES.items():
        rows, scores = index.top_k(converter.analyze(query), 2)
        assert rows[0] == expected, f"{query!r} ranked passage {rows[0]} first, not {expected}"
        assert scores[0] > scores[1]


def test_a_spanish_query_without_accents_or_with_stop_words_finds_its_passage():
    converter = BagOfWordsConverter(strip_accents="unicode", stop_words="spanish")
    index = BM25Index.from_texts(SPANISH, converter)
    for query, expected in (("cancion de cuna", 0), ("¿Qué comió el niño?", 1), ("volcanes en Chile", 2),
                            ("pingüinos de Perú", 5)):
        rows, scores = index.top_k(converter.analyze(query), 2)
        assert rows[0] == expected, f"{query!r} ranked passage {rows[0]} first, not {expected}"
        assert scores[0] > scores[1]
