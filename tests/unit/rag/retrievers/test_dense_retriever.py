import numpy as np
import pytest

from rag.retrievers.dense import DenseEmbeddingRetriever
from rag.retrievers.dense.retriever import distances_to

from .corpus import corpus_chunks

pytestmark = [pytest.mark.unit, pytest.mark.slow]

ENCODER = {"component": "AllMiniLML6V2Embedding", "params": {}}


@pytest.fixture(scope="module")
def dense():
    retriever = DenseEmbeddingRetriever(embedding_model=ENCODER, top_k=3)
    retriever.inject_infra(chunks=corpus_chunks())
    retriever.init_model()
    yield retriever
    retriever.close()


def test_a_paraphrase_finds_the_passage_keyword_search_would_miss(dense):
    chunks, node = dense.retrieve("Which organelle generates the energy currency of cells?")
    assert chunks[0].id == 100
    assert node["results"][0]["score"] > node["results"][1]["score"]
    # The score is a cosine similarity, and the trace says so.
    assert node["score_scale"] == "cosine" and -1.0 <= node["results"][0]["score"] <= 1.0


@pytest.mark.parametrize(("metric", "scale"), [("cosine", "cosine"), ("l2", "negative_l2"), ("ip", "inner_product")])
def test_the_score_scale_follows_the_similarity_metric(metric, scale):
    assert DenseEmbeddingRetriever(similarity_metric=metric).score_scale == scale


def test_score_chunks_orders_like_retrieve(dense):
    chunks, _ = dense.retrieve("a web framework with an admin panel")
    distances = dense.score_chunks([chunk.id for chunk in chunks][::-1], "a web framework with an admin panel")
    assert [chunk_id for chunk_id, _ in distances] == [chunk.id for chunk in chunks]


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_distances_follow_chroma_definitions(metric):
    query = np.array([1.0, 0.0])
    vectors = np.array([[2.0, 0.0], [0.0, 1.0]])
    expected = {"cosine": [0.0, 1.0], "l2": [1.0, 2.0], "ip": [-1.0, 1.0]}[metric]
    assert distances_to(query, vectors, metric).tolist() == pytest.approx(expected)


def test_without_a_model_or_knowledge_base_the_error_says_so():
    retriever = DenseEmbeddingRetriever()
    with pytest.raises(Exception, match="no embedding_model and no knowledge base"):
        retriever.embedder()
