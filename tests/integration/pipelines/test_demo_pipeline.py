"""The demo pipeline ``make run`` seeds: what its description says is what it does."""

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.services import demo as knowledge_demo
from knowledge.services import knowledge_base_seed_demo
from pipelines.services import pipeline_seed_demo
from rag.components import load_components
from rag.core import iter_nodes

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

METHOD_WORDS = {"rrf": "reciprocal rank", "weighted": "normalised"}
RETRIEVER_WORDS = {"BM25Retriever": "BM25", "DenseEmbeddingRetriever": "dense"}


@pytest.fixture
def demo(user, monkeypatch):
    monkeypatch.setattr(knowledge_demo, "demo_sources", lambda: [])  # the names, not the pages
    knowledge_base, _ = knowledge_base_seed_demo(owner=user)
    return pipeline_seed_demo(owner=user, knowledge_base=knowledge_base)


@pytest.fixture
def api(user):
    client = Client()
    client.force_login(user)
    return client


SHOWN = {
    "en": {"pipeline": "Hybrid", "knowledge_base": "Trellis guide",
           "pipeline_description": "The recommended starting point", "knowledge_base_description": "Trellis's own"},
    "es": {"pipeline": "Híbrido", "knowledge_base": "Guía de Trellis",
           "pipeline_description": "El punto de partida recomendado: BM25 y recuperación densa, con sus puntuaciones "
                                   "normalizadas y sumadas",
           "knowledge_base_description": "La documentación de Trellis"},
    "zh-Hant": {"pipeline": "混合", "knowledge_base": "Trellis 指南",
                "pipeline_description": "建議的起點：結合 BM25 與稠密檢索，將其分數正規化後相加",
                "knowledge_base_description": "Trellis 自己的說明文件"},
}


@pytest.mark.parametrize("language", SHOWN)
def test_the_demos_names_and_descriptions_read_in_the_requests_language(api, demo, language):
    shown = SHOWN[language]
    pipeline = api.get(reverse("pipeline-detail", args=[demo.pk]), HTTP_ACCEPT_LANGUAGE=language).json()
    assert pipeline["name"] == shown["pipeline"]
    assert pipeline["description"].startswith(shown["pipeline_description"]), pipeline["description"]
    assert pipeline["knowledge_base_name"] == shown["knowledge_base"]
    [listed] = api.get(reverse("pipeline-list"), HTTP_ACCEPT_LANGUAGE=language).json()
    assert listed["name"] == shown["pipeline"]
    [knowledge_base] = api.get(reverse("knowledge-base-list"), HTTP_ACCEPT_LANGUAGE=language).json()
    assert knowledge_base["name"] == shown["knowledge_base"]
    assert knowledge_base["description"].startswith(shown["knowledge_base_description"]), knowledge_base["description"]


def test_saving_the_demo_with_the_name_shown_keeps_it_multilingual_and_a_rename_keeps_the_users_text(api, demo):
    detail = reverse("pipeline-detail", args=[demo.pk])
    # The Spanish builder sends back the name and description it shows.
    shown = api.get(detail, HTTP_ACCEPT_LANGUAGE="es").json()
    response = api.patch(detail, {"name": shown["name"], "description": shown["description"]},
                         content_type="application/json", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 200, response.content
    assert api.get(detail, HTTP_ACCEPT_LANGUAGE="zh-Hant").json()["name"] == "混合"
    assert api.get(detail, HTTP_ACCEPT_LANGUAGE="en").json()["name"] == "Hybrid"

    api.patch(detail, {"name": "Mi híbrido"}, content_type="application/json", HTTP_ACCEPT_LANGUAGE="es")
    for language in SHOWN:
        body = api.get(detail, HTTP_ACCEPT_LANGUAGE=language).json()
        assert body["name"] == "Mi híbrido"
        assert body["description"].startswith(SHOWN[language]["pipeline_description"])  # not edited: still theirs

    knowledge_base = reverse("knowledge-base-detail", args=[demo.knowledge_base_id])
    api.patch(knowledge_base, {"description": "Notas"}, content_type="application/json")
    body = api.get(knowledge_base, HTTP_ACCEPT_LANGUAGE="zh-Hant").json()
    assert (body["name"], body["description"]) == ("Trellis 指南", "Notas")


def test_the_demo_pipelines_description_names_the_fusion_and_retrievers_it_is_configured_with(demo):
    nodes = [node for _, node in iter_nodes(demo.strategy, registry=load_components())]
    fusion = {node["params"]["fusion"] for node in nodes if node["component"] == "EnsembleRetriever"}
    said = {method for method, word in METHOD_WORDS.items() if word in demo.description}
    assert said == fusion, f"configured {fusion}, the description says {said}: {demo.description!r}"
    named = {component for component, word in RETRIEVER_WORDS.items() if word in demo.description}
    assert named == {node["component"] for node in nodes} & set(RETRIEVER_WORDS)
    synthesizer = demo.strategy["params"]["response_synthesizer"]["params"]["llm"]["component"]
    assert synthesizer == "LocalLLM" and "local model" in demo.description
    for language, texts in demo.translations["description"].items():
        assert texts.startswith(SHOWN[language]["pipeline_description"])
