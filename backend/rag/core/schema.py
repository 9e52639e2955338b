"""JSON Schema of a component's parameters, multilingual or localised to one language."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from .multilingual import normalize_language
from .params import I18N_KEY

if TYPE_CHECKING:
    from .component import ConfigObject

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _inline_definitions(node: Any, definitions: dict[str, Any], depth: int = 0) -> Any:
    """Replace every local ``$ref`` by its definition so the schema stands alone."""
    if depth > 32:
        raise ValueError("schema definitions nest too deeply (recursive model?)")
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            target = copy.deepcopy(definitions[reference.removeprefix("#/$defs/")])
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            target.update(siblings)
            return _inline_definitions(target, definitions, depth + 1)
        return {key: _inline_definitions(value, definitions, depth) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline_definitions(item, definitions, depth) for item in node]
    return node


def _component_defaults(component: type[ConfigObject], schema: dict[str, Any]) -> None:
    """Give each nested-component field its default as JSON, every nested default filled in, so
    a form shows the component that applies (pydantic leaves factory defaults out)."""
    from .validation import validate_tree

    registry = component.registry()
    properties = schema.get("properties", {})
    for name, slot in component.slots().items():
        default = component.Params.model_fields[name].get_default(call_default_factory=True)
        if default is None or name not in properties:
            continue
        items = default if slot.multiple else [default]
        normalised = []
        for item in items:
            reference = item.model_dump(mode="json") if hasattr(item, "model_dump") else item
            config, _ = validate_tree(reference, registry=registry, kind=slot.kind)
            normalised.append(config or reference)
        properties[name]["default"] = normalised if slot.multiple else normalised[0]


def multilingual_schema(component: type[ConfigObject]) -> dict[str, Any]:
    """The parameters' JSON Schema with every translation kept under ``x-i18n`` keys.

    This is the form stored by the catalog; ``localize_schema`` turns it into plain JSON Schema.
    """
    raw = component.Params.model_json_schema()
    definitions = raw.pop("$defs", {})
    schema = _inline_definitions(raw, definitions)
    _component_defaults(component, schema)
    schema["$schema"] = JSON_SCHEMA_DIALECT
    schema["title"] = str(component.DISPLAY_NAME)
    schema["description"] = str(component.DESCRIPTION)
    schema[I18N_KEY] = {
        "title": component.DISPLAY_NAME.to_dict(),
        "description": component.DESCRIPTION.to_dict(),
    }
    return schema


def localize_schema(schema: dict[str, Any], language: str | None) -> dict[str, Any]:
    """A copy of a multilingual schema with titles and descriptions in ``language``
    (English where a translation is missing) and the ``x-i18n`` keys removed."""
    language = normalize_language(language)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            localized = {key: walk(value) for key, value in node.items() if key != I18N_KEY}
            for key, texts in (node.get(I18N_KEY) or {}).items():
                localized[key] = texts.get(language) or texts["en"]
            return localized
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(schema)
