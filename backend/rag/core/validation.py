"""Recursive, total validation of ``{"component": name, "params": {...}}`` trees.

Every problem in a tree is reported at once, each at its JSON path from the document root
(``params.children[1].params.top_k``), never as a stack trace.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr, ValidationError

from .errors import ConfigValidationError, FieldError, Problem, UnknownComponentError
from .i18n import gettext_noop, ngettext_noop
from .params import Slot, component_slots

if TYPE_CHECKING:
    from .component import ConfigObject
    from .registry import Registry

MAX_DEPTH = 32
MAX_NODES = 500

_MESSAGES = {
    "missing": gettext_noop("is required"),
    "greater_than_equal": gettext_noop("must be ≥ {ge}"),
    "greater_than": gettext_noop("must be > {gt}"),
    "less_than_equal": gettext_noop("must be ≤ {le}"),
    "less_than": gettext_noop("must be < {lt}"),
    "multiple_of": gettext_noop("must be a multiple of {multiple_of}"),
    "literal_error": gettext_noop("must be one of {expected}"),
    "enum": gettext_noop("must be one of {expected}"),
    "int_type": gettext_noop("must be an integer"),
    "int_parsing": gettext_noop("must be an integer"),
    "int_from_float": gettext_noop("must be an integer"),
    "float_type": gettext_noop("must be a number"),
    "float_parsing": gettext_noop("must be a number"),
    "finite_number": gettext_noop("must be a finite number"),
    "bool_type": gettext_noop("must be true or false"),
    "bool_parsing": gettext_noop("must be true or false"),
    "string_type": gettext_noop("must be a string"),
    "string_too_short": gettext_noop("must have at least {min_length} character(s)"),
    "string_too_long": gettext_noop("must have at most {max_length} character(s)"),
    "string_pattern_mismatch": gettext_noop("must match the pattern {pattern}"),
    "too_short": gettext_noop("must have at least {min_length} item(s)"),
    "too_long": gettext_noop("must have at most {max_length} item(s)"),
    "list_type": gettext_noop("must be a list"),
    "dict_type": gettext_noop("must be an object"),
    "model_type": gettext_noop("must be an object"),
    "model_attributes_type": gettext_noop("must be an object"),
}


# What to do when a one-component slot is empty, by the kind it takes.
_CHOOSE = {
    "retriever": gettext_noop("Add a retriever here"),
    "strategy": gettext_noop("Choose a strategy here"),
    "llm": gettext_noop("Choose a language model here"),
    "embedding": gettext_noop("Choose an embedding model here"),
    "synthesizer": gettext_noop("Choose a response synthesizer here"),
    "prompt": gettext_noop("Choose a prompt here"),
    "query_transformer": gettext_noop("Choose how the question becomes queries here"),
    "vectorizer": gettext_noop("Choose a vectorizer here"),
}
_CHOOSE_ANY = gettext_noop("Choose a component here")

# How many children a composite takes: (exactly, at least, at most, between), by child kind.
_CHILDREN = {
    "retriever": (
        ngettext_noop("{component} takes exactly {count} retriever", "{component} takes exactly {count} retrievers"),
        ngettext_noop("{component} needs at least {count} retriever", "{component} needs at least {count} retrievers"),
        ngettext_noop("{component} takes at most {count} retriever", "{component} takes at most {count} retrievers"),
        gettext_noop("{component} takes between {min} and {max} retrievers"),
    ),
    None: (
        ngettext_noop("{component} takes exactly {count} component", "{component} takes exactly {count} components"),
        ngettext_noop("{component} needs at least {count} component",
                      "{component} needs at least {count} components"),
        ngettext_noop("{component} takes at most {count} component", "{component} takes at most {count} components"),
        gettext_noop("{component} takes between {min} and {max} components"),
    ),
}


def join_path(base: str, *parts: str | int) -> str:
    path = base
    for part in parts:
        if isinstance(part, int):
            path = f"{path}[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def _json_context(context: Mapping[str, Any] | None) -> dict[str, Any]:
    safe: dict[str, Any] = {}
    for key, value in (context or {}).items():
        if isinstance(value, (str, int, bool)) or value is None or isinstance(value, float) and math.isfinite(value):
            safe[key] = value
        else:
            safe[key] = str(value)
    return safe


def _suggest(word: str, candidates: list[str]) -> list[str]:
    return difflib.get_close_matches(word, candidates, n=3, cutoff=0.6)


def _literal(text: str) -> str:
    """``text`` as a template that formats to itself."""
    return text.replace("{", "{{").replace("}", "}}")


def _field_error(component: type[ConfigObject], base: str, raw: Mapping[str, Any]) -> FieldError:
    error_type = raw["type"]
    location = tuple(raw["loc"])
    path = join_path(base, *location)
    context = _json_context(raw.get("ctx"))
    if error_type == "extra_forbidden" and len(location) == 1:
        suggestions = _suggest(str(location[0]), list(component.Params.model_fields))
        context = {"component": component.NAME, "suggestions": ", ".join(suggestions)}
        if suggestions:
            return FieldError(path, gettext_noop("is not a parameter of {component} (did you mean {suggestions}?)"),
                              "unknown_parameter", context)
        return FieldError(path, gettext_noop("is not a parameter of {component}"), "unknown_parameter", context)
    slot = component_slots(component.Params).get(str(location[0])) if len(location) == 1 else None
    if slot is not None and slot.multiple and error_type in ("too_short", "too_long"):
        return _children_limits(component, path, slot)
    if (slot is not None and not slot.multiple and error_type in ("missing", "model_type", "dict_type")
            and (error_type == "missing" or raw.get("input") is None)):
        return FieldError(path, _CHOOSE.get(slot.kind, _CHOOSE_ANY), "component_missing", {"kind": slot.kind})
    if error_type == "value_error":
        return FieldError(path, _literal(raw["msg"].removeprefix("Value error, ")), error_type)
    template = _MESSAGES.get(error_type)
    if template is None:
        return FieldError(path, _literal(raw["msg"]), error_type)
    return FieldError(path, template, error_type, context)


def _children_limits(component: type[ConfigObject], path: str, slot: Slot) -> FieldError:
    """What a composite's children count must be, said as what to do ("Fusion needs at least 2
    retrievers")."""
    exactly, at_least, at_most, between = _CHILDREN.get(slot.kind, _CHILDREN[None])
    minimum, maximum = slot.min_children or 0, slot.max_children
    context: dict[str, Any] = {"component": component.get_short_name().to_dict(), "min": minimum, "max": maximum}
    if minimum == maximum:
        forms, count = exactly, minimum
    elif maximum is None:
        forms, count = at_least, minimum
    elif minimum == 0:
        forms, count = at_most, maximum
    else:
        return FieldError(path, between, "children_count", context)
    return FieldError(path, forms[0], "children_count", {**context, "count": count}, plural=forms[1])


