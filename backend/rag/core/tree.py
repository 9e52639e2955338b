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
