"""The demo knowledge base `make run` seeds from Trellis's own guide."""

import pytest

import jobs
from knowledge.models import Document
from knowledge.services import demo, documents_requeue_interrupted, knowledge_base_seed_demo
from knowledge.services.demo import demo_sources

# Ingests guide pages with multilingual-e5-small and answers with the local model.
pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.slow,
              pytest.mark.timeout(900)]


def test_the_demo_knowledge_base_is_seeded_once_ingested_at_start_and_answers_through_the_cli(django_user_model, tmp_path, monkeypatch):
    monkeypatch.setenv("TRELLIS_MODELS_DIR", str(tmp_path))
    owner = django_user_model.objects.create_user(username="demo")
    every_page = demo_sources()
    assert any(path.name.endswith(".es.md") for path in every_page) and any(".zh-Hant." in path.name for path in every_page)
    # One page in each language: the whole guide takes minutes of e5 on two cores, and make run's
    # own seeding of all of it is what tests/e2e/test_newcomer.py waits for.
    sources = [path for path in every_page if path.name.startswith("getting-started.")]
    assert len(sources) == 3
    monkeypatch.setattr(demo, "demo_sources", lambda: sources)

    knowledge_base, added = knowledge_base_seed_demo(owner=owner)
    assert added == len(sources)
    assert set(knowledge_base.documents.values_list("status", flat=True)) == {Document.Status.QUEUED}
    assert knowledge_base_seed_demo(owner=owner) == (knowledge_base, 0)

    assert documents_requeue_interrupted() == len(sources)  # what the server does as it starts
    assert jobs.wait_until_idle(600)
    statuses = dict(knowledge_base.documents.values_list("name", "status"))
    assert set(statuses.values()) == {Document.Status.READY}, statuses
    assert knowledge_base.chunks.filter(text__icontains="hybrid").exists()
    assert knowledge_base.chunks.filter(text__icontains="混合").exists()
    _the_cli_answers_over_the_demo_knowledge_base_with_the_local_model_offline()


def _the_cli_answers_over_the_demo_knowledge_base_with_the_local_model_offline():
    import io
    import json

    from django.core.management import call_command

    output = io.StringIO()
    call_command("ask", "How do I build a hybrid retriever?", "--pipeline", "keyword", "--json", stdout=output)
    state = json.loads(output.getvalue())
    assert state["answer"].strip()
    assert state["chunks"] and state["trace"]["llm_calls"] == 1
    assert state["trace"]["steps"][0]["node"]["class"] == "BM25Retriever"
    names = {citation["document_name"] for citation in state["citations"]}
    assert names <= {f"docs › guide › {path.name}" for path in demo_sources()} | {"README.md"}


def test_seed_demo_gives_the_demo_user_the_guide_and_the_default_pipeline_once(django_user_model):
    import io

    from django.core.management import call_command

    from pipelines.models import Pipeline

    owner = django_user_model.objects.create_user(username="demo")
    call_command("seed_demo", stdout=io.StringIO())
    output = io.StringIO()
    call_command("seed_demo", stdout=output)
    assert "up to date" in output.getvalue()
    pipeline = Pipeline.objects.get(owner=owner)
    assert pipeline.name == "Hybrid"
    assert pipeline.knowledge_base.name == "Trellis guide"
    retriever = pipeline.strategy["params"]["retriever"]
    assert retriever["component"] == "EnsembleRetriever"
    assert [child["component"] for child in retriever["params"]["children"]] == ["BM25Retriever",
                                                                                 "DenseEmbeddingRetriever"]
