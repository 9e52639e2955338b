import math

import pytest
from rank_bm25 import BM25Okapi, BM25Plus

from rag.retrievers.sparse import BagOfWordsConverter, BM25Retriever

from .corpus import all_chunks, corpus_chunks

pytestmark = pytest.mark.unit


def retriever(**params) -> BM25Retriever:
    bm25 = BM25Retriever(**params)
    bm25.inject_infra(chunks=corpus_chunks())
    return bm25


@pytest.mark.parametrize(("delta", "baseline"), [(0.0, BM25Okapi), (0.5, BM25Plus)])
def test_ranking_and_scores_equal_rank_bm25_on_the_same_tokens(delta, baseline):
    converter = BagOfWordsConverter()
    chunks = all_chunks()
    reference = (baseline([converter.analyze(chunk.text) for chunk in chunks], k1=1.2, b=0.7, delta=delta)
                 if delta else baseline([converter.analyze(chunk.text) for chunk in chunks], k1=1.2, b=0.7))
    query = "memory safety of the programming language"
    expected = reference.get_scores(converter.analyze(query))
    floor = min(expected)

    found, node = retriever(k1=1.2, b=0.7, delta=delta, top_k=4).retrieve(query)

    by_id = {chunk.id: score for chunk, score in zip(chunks, expected, strict=True)}
    ranked = sorted((score, -index) for index, score in enumerate(expected) if score > floor + 1e-12)[::-1][:4]
    assert [chunk.id for chunk in found] == [chunks[-index].id for _, index in ranked]
    for row in node["results"]:
        assert math.isclose(row["score"], by_id[row["chunk_id"]], rel_tol=1e-9)


def test_chunks_sharing_no_word_with_the_query_are_not_results():
    found, node = retriever(top_k=10).retrieve("Eiffel")
    assert [chunk.id for chunk in found] == [300]
    assert node["results"][0]["rank"] == 1


def test_score_chunks_returns_ascending_distances_and_inf_for_unknown_ids():
    bm25 = retriever()
    distances = bm25.score_chunks([100, 201, 999], "Rust memory safety")
    assert [chunk_id for chunk_id, _ in distances] == [201, 100, 999]
    assert distances[0][1] < distances[1][1] == 0.0 and distances[2][1] == math.inf


def test_an_index_saved_under_its_id_is_loaded_instead_of_rebuilt(tmp_path):
    first = retriever()
    first.inject_infra(env_path=tmp_path, chunks=corpus_chunks())
    first.set_id("kb-test")
    first.save()
    second = BM25Retriever()
    second.inject_infra(env_path=tmp_path, chunks={})  # no chunks to rebuild from: must load
    second.set_id("kb-test")
    assert second.load()
    assert second.index().n_documents == len(all_chunks())


def test_spanish_and_chinese_passages_are_found():
    from rag.documents.models import Chunk

    chunks = {
        1: {0: Chunk(1, 1, 0, "La energía solar se convierte en electricidad con paneles fotovoltaicos."),
            1: Chunk(2, 1, 1, "El río Amazonas atraviesa la selva más grande del mundo.")},
        2: {0: Chunk(3, 2, 0, "臺北101曾是世界最高的摩天大樓。"),
            1: Chunk(4, 2, 1, "太陽能電池把陽光轉換成電力。")},
    }
    spanish = BM25Retriever(vectorizer={"component": "BagOfWordsConverter",
                                        "params": {"strip_accents": "unicode", "stop_words": "spanish"}})
    spanish.inject_infra(chunks=chunks)
    assert [chunk.id for chunk in spanish.retrieve("energia electrica")[0]][:1] == [1]
    chinese = BM25Retriever()
    chinese.inject_infra(chunks=chunks)
    assert [chunk.id for chunk in chinese.retrieve("陽光電力")[0]][:1] == [4]


def test_a_vectorizer_stemming_in_the_knowledge_bases_language_finds_other_word_forms():
    stemming = {"vectorizer": {"component": "BagOfWordsConverter", "params": {"stemmer": "auto"}}}
    english = BM25Retriever(**stemming)
    english.inject_infra(chunks=corpus_chunks(), language="en")
    found, node = english.retrieve("protein translated")
    assert [chunk.id for chunk in found] == [102]
    assert english.converter.params.stemmer == "english"
    assert english.score_chunks([102], "protein translated")[0][1] < 0

    # Chinese (and a mixed knowledge base) have no stemmer: the words must match as written.
    chinese = BM25Retriever(**stemming)
    chinese.inject_infra(chunks=corpus_chunks(), language="zh-Hant")
    assert chinese.retrieve("protein translated")[0] == []
    assert retriever().retrieve("protein translated")[0] == []


@pytest.mark.parametrize("delta", [0.0, 0.5])
def test_explain_gives_each_query_terms_part_and_the_parts_add_up_to_the_score(delta):
    bm25 = retriever(delta=delta, top_k=5)
    query = "Rust memory safety memory Eiffel zzzunknownzzz"
    found, node = bm25.search(query)
    assert bm25.score_scale == "bm25" and node.to_dict()["score_scale"] == "bm25"
    explained = bm25.explain(query, found)
    analysed = BagOfWordsConverter().analyze(query)
    for hit, why in zip(found, explained, strict=True):
        assert [term["term"] for term in why["terms"]] == list(dict.fromkeys(analysed))
        assert sum(term["contribution"] for term in why["terms"]) == pytest.approx(hit.score, rel=1e-9)
        for term in why["terms"]:
            if term["term_frequency"] == 0 and not delta:
                assert term["contribution"] == 0.0
            if term["term_frequency"]:
                assert term["contribution"] > 0 and term["idf"] != 0
    repeated = next(term for term in explained[0]["terms"] if term["term"] == BagOfWordsConverter().analyze("memory")[0])
    assert repeated["query_count"] == 2
    unknown = next(term for term in explained[0]["terms"] if "zzzunknownzzz" in term["term"])
    assert unknown["contribution"] == 0.0 and unknown["idf"] == 0.0
