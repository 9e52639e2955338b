"""Knowledge bases made before the recursive chunker weighed wide characters keep cutting their
next documents as their stored chunks were cut."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

BEFORE = [("knowledge", "0004_knowledgebase_translations")]
AFTER = [("knowledge", "0005_chunks_cut_before_wide_character_weight")]


def migrated(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def test_a_knowledge_base_made_before_the_weight_counts_every_character_alike_and_others_are_untouched():
    apps = migrated(BEFORE)
    User = apps.get_model("auth", "User")
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    owner = User.objects.create(username="before")
    embedding = {"component": "MultilingualE5Embedding", "params": {}}
    recursive = KnowledgeBase.objects.create(owner=owner, name="zh", language="zh-Hant", embedding_model=embedding,
                                             chunker={"component": "RecursiveCharacterChunker",
                                                      "params": {"chunk_size": 800, "chunk_overlap": 80}})
    tokens = KnowledgeBase.objects.create(owner=owner, name="tokens", embedding_model=embedding,
                                          chunker={"component": "TokenChunker", "params": {"chunk_size": 256}})

    apps = migrated(AFTER)
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    assert KnowledgeBase.objects.get(pk=recursive.pk).chunker == {
        "component": "RecursiveCharacterChunker",
        "params": {"chunk_size": 800, "chunk_overlap": 80, "wide_character_weight": 1}}
    assert KnowledgeBase.objects.get(pk=tokens.pk).chunker == {"component": "TokenChunker",
                                                               "params": {"chunk_size": 256}}

    apps = migrated(BEFORE)
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    assert KnowledgeBase.objects.get(pk=recursive.pk).chunker["params"] == {"chunk_size": 800, "chunk_overlap": 80}
    migrated(AFTER)
