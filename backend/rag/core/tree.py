"""Walking a normalised component tree."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .params import component_slots
from .registry import Registry
from .validation import join_path


def iter_nodes(config: Mapping[str, Any], *, registry: Registry, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Yield ``(json_path, reference)`` for every node of a validated tree, parents first."""
    yield path, config
    component = registry.get(config["component"])
    params = config.get("params") or {}
    for name, slot in component_slots(component.Params).items():
        value = params.get(name)
        slot_path = join_path(path, "params", name)
        if slot.multiple:
            for index, child in enumerate(value or []):
                yield from iter_nodes(child, registry=registry, path=join_path(slot_path, index))
        elif value is not None:
            yield from iter_nodes(value, registry=registry, path=slot_path)


def credential_references(config: Mapping[str, Any], *, registry: Registry) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(json_path, credential name, node)`` of every credential a validated tree names (the
    params marked ``x-credential``), in tree order."""
    found = []
    for path, node in iter_nodes(config, registry=registry):
        fields = registry.get(node["component"]).Params.model_fields
        for name, info in fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            value = (node.get("params") or {}).get(name)
            if extra.get("x-credential") and value:
                found.append((join_path(path, "params", name), value, node))
    return found
