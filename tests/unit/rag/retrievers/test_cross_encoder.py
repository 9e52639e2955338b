import math
import time

import pytest

from rag.components import load_components
from rag.core import validate_tree
from rag.retrievers.cross_encoder import SentenceTransformerCrossEncoderRetriever, cross_encoder_problem
from tests.support.tiny_models import build_tiny_cross_encoder

from .fixed_retriever import FixedRetriever, make_documents

pytestmark = [pytest.mark.unit, pytest.mark.slow]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    words = [f"d{d}p{p}" for d in range(1, 3) for p in range(10)] + ["q"]
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"), words)


def reranker(model_path, child_top_k, top_k):
    child = FixedRetriever(top_k=child_top_k).plan(*[(1, position) for position in range(10)])
    retriever = SentenceTransformerCrossEncoderRetriever(children=[child], model_name=model_path, top_k=top_k)
    documents = make_documents(10)
    child.inject_infra(chunks=documents)
    retriever.inject_infra(chunks=documents)
    retriever.init_model()
    return retriever


def test_the_childs_top_k_sets_the_candidates_and_top_k_what_is_kept(tiny_cross_encoder):
    retriever = reranker(tiny_cross_encoder, child_top_k=6, top_k=4)
    chunks, node = retriever.retrieve("q")
    assert len(node["children"][0]["results"]) == 6
    assert len(chunks) == 4
    assert {chunk.id for chunk in chunks} <= {100 + position for position in range(6)}
    scores = [row["score"] for row in node["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 < score < 1 for score in scores)


def test_distances_are_one_minus_the_sigmoid_of_the_logit(tiny_cross_encoder):
    retriever = reranker(tiny_cross_encoder, child_top_k=10, top_k=10)
    chunks, node = retriever.retrieve("q")
    score_of = {row["chunk_id"]: row["score"] for row in node["results"]}
    for chunk_id, distance in retriever.score_chunks(list(score_of), "q"):
        assert math.isclose(distance, 1 - score_of[chunk_id], rel_tol=1e-5)


def test_a_model_with_no_local_copy_is_a_validation_error_that_says_how_to_install_it():
    started = time.monotonic()
    tree = {"component": "SentenceTransformerCrossEncoderRetriever",
            "params": {"model_name": "cross-encoder/ms-marco-MiniLM-L-6-v2", "children": [{"component": "BM25Retriever"}]}}
    _, errors = validate_tree(tree, registry=load_components(), check_availability=True)
    assert time.monotonic() - started < 5
    assert [(error.path, error.code) for error in errors] == [("component", "unavailable")]
    assert "manage.py" not in errors[0].message
    assert errors[0].action == {"code": "install_model",
                                "params": {"kind": "cross-encoder", "model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}}
    assert "Models page" in errors[0].message


def test_a_local_directory_is_available(tiny_cross_encoder):
    assert cross_encoder_problem(tiny_cross_encoder) is None
