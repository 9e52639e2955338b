"""Reads of the catalog: components localised to one language, and tree validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from common.i18n import field_error_data, translate
from common.reach import reach_errors
from rag.components import load_components
from rag.core import FieldError, localize_schema, normalize_language, render_representation, validate_tree
from rag.core.params import I18N_KEY, LABELS_KEY
from rag.core.representation import LIST_SEPARATORS, value_key
from rag.core.tree import iter_nodes

from .models import Component


def _texts(component: Component, language: str) -> dict[str, str]:
    by_language = {row.language: row for row in component.translations.all()}
    chosen = by_language.get(language) or by_language.get("en")
    if chosen is None:
        return {"display_name": component.name, "short_name": component.name, "description": "", "representation": ""}
    english = by_language.get("en")
    display_name = chosen.display_name or (english.display_name if english else component.name)
    return {
        "display_name": display_name,
        "short_name": chosen.short_name or display_name,
        "description": chosen.description or (english.description if english else ""),
        "representation": chosen.representation,
    }


def _value_labels(component: Component, language: str) -> dict[str, dict[str, str]]:
    """``{param: {value: label}}`` of the component's enumerated params, in ``language``."""
    labels = {}
    for name, prop in (component.schema.get("properties") or {}).items():
        tables = (prop.get(I18N_KEY) or {}).get(LABELS_KEY) if isinstance(prop, dict) else None
        if tables:
            labels[name] = tables.get(language) or tables["en"]
    return labels


def _localized(component: Component, language: str, *, with_schema: bool) -> dict[str, Any]:
    texts = _texts(component, language)
    data = {
        "name": component.name,
        "kind": component.kind,
        "category": component.category,
        "icon": component.icon,
        "display_name": texts["display_name"],
        "short_name": texts["short_name"],
        "description": texts["description"],
        "representation": texts["representation"] or None,
        "value_labels": _value_labels(component, language),
        "composite": component.composite,
        "child_kind": component.child_kind or None,
        "min_children": component.min_children,
        "max_children": component.max_children,
        "slots": component.slots,
        "available": component.available,
    }
    if with_schema:
        data["schema"] = localize_schema(component.schema, language)
    return data


def component_list(
    *, language: str | None, kind: str | None = None, category: str | None = None, include_unavailable: bool = False
) -> list[dict[str, Any]]:
    """Every catalog component (optionally of one kind or category), texts in ``language``."""
    language = normalize_language(language)
    queryset = Component.objects.prefetch_related("translations")
    if kind:
        queryset = queryset.filter(kind=kind)
    if category:
        queryset = queryset.filter(category=category)
    if not include_unavailable:
        queryset = queryset.filter(available=True)
    return [_localized(component, language, with_schema=False) for component in queryset]


def component_get(*, name: str, language: str | None) -> dict[str, Any]:
    """One component with its JSON Schema, texts in ``language``; raises ``Component.DoesNotExist``."""
    component = Component.objects.prefetch_related("translations").get(name=name)
    return _localized(component, normalize_language(language), with_schema=True)


@dataclass
class CatalogVocabulary:
    """The catalog's words in one language: short names, value labels and representation
    templates, admins' edits included (a ``rag.core.Vocabulary``)."""

    texts: dict[str, dict[str, str]]
    labels: dict[str, dict[str, dict[str, str]]]
    list_separator: str = ", "

    def name(self, component: str) -> str:
        return self.texts[component]["short_name"] if component in self.texts else component

    def label(self, component: str, param: str, value: Any) -> str | None:
        return self.labels.get(component, {}).get(param, {}).get(value_key(value))

    def representation(self, reference: dict[str, Any]) -> str:
        """``reference`` rendered with its component's template; its description when the
        template shows nothing (or there is none)."""
        texts = self.texts.get(reference["component"])
        if texts is None:
            return reference["component"]
        rendered = render_representation(texts["representation"], reference, self) if texts["representation"] else ""
        return rendered or texts["description"]


def component_vocabulary(*, language: str | None) -> CatalogVocabulary:
    """Every component's words in ``language``, in one query."""
    language = normalize_language(language)
    rows = Component.objects.prefetch_related("translations")
    texts, labels = {}, {}
    for row in rows:
        texts[row.name] = _texts(row, language)
        labels[row.name] = _value_labels(row, language)
    return CatalogVocabulary(texts, labels, LIST_SEPARATORS.get(language, ", "))


@dataclass
class TreeValidation:
    valid: bool
    config: dict[str, Any] | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)


def localize_field_error(error: FieldError, language: str | None) -> str:
    """``error``'s message in ``language``, through the gettext catalogues."""
    return translate(error.template, error.context, language, fallback=error.message, plural=error.plural)


def component_tree_validate(*, tree: Any, language: str | None, kind: str | None = None,
                            owner: AbstractBaseUser | None = None) -> TreeValidation:
    """Validate a component tree for ``owner``; on success render every node's representation.

    What ``owner`` may reach (addresses, model files) is checked before whether a model is
    there, as saving does: a user who may not name a server path is told so, the same way
    whether it exists or not. Representations use the catalog's templates, so an admin's edits
    show up here too.
    """
    registry = load_components()
    config, errors = validate_tree(tree, registry=registry, kind=kind)
    if not errors:
        assert config is not None
        errors = reach_errors(owner=owner, config=config, path="")
    if not errors:
        config, errors = validate_tree(tree, registry=registry, kind=kind, check_availability=True)
    if errors:
        return TreeValidation(
            valid=False,
            errors=[field_error_data(error, language) for error in errors],
        )
    assert config is not None
    vocabulary = component_vocabulary(language=language)
    nodes = []
    for path, reference in iter_nodes(config, registry=registry):
        texts = vocabulary.texts.get(reference["component"], {})
        nodes.append({
            "path": path,
            "component": reference["component"],
            "display_name": texts.get("display_name", reference["component"]),
            "representation": vocabulary.representation(reference),
        })
    return TreeValidation(valid=True, config=config, nodes=nodes)


def preset_list(*, language: str | None) -> list[dict[str, Any]]:
    """The retriever presets, texts in ``language``, each with whether it can run here."""
    from rag.presets import PRESETS

    registry = load_components()
    rows = []
    for preset in PRESETS:
        config, errors = validate_tree(preset.config(), registry=registry, kind="retriever", check_availability=True)
        rows.append({
            "name": preset.name,
            "display_name": preset.display_name.get(language),
            "description": preset.description.get(language),
            "icon": preset.icon,
            "default": preset.default,
            "tree": config or preset.config(),
            "available": not errors,
            "unavailable_reason": "; ".join(localize_field_error(error, language) for error in errors) or None,
            # The first thing the user can do about it in the application (install the model it needs).
            "unavailable_action": next((error.action for error in errors if error.action is not None), None),
        })
    return rows
