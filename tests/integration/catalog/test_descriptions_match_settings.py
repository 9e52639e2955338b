"""What the builder says about a retriever (a preset card, a new Fusion node) is what its settings do."""

import pytest
from django.urls import reverse

from rag.components import load_components
from rag.core import iter_nodes
from rag.core.params import ref
from rag.presets import fusion_sentence

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LANGUAGES = ("en", "es", "zh-Hant")

# Words that only a description of that fusion method uses, in each language.
METHOD_WORDS = {
    "rrf": {"en": "reciprocal rank", "es": "rangos recíprocos", "zh-Hant": "倒數排名"},
    "weighted": {"en": "normalised", "es": "normalizadas", "zh-Hant": "正規化"},
}
RETRIEVER_WORDS = {
    "BM25Retriever": {"en": "BM25", "es": "BM25", "zh-Hant": "BM25"},
    "DenseEmbeddingRetriever": {"en": "dense", "es": "dens", "zh-Hant": "稠密"},
}
HYBRID_WORDS = {"en": "hybrid", "es": "híbrido", "zh-Hant": "混合"}


def mentioned(words, text, language):
    return {key for key, by_language in words.items() if by_language[language].lower() in text.lower()}


def ensembles(tree):
    return [node for _, node in iter_nodes(tree, registry=load_components()) if node["component"] == "EnsembleRetriever"]


def hybrid_signature(ensemble):
    return ensemble["params"]["fusion"], [child["component"] for child in ensemble["params"]["children"]]


def presets(client, language):
    return {row["name"]: row for row in client.get(reverse("component-presets"), HTTP_ACCEPT_LANGUAGE=language).json()}


def test_every_presets_description_names_only_the_fusion_and_retrievers_its_tree_configures(client):
    hybrid = ensembles(presets(client, "en")["hybrid"]["tree"])[0]
    for language in LANGUAGES:
        for name, row in presets(client, language).items():
            tree, description = row["tree"], row["description"]
            configured = {node["params"]["fusion"] for node in ensembles(tree)}
            retrievers = {node["component"] for _, node in iter_nodes(tree, registry=load_components())}
            said = mentioned(METHOD_WORDS, description, language)
            assert said <= configured, f"{name} ({language}) says {said}, configures {configured}: {description!r}"
            named = mentioned(RETRIEVER_WORDS, description, language)
            assert named <= retrievers, f"{name} ({language}) names {named}, has {retrievers}: {description!r}"
            if HYBRID_WORDS[language] in description.lower():
                # "Hybrid candidates…": the same fusion of the same retrievers as the Hybrid preset.
                assert hybrid_signature(hybrid) in [hybrid_signature(node) for node in ensembles(tree)], name
        hybrid_row = presets(client, language)["hybrid"]
        assert mentioned(METHOD_WORDS, hybrid_row["description"], language) == {hybrid["params"]["fusion"]}
        assert mentioned(RETRIEVER_WORDS, hybrid_row["description"], language) == {"BM25Retriever", "DenseEmbeddingRetriever"}


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_the_fusion_sentence_follows_the_method_configured(fusion):
    sentence = fusion_sentence(ref("EnsembleRetriever", fusion=fusion,
                                   children=[ref("BM25Retriever"), ref("DenseEmbeddingRetriever")]))
    for language in LANGUAGES:
        assert mentioned(METHOD_WORDS, sentence.get(language), language) == {fusion}, sentence.get(language)
        assert mentioned(RETRIEVER_WORDS, sentence.get(language), language) == set(RETRIEVER_WORDS)


def test_unequal_weights_are_said_and_equal_ones_are_not():
    children = [ref("BM25Retriever"), ref("DenseEmbeddingRetriever")]
    assert "2 / 1" in fusion_sentence(ref("EnsembleRetriever", fusion="weighted", weights=[2, 1], children=children)).get("es")
    assert "/" not in fusion_sentence(ref("EnsembleRetriever", fusion="weighted", weights=[1, 1], children=children)).get("en")


def test_a_new_fusion_nodes_default_is_the_method_its_description_and_card_name(api):
    for language in LANGUAGES:
        detail = api.get(reverse("component-detail", args=["EnsembleRetriever"]), HTTP_ACCEPT_LANGUAGE=language).json()
        default = detail["schema"]["properties"]["fusion"]["default"]
        assert mentioned(METHOD_WORDS, detail["description"], language) == {default}, detail["description"]
        # The card of a node added with its defaults shows the same method.
        body = api.post(reverse("component-validate"), {"tree": {"component": "EnsembleRetriever"}},
                        content_type="application/json", HTTP_ACCEPT_LANGUAGE=language).json()
        assert body["config"]["params"]["fusion"] == default
        label = {"rrf": "RRF", "weighted": {"en": "weighted", "es": "ponderada", "zh-Hant": "加權"}[language]}[default]
        assert f" · {label} · " in body["nodes"][0]["representation"]
