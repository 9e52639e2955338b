"""Evaluation depth reaches the leaves: every retriever of the tree is asked for at least the
depth, and the parts that cannot honour it are named."""

import pytest

from rag.components import load_components
from rag.evaluation import PipelineSpec, RunOptions, deepen, depth_notes, evaluate, strategy_config
from rag.presets import preset

from .conftest import cranfield_sample

pytestmark = pytest.mark.unit

REGISTRY = load_components()


def test_a_fusion_and_its_children_are_each_asked_for_the_depth():
    tree = preset("hybrid").config()
    for child in tree["params"]["children"]:
        child["params"]["top_k"] = 20
    deepened, limits = deepen(tree, 100, REGISTRY)
    assert deepened["params"]["top_k"] == 100
    assert [child["params"]["top_k"] for child in deepened["params"]["children"]] == [100, 100]
    assert limits == []


def test_a_deeper_own_top_k_is_kept_and_the_original_tree_is_not_changed():
    tree = preset("hybrid").config()
    tree["params"]["children"][0]["params"]["top_k"] = 300
    deepened, _ = deepen(tree, 100, REGISTRY)
    assert deepened["params"]["children"][0]["params"]["top_k"] == 300
    assert tree["params"]["top_k"] == 10


def test_a_cross_encoder_scores_as_many_candidates_as_the_depth():
    deepened, limits = deepen(preset("hybrid-cross-encoder").config(), 150, REGISTRY)
    fusion = deepened["params"]["children"][0]
    assert deepened["params"]["top_k"] == 150 and fusion["params"]["top_k"] == 150
    assert [child["params"]["top_k"] for child in fusion["params"]["children"]] == [150, 150]
    assert limits == []


@pytest.mark.parametrize(("name", "named"), [("agentic", "max_chunks=10"), ("hybrid-llm-rerank", "10 candidates")])
def test_a_part_an_llm_decides_is_left_as_built_and_named(name, named):
    from rag.core import validate_or_raise

    tree = validate_or_raise(preset(name).config(), registry=REGISTRY, kind="retriever")
    deepened, limits = deepen(tree, 100, REGISTRY)
    assert deepened == tree
    assert len(limits) == 1 and named in limits[0], limits


@pytest.mark.slow
def test_hybrid_returns_the_depth_asked_for_so_its_recall_compares_with_keywords():
    dataset = cranfield_sample(documents=150, queries=8)
    result = evaluate(dataset, [PipelineSpec("keyword", strategy_config("keyword")),
                                PipelineSpec("hybrid", strategy_config("hybrid"))],
                      options=RunOptions(depth=60, resamples=200, permutations=200))
    keyword, hybrid = result["pipelines"]
    # Its children used to return 20 each, so the fused list stopped at 40.
    assert hybrid["depth"] == {"asked": 60, "limits": [], "returned_p50": 60, "returned_max": 60}
    assert keyword["depth"]["returned_max"] <= 60
    assert depth_notes(result["pipelines"]) == []


def test_a_capped_pipeline_is_said_to_be_capped_in_the_report():
    pipelines = [{"name": "agentic", "depth": {"asked": 100, "returned_max": 10, "returned_p50": 9.0,
                                               "limits": ["AgenticEnsembleRetriever keeps at most max_chunks=10 "
                                                          "chunks, chosen by its LLM (at most 10)"]}}]
    notes = depth_notes(pipelines)
    assert notes == ["agentic: depth 100 asked, at most 10 results returned (median 9) — AgenticEnsembleRetriever "
                     "keeps at most max_chunks=10 chunks, chosen by its LLM (at most 10). Recall beyond that depth "
                     "is capped."]
