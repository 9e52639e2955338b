from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from knowledge.models import KnowledgeBase


class EvaluationDataset(models.Model):
    """A corpus stored as a knowledge base (one document per corpus record), with the queries,
    their reference answers and the relevance judgements that score retrieval over it."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="evaluation_datasets")
    name = models.CharField(_("name"), max_length=200)
    source = models.CharField(_("source"), max_length=300,
                              help_text=_("Where it came from: shared:<name> or upload:<file name>."))
    language = models.CharField(_("language"), max_length=16, default="en")
    knowledge_base = models.OneToOneField(KnowledgeBase, on_delete=models.CASCADE, related_name="evaluation_dataset")
    queries = models.JSONField(default=list, help_text=_('[{"id", "text", "answers"}] in dataset order.'))
    qrels = models.JSONField(default=dict, help_text=_("{query id: {corpus id: grade}}."))
    corpus_ids = models.JSONField(default=dict, help_text=_("{document id: corpus id}: how a retrieved document is scored."))
    document_count = models.PositiveIntegerField(default=0)
    query_count = models.PositiveIntegerField(default=0)
    has_answers = models.BooleanField(default=False)
    imported = models.BooleanField(default=False, help_text=_("Every corpus document has been handed to ingestion."))
    error = models.TextField(_("error"), blank=True, help_text=_("Why the import failed."))
    dropped = models.JSONField(default=list, blank=True, help_text=_(
        '[{"file", "line", "code", "template", "context"}]: records left out of the import, and why.'))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_evaluation_dataset_per_owner")]
        verbose_name = _("evaluation dataset")
        verbose_name_plural = _("evaluation datasets")

    def __str__(self) -> str:
        return self.name


class Evaluation(models.Model):
    """One run of one or more pipelines over a dataset, its progress and its results."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="evaluations")
    dataset = models.ForeignKey(EvaluationDataset, on_delete=models.CASCADE, related_name="evaluations")
    pipelines = models.JSONField(
        default=list, help_text=_('[{"name", "pipeline_id" or "preset", "strategy"}]: what was run, as it was then.'))
    query_limit = models.PositiveIntegerField(null=True, blank=True)
    depth = models.PositiveIntegerField(null=True, blank=True, default=100)
    answer_queries = models.PositiveIntegerField(default=0)
    seed = models.IntegerField(default=0)
    judge = models.JSONField(null=True, blank=True, help_text=_("The LLM judging faithfulness, if any."))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True)
    summary = models.JSONField(default=list, blank=True,
                               help_text=_("Per pipeline: the averaged figures of the results, read by lists."))
    report_dir = models.CharField(max_length=500, blank=True, help_text=_("Relative to the data directory."))
    error = models.TextField(_("error"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("evaluation")
        verbose_name_plural = _("evaluations")

    def __str__(self) -> str:
        return f"Evaluation {self.pk} on {self.dataset}"


class PipelineTestSet(models.Model):
    """What the builder scores a pipeline's tree on while it is edited: an evaluation dataset over
    the pipeline's knowledge base, or golden questions (``evaluation.live.test_set_validate``)."""

    pipeline = models.OneToOneField("pipelines.Pipeline", on_delete=models.CASCADE, related_name="test_set")
    definition = models.JSONField(help_text=_(
        '{"dataset": <evaluation dataset id>} or {"questions": [{"question", "documents": [document ids]}]}.'))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("pipeline test set")
        verbose_name_plural = _("pipeline test sets")

    def __str__(self) -> str:
        return f"Test set of {self.pipeline}"
