"""The demo pipeline ``make run`` seeds: what its description says is what it does."""

import pytest

from knowledge.services import knowledge_base_create
from pipelines.services import pipeline_seed_demo
from rag.components import load_components
from rag.core import iter_nodes

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

METHOD_WORDS = {"rrf": "reciprocal rank", "weighted": "normalised"}
RETRIEVER_WORDS = {"BM25Retriever": "BM25", "DenseEmbeddingRetriever": "dense"}


@pytest.fixture
def demo(user):
    return pipeline_seed_demo(owner=user, knowledge_base=knowledge_base_create(owner=user, name="Trellis guide"))


def test_the_demo_pipelines_description_names_the_fusion_and_retrievers_it_is_configured_with(demo):
    nodes = [node for _, node in iter_nodes(demo.strategy, registry=load_components())]
    fusion = {node["params"]["fusion"] for node in nodes if node["component"] == "EnsembleRetriever"}
    said = {method for method, word in METHOD_WORDS.items() if word in demo.description}
    assert said == fusion, f"configured {fusion}, the description says {said}: {demo.description!r}"
    named = {component for component, word in RETRIEVER_WORDS.items() if word in demo.description}
    assert named == {node["component"] for node in nodes} & set(RETRIEVER_WORDS)
    synthesizer = demo.strategy["params"]["response_synthesizer"]["params"]["llm"]["component"]
    assert synthesizer == "LocalLLM" and "local model" in demo.description
