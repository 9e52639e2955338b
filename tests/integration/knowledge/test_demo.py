"""The demo knowledge base `make run` seeds from Trellis's own guide."""

import pytest

import jobs
from knowledge.models import Document
from knowledge.services import documents_requeue_interrupted, knowledge_base_seed_demo
from knowledge.services.demo import demo_sources

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_seeding_queues_every_guide_page_once_and_the_server_start_ingests_them(django_user_model):
    owner = django_user_model.objects.create_user(username="demo")
    sources = demo_sources()
    assert any(path.name.endswith(".es.md") for path in sources) and any(".zh-Hant." in path.name for path in sources)

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
