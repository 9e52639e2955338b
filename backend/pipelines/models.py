from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from knowledge.models import KnowledgeBase


class Pipeline(models.Model):
    """A saved pipeline: a strategy (whose retriever slot holds the retriever tree) over one
    knowledge base. ``strategy`` is stored normalised, every default filled."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pipelines")
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    translations = models.JSONField(
        _("texts in every language"), default=dict, blank=True,
        help_text=_('Names Trellis wrote itself, by field and language ({"name": {"en": …, "es": …}}); '
                    "the API shows the reader's language until a user edits the field."),
    )
    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="pipelines")
    strategy = models.JSONField(_("strategy"), help_text=_("A strategy component reference."))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_pipeline_name_per_owner")]
        verbose_name = _("pipeline")
        verbose_name_plural = _("pipelines")

    def __str__(self) -> str:
        return self.name

    def document(self) -> dict:
        """The exportable JSON document (DESIGN §6), with the description and the knowledge base
        it ran over, so an import by the same owner keeps it."""
        return {"name": self.name, "version": 1, "description": self.description,
                "knowledge_base": {"id": self.knowledge_base_id, "name": self.knowledge_base.name},
                "strategy": self.strategy}
