from django.db import models
from django.utils.translation import gettext_lazy as _

from rag.core.multilingual import LANGUAGES

LANGUAGE_CHOICES = [(language, language) for language in LANGUAGES]


class Component(models.Model):
    """A registered engine component as the catalog shows it; synced from the registry.

    The engine owns names, kinds and schemas. Admins may override the icon and the texts;
    an overridden field is flagged so the next sync keeps the admin's value.
    """

    name = models.CharField(_("name"), max_length=64, unique=True)
    kind = models.CharField(_("kind"), max_length=32, db_index=True)
    category = models.CharField(_("category"), max_length=64)
    icon = models.CharField(_("icon"), max_length=64, help_text=_("A lucide icon name, e.g. shuffle."))
    icon_edited = models.BooleanField(_("icon edited by an admin"), default=False)
    composite = models.BooleanField(_("composite"), default=False)
    child_kind = models.CharField(_("child kind"), max_length=32, blank=True)
    min_children = models.PositiveIntegerField(_("minimum children"), null=True, blank=True)
    max_children = models.PositiveIntegerField(_("maximum children"), null=True, blank=True)
    slots = models.JSONField(_("nested component slots"), default=dict, blank=True)
    schema = models.JSONField(_("JSON Schema (multilingual)"))
    available = models.BooleanField(
        _("available"), default=True, help_text=_("False once the engine no longer registers this component.")
    )
    synced_at = models.DateTimeField(_("synced at"), auto_now=True)

    class Meta:
        ordering = ["kind", "name"]
        verbose_name = _("component")
        verbose_name_plural = _("components")

    def __str__(self) -> str:
        return self.name


class ComponentTranslation(models.Model):
    """A component's texts in one language."""

    component = models.ForeignKey(Component, on_delete=models.CASCADE, related_name="translations")
    language = models.CharField(_("language"), max_length=16, choices=LANGUAGE_CHOICES)
    display_name = models.CharField(_("display name"), max_length=200)
    short_name = models.CharField(
        _("short name"), max_length=100, blank=True,
        help_text=_("What representations call a nested component of this kind (\"BM25\", \"Fusion\"); "
                    "empty uses the display name."),
    )
    description = models.TextField(_("description"))
    representation = models.TextField(
        _("representation template"), blank=True,
        help_text=_("Placeholders such as {top_k} or {embedding_model.component}; empty shows the description."),
    )
    edited = models.BooleanField(
        _("edited by an admin"), default=False, help_text=_("Edited texts are kept when the catalog is synced.")
    )

    class Meta:
        ordering = ["component", "language"]
        constraints = [
            models.UniqueConstraint(fields=["component", "language"], name="unique_component_language"),
        ]
        verbose_name = _("component translation")
        verbose_name_plural = _("component translations")

    def __str__(self) -> str:
        return f"{self.component.name} ({self.language})"
