from django.db import migrations


def keep_under_evaluation(apps, schema_editor):
    # Every corpus imported before the flag existed is an evaluation dataset's knowledge base
    # nobody promoted (there was no way to); it joins the Evaluation page's, leaving the
    # everyday lists. Pipelines built on one keep running: only listing changes.
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    KnowledgeBase.objects.filter(evaluation_dataset__isnull=False).update(evaluation_only=True)


def list_everywhere(apps, schema_editor):
    KnowledgeBase = apps.get_model("knowledge", "KnowledgeBase")
    KnowledgeBase.objects.filter(evaluation_only=True).update(evaluation_only=False)


class Migration(migrations.Migration):

    dependencies = [
        ("evaluation", "0004_verbose_names"),
        ("knowledge", "0003_knowledgebase_evaluation_only"),
    ]

    operations = [migrations.RunPython(keep_under_evaluation, list_everywhere)]
