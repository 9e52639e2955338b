"""Declaring a component's parameters: pydantic models with multilingual field texts.

A component's settings are exactly the fields of its ``Params`` model. Three kinds of field:

* plain values (``param``): numbers, strings, enums, with bounds;
* a nested component (``component_param``): a ``{"component": name, "params": {...}}`` reference
  restricted to one component kind;
* children (``children_param``): a list of such references, with count limits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .multilingual import LANGUAGES, MultilingualString, normalize_language
from .representation import value_key

I18N_KEY = "x-i18n"
KIND_KEY = "x-component-kind"
MULTIPLE_KEY = "x-component-multiple"
# ``{value: label}`` of an enumerated parameter; under ``x-i18n`` one table per language.
LABELS_KEY = "x-enum-labels"


class Params(BaseModel):
    """Base of every component's ``Params``: unknown keys and loose types are refused."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)


class ComponentRef(BaseModel):
    # The serialised shape of a nested component: {"component": name, "params": {...}}. No
    # docstring: pydantic would copy it into every schema as the field's description.

    model_config = ConfigDict(extra="forbid", strict=True, title="Component")

    component: str
    params: dict[str, Any] = Field(default_factory=dict)


def ref(component: str, **params: Any) -> dict[str, Any]:
    """A component reference as plain JSON, for defaults and tests."""
    return {"component": component, "params": params}


def _texts(title: MultilingualString, description: MultilingualString | None) -> dict[str, Any]:
    texts: dict[str, Any] = {"title": title.to_dict()}
    if description is not None:
        texts["description"] = description.to_dict()
    return {I18N_KEY: texts}


def param(
    default: Any = ...,
    *,
    title: MultilingualString,
    description: MultilingualString | None = None,
    default_factory: Callable[[], Any] | None = None,
    labels: Mapping[Any, MultilingualString] | None = None,
    **constraints: Any,
) -> Any:
    """A plain parameter. ``constraints`` are pydantic's (``ge``, ``le``, ``min_length``, ...).

    ``labels`` name the values of an enumerated parameter for people (``{"rrf": ml("RRF", ...)}``):
    forms offer them and representations show them.
    """
    extra = _texts(title, description)
    if labels:
        extra[I18N_KEY][LABELS_KEY] = {
            language: {value_key(value): label.get(language) for value, label in labels.items()}
            for language in LANGUAGES
        }
    extra.update(constraints.pop("json_schema_extra", {}) or {})
    if default_factory is not None:
        return Field(
            default_factory=default_factory,
            title=str(title),
            description=str(description) if description else None,
            json_schema_extra=extra,
            **constraints,
        )
    return Field(
        default,
        title=str(title),
        description=str(description) if description else None,
        json_schema_extra=extra,
        **constraints,
    )


def component_param(
    kind: str,
    *,
    title: MultilingualString,
    description: MultilingualString | None = None,
    default: dict[str, Any] | None = None,
    optional: bool = False,
) -> Any:
    """A nested component of ``kind``. Type the field ``ComponentRef`` (or ``ComponentRef | None``
    when ``optional``; ``None`` then means "let the runtime choose", e.g. a knowledge base's own
    embedding model)."""
    extra = _texts(title, description)
    extra[KIND_KEY] = kind
    extra[MULTIPLE_KEY] = False
    if default is None and not optional:
        return Field(..., title=str(title), description=str(description) if description else None,
                     json_schema_extra=extra)
    if default is None:
        return Field(None, title=str(title), description=str(description) if description else None,
                     json_schema_extra=extra)
    return Field(
        default_factory=lambda: ComponentRef.model_validate(default),
        title=str(title),
        description=str(description) if description else None,
        json_schema_extra=extra,
    )


def children_param(
    kind: str = "retriever",
    *,
    title: MultilingualString,
    description: MultilingualString | None = None,
    min_children: int = 1,
    max_children: int | None = None,
    default: list[dict[str, Any]] | None = None,
) -> Any:
    """The children of a composite. Type the field ``list[ComponentRef]``."""
    extra = _texts(title, description)
    extra[KIND_KEY] = kind
    extra[MULTIPLE_KEY] = True
    bounds: dict[str, Any] = {"min_length": min_children}
    if max_children is not None:
        bounds["max_length"] = max_children
    if default is None:
        return Field(..., title=str(title), description=str(description) if description else None,
                     json_schema_extra=extra, **bounds)
    return Field(
        default_factory=lambda: [ComponentRef.model_validate(item) for item in default],
        title=str(title),
        description=str(description) if description else None,
        json_schema_extra=extra,
        **bounds,
    )


@dataclass(frozen=True)
class Slot:
    """A field of a ``Params`` model that holds nested components."""

    name: str
    kind: str
    multiple: bool
    required: bool
    min_children: int | None = None
    max_children: int | None = None


def component_slots(params_model: type[Params]) -> dict[str, Slot]:
    """The fields of ``params_model`` declared with ``component_param`` or ``children_param``."""
    slots: dict[str, Slot] = {}
    for name, info in params_model.model_fields.items():
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or KIND_KEY not in extra:
            continue
        multiple = bool(extra.get(MULTIPLE_KEY))
        min_children = max_children = None
        if multiple:
            for constraint in info.metadata:
                min_children = getattr(constraint, "min_length", min_children)
                max_children = getattr(constraint, "max_length", max_children)
        slots[name] = Slot(
            name=name,
            kind=str(extra[KIND_KEY]),
            multiple=multiple,
            required=info.is_required(),
            min_children=min_children,
            max_children=max_children,
        )
    return slots


def enum_label(params_model: type[Params], name: str, value: Any, language: str | None) -> str | None:
    """The label ``labels`` gave ``value`` of ``params_model``'s field ``name``, in ``language``."""
    info = params_model.model_fields.get(name)
    extra = info.json_schema_extra if info is not None else None
    if not isinstance(extra, dict):
        return None
    texts = extra.get(I18N_KEY)
    tables = texts.get(LABELS_KEY) if isinstance(texts, dict) else None
    if not isinstance(tables, dict):
        return None
    key = value_key(value)
    for tag in (normalize_language(language), "en"):
        table = tables.get(tag)
        label = table.get(key) if isinstance(table, dict) else None
        if isinstance(label, str) and label:
            return label
    return None
