import pytest

from rag.core import ConfigValidationError
from rag.documents.models import Chunk
from rag.retrievers import Hit, RetrievalError
from rag.retrievers.composite import EnsembleRetriever, reciprocal_rank_fusion, weighted_fusion

from .fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit


def hits(*ids_and_scores):
    return [Hit(Chunk(chunk_id, 1, chunk_id, f"c{chunk_id}"), score) for chunk_id, score in ids_and_scores]


def test_rrf_matches_the_hand_computed_example():
    # child 0 ranks a, b, c; child 1 ranks c, a, d. With k = 60:
    # a = 1/61 + 1/62, c = 1/63 + 1/61, b = 1/62, d = 1/63.
    fused = reciprocal_rank_fusion([hits((1, 9.0), (2, 8.0), (3, 7.0)), hits((3, 0.9), (1, 0.8), (4, 0.7))], k=60)
    assert [hit.chunk.id for hit in fused] == [1, 3, 2, 4]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused[3].score == pytest.approx(1 / 63)
    assert fused[0].sources == ({"child": 0, "rank": 1, "score": 9.0, "contribution": 1 / 61},
                                {"child": 1, "rank": 2, "score": 0.8, "contribution": 1 / 62})


def test_rrf_ties_keep_first_seen_order_and_k_changes_the_weights():
    fused = reciprocal_rank_fusion([hits((1, 1.0)), hits((2, 1.0))], k=1)
    assert [hit.chunk.id for hit in fused] == [1, 2]
    assert fused[0].score == pytest.approx(0.5)


def test_weighted_fusion_min_max_normalises_each_child():
    # child 0: 10 → 1, 5 → 0.5, 0 → 0; child 1: 0.2 → 0, 0.6 → 1. Weights 1 and 2.
    fused = weighted_fusion([hits((1, 10.0), (2, 5.0), (3, 0.0)), hits((3, 0.6), (2, 0.2))], [1.0, 2.0])
    scores = {hit.chunk.id: hit.score for hit in fused}
    assert scores == pytest.approx({1: 1.0, 2: 0.5, 3: 2.0})
    assert [hit.chunk.id for hit in fused] == [3, 1, 2]


def test_a_child_with_equal_scores_normalises_to_one():
    assert [hit.score for hit in weighted_fusion([hits((1, 3.0), (2, 3.0))], [0.5])] == [0.5, 0.5]


def ensemble(*plans, **params):
    children = []
    for plan in plans:
        child = FixedRetriever()
        child.plan(*plan)
        children.append(child)
    fusion = EnsembleRetriever(children=children, **params)
    documents = make_documents(10, 10)
    for retriever in [fusion, *children]:
        retriever.inject_infra(chunks=documents)
    return fusion


def test_fusion_dedups_by_chunk_and_nests_child_trace_nodes():
    fusion = ensemble([(1, 0), (1, 1), (2, 0)], [(2, 0), (1, 0)], top_k=2)
    chunks, node = fusion.retrieve("q")
    assert [chunk.id for chunk in chunks] == [100, 200]
    trace = node
    assert trace["class"] == "EnsembleRetriever" and trace["id"] == "n1"
    assert [child["class"] for child in trace["children"]] == ["FixedRetriever", "FixedRetriever"]
    assert sorted(child["id"] for child in trace["children"]) == ["n2", "n3"]
    assert set(trace) == {"id", "class", "params", "query", "top_k", "elapsed_ms", "results", "children", "rounds",
                          "error", "score_scale"}
    assert trace["score_scale"] == "rrf"
    assert trace["results"][0]["sources"] == [{"child": 0, "rank": 1, "score": 1.0, "contribution": 1 / 61},
                                              {"child": 1, "rank": 2, "score": 0.5, "contribution": 1 / 62}]


def test_a_failing_child_is_recorded_and_the_others_still_answer():
    fusion = ensemble([(1, 0)], [(9, 9)])  # document 9 does not exist: the child raises
    chunks, node = fusion.retrieve("q")
    assert [chunk.id for chunk in chunks] == [100]
    assert node["children"][1]["error"] and node["children"][0]["error"] is None


def test_when_every_child_fails_the_fusion_fails_with_its_trace():
    fusion = ensemble([(9, 9)], [(8, 8)])
    with pytest.raises(RetrievalError) as failure:
        fusion.retrieve("q")
    assert failure.value.node.error == "every child retriever failed"
    assert len(failure.value.node.children) == 2


def test_weights_must_fit_the_children():
    with pytest.raises(ConfigValidationError, match="weights has 1 value"):
        EnsembleRetriever(fusion="weighted", weights=[1.0])
    with pytest.raises(ConfigValidationError, match=r"params.children: Fusion needs at least 2 retrievers"):
        EnsembleRetriever(children=[{"component": "BM25Retriever"}])


def test_close_releases_every_child_and_children_are_copied_out():
    fusion = ensemble([(1, 0)], [(1, 1)])
    closed = []
    for child in fusion.children:
        child.close = lambda child=child: closed.append(child)
    copy = fusion.get_children()
    copy.pop()
    assert len(fusion.children) == 2
    fusion.close()
    assert closed == fusion.children


def test_fusion_keeps_the_widest_version_of_a_chunk_two_children_returned():
    plain = Hit(Chunk(5, 1, 5, "p5"), 1.0)
    window = Hit(Chunk(5, 1, 4, "p4\np5\np6", {"window": [4, 6]}), 1.0)
    for fused in (reciprocal_rank_fusion([[plain], [window]]), weighted_fusion([[plain], [window]], [1.0, 1.0])):
        assert fused[0].chunk.metadata["window"] == [4, 6]
    assert reciprocal_rank_fusion([[window], [plain]])[0].chunk.text == "p4\np5\np6"


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_explain_names_each_child_and_its_part_of_the_fused_score(fusion):
    params = {"fusion": fusion, "top_k": 4} | ({"weights": [1.0, 3.0]} if fusion == "weighted" else {})
    fusion_retriever = ensemble([(1, 0), (1, 1), (2, 0)], [(2, 0), (1, 0), (2, 1)], **params)
    found, _ = fusion_retriever.search("q")
    explained = fusion_retriever.explain("q", found)
    assert fusion_retriever.score_scale == fusion
    for hit, why in zip(found, explained, strict=True):
        assert sum(source["contribution"] for source in why["sources"]) == pytest.approx(hit.score)
        assert {source["component"] for source in why["sources"]} == {"FixedRetriever"}
        for source in why["sources"]:
            if fusion == "rrf":
                assert source["contribution"] == pytest.approx(1 / (60 + source["rank"]))
            else:
                assert source["contribution"] == pytest.approx(source["weight"] * source["normalised"])
    # Chunk 200 is child 1's first and child 0's third: both children explain it.
    by_id = {hit.chunk.id: why for hit, why in zip(found, explained, strict=True)}
    assert [(source["child"], source["rank"]) for source in by_id[200]["sources"]] == [(0, 3), (1, 1)]