def _secret_values(params: Any) -> dict[str, Any]:
    return {
        name: value.get_secret_value()
        for name, value in params
        if isinstance(value, SecretStr)
    }


def validate_params(
    component: type[ConfigObject],
    raw_params: Any,
    *,
    registry: Registry,
    path: str = "params",
    depth: int = 0,
    check_availability: bool = False,
) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """Validate ``raw_params`` for ``component``; returns (normalised params or None, errors).

    Normalised params carry every default, nested references normalised recursively. With
    ``check_availability``, components that cannot run here (a model with no local copy) are
    errors too.
    """
    if not isinstance(raw_params, Mapping):
        return None, [FieldError(path, _MESSAGES["dict_type"], "dict_type")]
    slots = component_slots(component.Params)
    errors: list[FieldError] = []
    validated = None
    # Components given already built (the Python API) were validated by their own constructor;
    # they are checked for kind here and stand in as their configuration.
    raw_params = {
        name: (_as_config(value) if name in slots else value) for name, value in raw_params.items()
    } | {"__built__": {name: value for name, value in raw_params.items() if name in slots}}
    built = raw_params.pop("__built__")
    try:
        validated = component.Params.model_validate(dict(raw_params))
    except ValidationError as exc:
        for raw in exc.errors(include_url=False):
            location = raw["loc"]
            # Problems inside a nested reference are reported by the recursion below, with
            # the nested component's own field names; keep only errors on the slot itself.
            if location and location[0] in slots and len(location) > 1:
                continue
            errors.append(_field_error(component, path, raw))

    nested: dict[str, Any] = {}
    for name, slot in slots.items():
        if name in raw_params:
            value = raw_params[name]
        else:
            default = component.Params.model_fields[name].get_default(call_default_factory=True)
            value = _ref_as_json(default)
        slot_path = join_path(path, name)
        given = built.get(name)
        if slot.multiple:
            if not isinstance(value, list):
                continue
            items = []
            for index, item in enumerate(value):
                instance = given[index] if isinstance(given, (list, tuple)) and index < len(given) else None
                if _is_built(instance):
                    errors.extend(_kind_errors(instance, slot.kind, join_path(slot_path, index)))
                    items.append(item)
                    continue
                normalised, item_errors = validate_tree(
                    item, registry=registry, kind=slot.kind, path=join_path(slot_path, index), depth=depth + 1,
                    check_availability=check_availability,
                )
                errors.extend(item_errors)
                items.append(normalised)
            nested[name] = items
        elif value is None:
            nested[name] = None
        elif _is_built(given):
            errors.extend(_kind_errors(given, slot.kind, slot_path))
            nested[name] = value
        elif isinstance(value, Mapping):
            normalised, item_errors = validate_tree(
                value, registry=registry, kind=slot.kind, path=slot_path, depth=depth + 1,
                check_availability=check_availability,
            )
            errors.extend(item_errors)
            nested[name] = normalised

    if errors or validated is None:
        return None, errors
    params = validated.model_dump(mode="json", exclude=set(slots))
    params.update(_secret_values(validated))
    params.update(nested)
    return params, []


def _is_built(value: Any) -> bool:
    return hasattr(value, "to_config") and hasattr(value, "KIND")


