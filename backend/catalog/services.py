"""Writes of the catalog: keeping component rows in step with the engine registry."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connections, transaction

from rag.components import load_components
from rag.core import LANGUAGES, ConfigObject, Registry

from .models import Component, ComponentTranslation


@dataclass(frozen=True)
class SyncReport:
    created: int
    updated: int
    retired: int

    def __str__(self) -> str:
        return f"{self.created} created, {self.updated} updated, {self.retired} retired"


def _engine_fields(component: type[ConfigObject]) -> dict:
    metadata = component.get_metadata()
    return {
        "kind": metadata["kind"],
        "category": metadata["category"],
        "composite": metadata["composite"],
        "child_kind": metadata["child_kind"] or "",
        "min_children": metadata["min_children"],
        "max_children": metadata["max_children"],
        "slots": metadata["slots"],
        "schema": component.get_schema(),
        "available": True,
    }


def _engine_texts(component: type[ConfigObject], language: str) -> dict:
    representation = component.get_representation()
    return {
        "display_name": component.DISPLAY_NAME.get(language),
        "short_name": component.get_short_name().get(language),
        "description": component.DESCRIPTION.get(language),
        "representation": representation.get(language) if representation is not None else "",
    }


def component_sync_all(*, registry: Registry | None = None, using: str = "default") -> SyncReport:
    """Create, update or retire catalog rows so they match the registry.

    Texts and icons an admin edited are kept; components the engine no longer registers are
    marked unavailable rather than deleted, so saved pipelines that name them stay readable.
    """
    if Component._meta.db_table not in connections[using].introspection.table_names():
        return SyncReport(0, 0, 0)
    registry = registry or load_components()
    created = updated = 0
    with transaction.atomic(using=using):
        rows = {row.name: row for row in Component.objects.using(using).prefetch_related("translations")}
        for component in registry:
            fields = _engine_fields(component)
            row = rows.pop(component.NAME, None)
            if row is None:
                row = Component.objects.using(using).create(name=component.NAME, icon=component.ICON, **fields)
                created += 1
            else:
                changed = {key: value for key, value in fields.items() if getattr(row, key) != value}
                if not row.icon_edited and row.icon != component.ICON:
                    changed["icon"] = component.ICON
                if changed:
                    for key, value in changed.items():
                        setattr(row, key, value)
                    row.save(using=using)
                    updated += 1
            _sync_translations(row, component, using=using)
        retired = Component.objects.using(using).filter(name__in=list(rows), available=True).update(available=False)
    return SyncReport(created, updated, retired)


def _sync_translations(row: Component, component: type[ConfigObject], *, using: str) -> None:
    existing = {translation.language: translation for translation in row.translations.all()}
    for language in LANGUAGES:
        texts = _engine_texts(component, language)
        translation = existing.get(language)
        if translation is None:
            ComponentTranslation.objects.using(using).create(component=row, language=language, **texts)
        elif not translation.edited and any(getattr(translation, key) != value for key, value in texts.items()):
            for key, value in texts.items():
                setattr(translation, key, value)
            translation.save(using=using)


def component_reset_to_engine(*, component: Component) -> None:
    """Drop an admin's overrides of ``component`` and take the engine's icon and texts again."""
    component.icon_edited = False
    component.save(update_fields=["icon_edited"])
    component.translations.update(edited=False)
    component_sync_all()
