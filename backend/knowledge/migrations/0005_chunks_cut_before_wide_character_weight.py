from django.db import migrations

COMPONENT = "RecursiveCharacterChunker"


def keep_how_stored_chunks_were_cut(apps, schema_editor):
    # The recursive chunker now counts a Chinese, Japanese or Korean character as three. A
    # knowledge base made before cut its chunks counting every character alike: its next
    # documents are cut the same way, so one knowledge base never holds chunks of two sizes,
    # until its owner changes the chunker (which cuts every document again).
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    for knowledge_base in KnowledgeBase.objects.filter(chunker__component=COMPONENT):
        params = knowledge_base.chunker.get("params") or {}
        if "wide_character_weight" not in params:
            knowledge_base.chunker = {**knowledge_base.chunker, "params": {**params, "wide_character_weight": 1}}
            knowledge_base.save(update_fields=["chunker"])


def forget_the_weight(apps, schema_editor):
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    for knowledge_base in KnowledgeBase.objects.filter(chunker__component=COMPONENT):
        params = dict(knowledge_base.chunker.get("params") or {})
        if params.pop("wide_character_weight", None) is not None:
            knowledge_base.chunker = {**knowledge_base.chunker, "params": params}
            knowledge_base.save(update_fields=["chunker"])


class Migration(migrations.Migration):

    dependencies = [
        ("knowledge", "0004_knowledgebase_translations"),
    ]

    operations = [migrations.RunPython(keep_how_stored_chunks_were_cut, forget_the_weight)]