def _as_config(value: Any) -> Any:
    if _is_built(value):
        return value.to_config()
    if isinstance(value, (list, tuple)):
        return [_as_config(item) for item in value]
    return value


def _kind_errors(instance: Any, kind: str, path: str) -> list[FieldError]:
    if kind == instance.KIND:
        return []
    return [FieldError(join_path(path, "component"),
                       gettext_noop("expects a component of kind {expected}; {name} is of kind {kind}"),
                       "wrong_kind", {"name": instance.NAME, "kind": instance.KIND, "expected": kind})]


def _ref_as_json(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_ref_as_json(item) for item in value]
    return value


def _shape_error(raw: Any, path: str) -> FieldError | None:
    """Walk ``raw`` without recursion: refuse a tree of more than ``MAX_NODES`` components,
    and a Python structure that contains itself (JSON cannot express one, but the Python API
    accepts any dict)."""
    nodes = 0
    stack: list[tuple[Any, str, tuple[int, ...]]] = [(raw, path, ())]
    while stack:
        value, where, ancestors = stack.pop()
        if not isinstance(value, (Mapping, list, tuple)):
            continue
        if id(value) in ancestors:
            return FieldError(where, gettext_noop("contains itself; a component tree cannot have cycles"), "cycle")
        inside = (*ancestors, id(value))
        if isinstance(value, Mapping):
            if "component" in value:
                nodes += 1
                if nodes > MAX_NODES:
                    return FieldError(path,
                                      gettext_noop("has more than {max_nodes} components, the most a tree may have"),
                                      "too_many_nodes", {"max_nodes": MAX_NODES})
            stack.extend((item, join_path(where, str(key)), inside) for key, item in value.items())
        else:
            stack.extend((item, join_path(where, index), inside) for index, item in enumerate(value))
    return None


def validate_tree(
    raw: Any,
    *,
    registry: Registry,
    kind: str | None = None,
    path: str = "",
    depth: int = 0,
    check_availability: bool = False,
) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """Validate a component reference; returns (normalised reference or None, errors)."""
    if depth == 0:
        problem = _shape_error(raw, path)
        if problem is not None:
            return None, [problem]
    if depth > MAX_DEPTH:
        return None, [FieldError(path, gettext_noop("nests deeper than {max_depth} levels"), "too_deep",
                                 {"max_depth": MAX_DEPTH})]
    if not isinstance(raw, Mapping):
        return None, [FieldError(path, gettext_noop('must be an object like {example}'), "ref_type",
                                 {"example": '{"component": "<name>", "params": {...}}'})]
    errors = [
        FieldError(join_path(path, str(key)),
                   gettext_noop('is not allowed here; a component has only "component" and "params"'), "unknown_key")
        for key in raw
        if key not in ("component", "params")
    ]
    name = raw.get("component")
    if name is None:
        errors.append(FieldError(join_path(path, "component"), _MESSAGES["missing"], "missing"))
        return None, errors
    if not isinstance(name, str):
        errors.append(FieldError(join_path(path, "component"), _MESSAGES["string_type"], "string_type"))
        return None, errors
    try:
        component = registry.get(name)
    except UnknownComponentError as exc:
        # Only what could stand here, so the suggestion is one the builder's picker offers too.
        suggestions = _suggest(name, [item.NAME for item in registry.of_kind(kind)]) if kind else exc.suggestions
        context = {"name": name, "suggestions": ", ".join(suggestions)}
        template = (gettext_noop("unknown component {name!r}; did you mean {suggestions}?") if suggestions
                    else gettext_noop("unknown component {name!r}"))
        errors.append(FieldError(join_path(path, "component"), template, "unknown_component", context))
        return None, errors
    if kind is not None and kind != component.KIND:
        errors.append(FieldError(
            join_path(path, "component"),
            gettext_noop("expects a component of kind {expected}; {name} is of kind {kind}"),
            "wrong_kind",
            {"name": name, "kind": component.KIND, "expected": kind},
        ))
        return None, errors
    params, param_errors = validate_params(
        component, raw.get("params", {}), registry=registry, path=join_path(path, "params"), depth=depth,
        check_availability=check_availability,
    )
    errors.extend(param_errors)
    if params is None or errors:
        return None, errors
    if check_availability:
        unavailable = component.availability_problem(params)
        if isinstance(unavailable, Problem):
            return None, [FieldError(join_path(path, "component"), unavailable.template, "unavailable",
                                     unavailable.context, action=unavailable.action)]
        if unavailable:
            return None, [FieldError(join_path(path, "component"), "{problem}", "unavailable",
                                     {"problem": unavailable})]
    return {"component": name, "params": params}, []


def validate_or_raise(
    raw: Any, *, registry: Registry, kind: str | None = None, path: str = "", check_availability: bool = False
) -> dict[str, Any]:
    """Like ``validate_tree`` but raises ``ConfigValidationError`` with every error."""
    normalised, errors = validate_tree(raw, registry=registry, kind=kind, path=path,
                                       check_availability=check_availability)
    if errors:
        raise ConfigValidationError(errors)
    assert normalised is not None
    return normalised
